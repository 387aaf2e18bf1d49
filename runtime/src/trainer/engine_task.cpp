// SPDX-License-Identifier: BSD-3-Clause
#include "trainer/engine_task.h"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/engine.h>
#include <torch/csrc/autograd/functions/basic_ops.h>

namespace ca::detail {
namespace {

// The task's root. Its edges (the backward's roots, given only where exec_info needs them) let
// the engine mark what a pruned backward computes; it drops them when it runs, so the engine
// schedules nothing after it.
class ReplayNode final : public torch::autograd::Node {
 public:
  ReplayNode(torch::autograd::edge_list&& edges, const at::Tensor& input,
             const std::function<void()>& replay)
      : Node(std::move(edges)), replay_(replay) {
    add_input_metadata(input);
  }
  std::string name() const override { return "ca::Replay"; }
  torch::autograd::variable_list apply(torch::autograd::variable_list&& /*inputs*/) override {
    next_edges().clear();
    replay_();
    return {};
  }

 private:
  const std::function<void()>& replay_;
};

}  // namespace

void run_in_engine_task(const std::function<void()>& replay, const compat::NodePtr& root,
                        const torch::autograd::edge_list& outputs, bool accumulate_grad,
                        bool keep_graph) {
  const at::Tensor input = at::zeros({});  // the engine hands its root one gradient
  torch::autograd::edge_list edges;
  if (!outputs.empty()) edges = root->next_edges();
  // A grad() input no node uses has no edge: eager's run_backward gives it an Identity, as here
  // (the engine reads every output edge's node).
  torch::autograd::edge_list output_edges = outputs;
  for (torch::autograd::Edge& edge : output_edges) {
    if (!edge.is_valid())
      edge = torch::autograd::Edge(compat::make_node<torch::autograd::Identity>(), 0);
  }
  const compat::NodePtr node = compat::make_node<ReplayNode>(std::move(edges), input, replay);
  // Inside a step the default engine is the eager one, whoever installed it (engine_hook.cpp).
  torch::autograd::Engine::get_default_engine().execute({torch::autograd::Edge(node, 0)}, {input},
                                                        keep_graph, /*create_graph=*/false,
                                                        accumulate_grad, output_edges);
}

}  // namespace ca::detail
