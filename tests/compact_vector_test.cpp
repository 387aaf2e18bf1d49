// SPDX-License-Identifier: BSD-3-Clause
// ca::CompactVector against std::vector as the reference: same contents after the same edits,
// inline storage for small id lists, ownership through copies and moves.
#include "plan/compact_vector.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace ca {
namespace {

using Ids = CompactVector<int32_t, 2>;

TEST(CompactVector, IsSmallerThanStdVector) {
  EXPECT_EQ(sizeof(Ids), 16u);
  EXPECT_EQ(sizeof(CompactVector<std::string>), 16u);
}

TEST(CompactVector, MatchesStdVectorThroughEdits) {
  Ids v;
  std::vector<int32_t> ref;
  for (int32_t i = 0; i < 100; ++i) {
    v.push_back(i * 3);
    ref.push_back(i * 3);
    ASSERT_EQ(v, ref) << "after push_back " << i;
  }
  v.pop_back();
  ref.pop_back();
  v.resize(120, 7);
  ref.resize(120, 7);
  EXPECT_EQ(v, ref);
  v.resize(5);
  ref.resize(5);
  EXPECT_EQ(v, ref);
  EXPECT_EQ(std::vector<int32_t>(v), ref);
  EXPECT_EQ(v.at(4), 12);
  EXPECT_THROW(v.at(5), std::out_of_range);
}

TEST(CompactVector, KeepsTwoIdsInline) {
  Ids v{4, 5};
  EXPECT_EQ(v.capacity(), 2u);
  const int32_t* inline_data = v.data();
  EXPECT_GE(reinterpret_cast<const char*>(inline_data), reinterpret_cast<const char*>(&v));
  EXPECT_LT(reinterpret_cast<const char*>(inline_data), reinterpret_cast<const char*>(&v + 1));
  v.push_back(6);  // spills to the heap
  EXPECT_EQ(v, (std::vector<int32_t>{4, 5, 6}));
  EXPECT_GE(v.capacity(), 3u);
}

TEST(CompactVector, CopiesAndMovesOwnElements) {
  CompactVector<std::string> a{"x", std::string(40, 'y')};
  CompactVector<std::string> b = a;
  b[0] = "changed";
  EXPECT_EQ(a[0], "x");
  CompactVector<std::string> c = std::move(a);
  EXPECT_TRUE(a.empty());  // NOLINT: moved-from is empty by contract
  EXPECT_EQ(c[1], std::string(40, 'y'));
  Ids small{1};
  Ids moved = std::move(small);
  EXPECT_EQ(moved, (std::vector<int32_t>{1}));
  EXPECT_TRUE(small.empty());  // NOLINT
  c.push_back(c[0]);           // an element of the vector itself, across a reallocation
  EXPECT_EQ(c.back(), "x");
}

TEST(CompactVector, NestsLikeArgTypes) {
  struct Tree {
    int kind = 0;
    CompactVector<Tree> children;
  };
  Tree root;
  root.children.push_back(Tree{1, {}});
  root.children[0].children.push_back(Tree{2, {}});
  Tree copy = root;
  EXPECT_EQ(copy.children[0].children[0].kind, 2);
}

}  // namespace
}  // namespace ca
