// SPDX-License-Identifier: BSD-3-Clause
// Fuzz target (a): graph bytes -> load -> Executor construction (decode, validate, bind, plan,
// load-time meta inference). Every input must load or be refused with a ca::Error; anything
// else (another exception, a crash, a sanitizer report) is a finding.
#include "ca/executor.h"
#include "ca/graph_io.h"
#include "fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::vector<uint8_t> bytes = ca::fuzz::sealed(data, size);
  try {
    ca::Executor executor(ca::graph_from_bytes(bytes.data(), bytes.size()));
  } catch (const ca::Error&) {
  }
  return 0;
}
