// SPDX-License-Identifier: BSD-3-Clause
#include "parity/parity_harness.h"

#include <gtest/gtest.h>

#include <limits>

namespace ca::testing {

double relative_error(const at::Tensor& got, const at::Tensor& want) {
  if (got.defined() != want.defined()) return std::numeric_limits<double>::infinity();
  if (!got.defined()) return 0.0;
  if (got.scalar_type() != want.scalar_type() || got.sizes() != want.sizes()) {
    return std::numeric_limits<double>::infinity();
  }
  if (got.numel() == 0) return 0.0;
  const auto g = got.to(torch::kFloat64), w = want.to(torch::kFloat64);
  const double scale = std::max(w.abs().max().item<double>(), 1e-12);
  return (g - w).abs().max().item<double>() / scale;
}

namespace {

std::vector<at::Tensor> fresh_copies(const std::vector<at::Tensor>& inputs) {
  std::vector<at::Tensor> out;
  out.reserve(inputs.size());
  for (const at::Tensor& t : inputs) out.push_back(t.detach().clone());
  return out;
}

bool bitwise_equal(const at::Tensor& a, const at::Tensor& b) {
  if (a.defined() != b.defined()) return false;
  return !a.defined() ||
         (a.sizes() == b.sizes() && a.scalar_type() == b.scalar_type() && torch::equal(a, b));
}

// Eager gradients of the leaves a graph writes, for a forward's roots.
std::vector<at::Tensor> eager_grads(const Forward& fwd, const CaptureResult& cap,
                                    const std::vector<size_t>& targets) {
  std::vector<at::Tensor> leaves;
  leaves.reserve(targets.size());
  for (size_t k : targets) leaves.push_back(cap.inputs[k]);
  std::vector<at::Tensor> grads = fwd.grads;
  if (grads.empty()) {
    for (const at::Tensor& r : fwd.roots) grads.push_back(torch::ones_like(r));
  }
  return torch::autograd::grad(fwd.roots, leaves, grads, /*retain_graph=*/true,
                               /*create_graph=*/false, /*allow_unused=*/true);
}

void expect_close(const ParityCase& c, const Graph& g, const std::vector<size_t>& targets,
                  const std::vector<at::Tensor>& got, const std::vector<at::Tensor>& want,
                  const char* what) {
  ASSERT_EQ(got.size(), want.size()) << c.name << " " << what;
  for (size_t i = 0; i < want.size(); ++i) {
    const double err = relative_error(got[i], want[i]);
    EXPECT_LE(err, c.max_rel_error) << c.name << " " << what << ": grad of "
                                    << g.inputs[targets[i]].name << " rel error " << err;
  }
}

}  // namespace

void check_parity(const ParityCase& c, const Transport& transport) {
  torch::manual_seed(0);
  Forward fwd = c.forward();
  CaptureResult cap = capture(fwd.roots, fwd.grads);
  Replayable moved = transport({cap.graph, fresh_copies(cap.inputs)});
  EXPECT_EQ(moved.graph, cap.graph) << c.name << ": graph changed in transport";
  Executor executor(std::move(moved.graph));
  const auto& targets = executor.grad_targets();
  ASSERT_FALSE(targets.empty()) << c.name << ": graph writes no gradients";

  const auto got = executor.run(moved.inputs);
  expect_close(c, cap.graph, targets, got, eager_grads(fwd, cap, targets), "first replay");
  const auto again = executor.run(fresh_copies(moved.inputs));
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_TRUE(bitwise_equal(got[i], again[i])) << c.name << ": replay not deterministic";
  }

  torch::manual_seed(1);  // same shapes, new values: the same graph must serve
  Forward fwd2 = c.forward();
  CaptureResult cap2 = capture(fwd2.roots, fwd2.grads);
  ASSERT_EQ(cap2.graph, cap.graph) << c.name << ": second forward captured another graph";
  const auto got2 = executor.run(fresh_copies(cap2.inputs));
  expect_close(c, cap.graph, targets, got2, eager_grads(fwd2, cap2, targets), "new inputs");
}

}  // namespace ca::testing
