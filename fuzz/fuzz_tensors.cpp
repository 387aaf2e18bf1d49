// SPDX-License-Identifier: BSD-3-Clause
// Fuzz target (c): .pt bytes -> tensors_from_bytes, then every element of every tensor is read
// (a contiguous clone), so that a tensor whose geometry escapes its storage is caught by
// AddressSanitizer.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include "ca/tensor_io.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool kOneThread = (at::set_num_threads(1), true);  // reproducible, and cheap
  (void)kOneThread;
  std::vector<at::Tensor> tensors;
  try {
    tensors = ca::tensors_from_bytes(data, size);
  } catch (const ca::Error&) {
    return 0;
  }
  for (const at::Tensor& t : tensors) {
    if (!t.defined() || t.numel() > ca::fuzz::kMaxInputElements) continue;
    try {
      (void)t.clone(at::MemoryFormat::Contiguous);
    } catch (const c10::Error&) {  // a dtype clone does not support: not a memory error
    }
  }
  return 0;
}
