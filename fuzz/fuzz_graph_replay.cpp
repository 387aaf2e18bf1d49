// SPDX-License-Identifier: BSD-3-Clause
// Fuzz target (b): graph bytes -> load -> a full replay on a small fixed batch. The batch is made
// from the graph's own declared inputs (fixed values, so a run is reproducible), because a
// mutated graph declares other inputs than any file batch would hold. Every input must replay
// or fail with a ca::Error.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include "ca/executor.h"
#include "ca/graph_io.h"
#include "fuzz_common.h"

namespace {

// Deterministic inputs matching the graph's declarations, or false when they would be too big.
bool make_batch_unchecked(const ca::Graph& g, std::vector<at::Tensor>* batch) {
  int64_t total = 0;
  for (const ca::GraphInput& in : g.inputs) {
    if (in.kind == ca::GraphInput::Kind::kInt) {
      batch->push_back(at::scalar_tensor(in.int_value, at::kLong));
      continue;
    }
    if (in.kind == ca::GraphInput::Kind::kDouble) {
      batch->push_back(at::scalar_tensor(in.double_value, at::kDouble));
      continue;
    }
    int64_t numel = 1;
    for (int64_t s : in.meta.sizes) {
      if (s < 0 || __builtin_mul_overflow(numel, s, &numel)) return false;
    }
    total += numel;
    if (total > ca::fuzz::kMaxInputElements || !in.meta.device.is_cpu()) return false;
    at::Tensor t = at::arange(numel, at::kDouble).remainder(7).sub(3).div(4);
    t = t.to(in.meta.dtype).reshape(in.meta.sizes);
    if (in.meta.requires_grad && t.is_floating_point()) t.requires_grad_(true);
    batch->push_back(t);
  }
  return true;
}

// make_batch_unchecked, or false for a dtype torch cannot fill (not a finding).
bool make_batch(const ca::Graph& g, std::vector<at::Tensor>* batch) {
  try {
    return make_batch_unchecked(g, batch);
  } catch (const c10::Error&) {
    return false;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool kOneThread = (at::set_num_threads(1), true);  // reproducible, and cheap
  (void)kOneThread;
  const std::vector<uint8_t> bytes = ca::fuzz::sealed(data, size);
  try {
    // A view of 2^36 elements is legal by default but takes minutes to reduce: bound a run's
    // work to what a fuzz iteration can afford (the limit itself is what is under test).
    ca::ExecutorOptions options;
    options.max_tensor_elements = ca::fuzz::kMaxStepElements;
    ca::Executor executor(ca::graph_from_bytes(bytes.data(), bytes.size()), options);
    std::vector<at::Tensor> batch;
    if (!make_batch(executor.graph(), &batch)) return 0;
    for (const at::Tensor& out : executor.run(batch)) {
      if (out.defined()) (void)out.clone(at::MemoryFormat::Contiguous);  // read every element
    }
  } catch (const ca::Error&) {
  }
  return 0;
}
