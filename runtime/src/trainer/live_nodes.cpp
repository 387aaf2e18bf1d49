// SPDX-License-Identifier: BSD-3-Clause
#include "trainer/live_nodes.h"

#include <torch/csrc/autograd/engine.h>
#include <torch/csrc/autograd/functions/accumulate_grad.h>

#include <algorithm>

#include "ca/error.h"

namespace ca::detail {
namespace {

void validate(const AgNode& fn, torch::autograd::variable_list& outputs) {
  torch::autograd::validate_outputs(fn.next_edges(), outputs, [&fn](const std::string& msg) {
    return "Function " + fn.name() + " returned an " + msg;
  });
}

}  // namespace

std::vector<at::Tensor> LiveNodes::call(size_t index, std::vector<at::Tensor>&& grads) {
  AgNode& fn = *order_.at(positions_.at(index));
  // The executor is handed a copy of the message, not the exception: it adds its context to
  // what it catches, and user code's own exception goes back to the user as it was thrown.
  try {
    return run(fn, std::move(grads));
  } catch (const c10::Error& e) {
    error_ = std::current_exception();
    throw ExecutionError(e.what_without_backtrace());
  } catch (const std::exception& e) {
    error_ = std::current_exception();
    throw ExecutionError(e.what());
  } catch (...) {
    error_ = std::current_exception();
    throw ExecutionError("an exception that is not a std::exception");
  }
}

std::vector<at::Tensor> LiveNodes::run(AgNode& fn, std::vector<at::Tensor>&& grads) const {
  torch::autograd::variable_list inputs = std::move(grads);
  for (const auto& hook : fn.tensor_pre_hooks()) inputs = (*hook)(inputs);
  for (const auto& [slot, hook] : fn.retains_grad_hooks()) inputs = (*hook)(inputs);
  for (const auto& hook : fn.pre_hooks()) inputs = (*hook)(inputs);
  if (!keep_graph_) fn.will_release_variables();
  if (fn.post_hooks().empty()) {
    torch::autograd::variable_list outputs = fn(std::move(inputs));
    validate(fn, outputs);
    // A post-hook a node adds while it runs sees no inputs (they were moved into the node).
    for (const auto& hook : fn.post_hooks()) outputs = (*hook)(outputs, {});
    if (!keep_graph_) fn.release_variables();
    return outputs;
  }
  // Post-hooks see the node's inputs: it gets a copy of the list.
  torch::autograd::variable_list outputs = fn(torch::autograd::variable_list(inputs));
  validate(fn, outputs);
  for (const auto& hook : fn.post_hooks()) outputs = (*hook)(outputs, inputs);
  if (!keep_graph_) fn.release_variables();
  return outputs;
}

std::vector<const at::Tensor*> LiveNodes::leaves() const {
  std::vector<const at::Tensor*> out;
  for (uint32_t position : positions_) {
    const auto* acc = dynamic_cast<const torch::autograd::AccumulateGrad*>(order_[position].get());
    out.push_back(acc == nullptr ? nullptr : &acc->variable);
  }
  return out;
}

std::string describe_opaque(const GraphWalk& walk) {
  std::vector<std::string> seen;
  std::string out;
  for (size_t k = 0; k < walk.opaque.size(); ++k) {
    std::string one = walk.order[walk.opaque[k]]->name() + " (" + walk.opaque_reasons[k] + ")";
    if (std::find(seen.begin(), seen.end(), one) != seen.end()) continue;
    out += (out.empty() ? "" : ", ") + one;
    seen.push_back(std::move(one));
  }
  return out;
}

}  // namespace ca::detail
