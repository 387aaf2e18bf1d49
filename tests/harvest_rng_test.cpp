// SPDX-License-Identifier: BSD-3-Clause
// Harvest (the registry's first use) leaves the default CPU generator as it found it: a program
// that seeds once at start draws eager's numbers after its first backward. Each case runs in a
// fresh process (a threadsafe death test re-executes the binary for this test alone), since the
// registry is harvested once per process.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdlib>

#include "ca/op_registry.h"

namespace ca {
namespace {

// Exits 0 when `between` leaves the random stream as it was, 1 otherwise.
template <class F>
[[noreturn]] void exit_with_stream_check(F between) {
  torch::manual_seed(7);
  const at::Tensor head = torch::randn({1});  // leaves a cached normal sample in the generator
  const at::Tensor want = torch::randn({3});
  torch::manual_seed(7);
  torch::randn({1});
  between();
  const at::Tensor got = torch::randn({3});
  std::exit(torch::equal(got, want) ? 0 : 1);
}

TEST(HarvestRng, TheFirstUseOfTheRegistryDrawsNoRandomNumbers) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(exit_with_stream_check([] { OpRegistry::global(); }), ::testing::ExitedWithCode(0),
              "");
}

}  // namespace
}  // namespace ca
