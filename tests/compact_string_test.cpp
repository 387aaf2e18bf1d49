// SPDX-License-Identifier: BSD-3-Clause
// ca::CompactString against std::string as the reference, at and around the 15-byte inline limit.
#include "ca/compact_string.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace ca {
namespace {

TEST(CompactString, RoundTripsEveryLengthAroundTheInlineLimit) {
  EXPECT_EQ(sizeof(CompactString), 16u);
  for (size_t n = 0; n < 40; ++n) {
    const std::string ref(n, static_cast<char>('a' + n % 26));
    CompactString s(ref);
    EXPECT_EQ(s.size(), n);
    EXPECT_EQ(s, ref);
    EXPECT_EQ(std::string(s.c_str()), ref) << "NUL-terminated at " << n;
    CompactString copy = s;
    CompactString moved = std::move(s);
    EXPECT_EQ(copy, ref);
    EXPECT_EQ(moved, ref);
    EXPECT_TRUE(s.empty());  // NOLINT: moved-from is empty by contract
  }
}

TEST(CompactString, ReadsLikeAString) {
  CompactString op = "aten::mul";
  const CompactString overload = "Tensor";
  EXPECT_EQ(op + "." + overload, "aten::mul.Tensor");
  EXPECT_EQ(" " + op, " aten::mul");
  const std::string joined = overload.empty() ? op : op + "." + overload;
  EXPECT_EQ(joined, "aten::mul.Tensor");
  std::map<std::string, int> counts;
  ++counts[op];
  EXPECT_EQ(counts.at("aten::mul"), 1);
  op = std::string("torch::autograd::CopyBackwards");
  EXPECT_EQ(op.view(), "torch::autograd::CopyBackwards");
  op = op.view().substr(7);  // assigning a view of itself
  EXPECT_EQ(op, "autograd::CopyBackwards");
  op.clear();
  EXPECT_TRUE(op.empty());
  EXPECT_NE(op, overload);
}

}  // namespace
}  // namespace ca
