// SPDX-License-Identifier: BSD-3-Clause
// Equal constant containers of one graph bind to one IValue; anything else gets its own.
#include "load/shared_constants.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace ca::detail {
namespace {

using K = ArgType::Kind;

Arg bools(std::vector<bool> values, ArgType type = ArgType{K::kBool, {}}) {
  std::vector<Arg> items;
  for (bool b : values) items.push_back(Arg::boolean(b));
  return Arg::list(std::move(type), std::move(items));
}

TEST(SharedConstants, EqualConstantContainersShareOneIValueAndOthersDoNot) {
  ArgPool pool;
  const ArgType optional_bool{K::kOptional, {ArgType{K::kBool, {}}}};
  const ArgRange range = pool.append({
      bools({true}),                                         // 0
      bools({true}),                                         // 1: equal to 0
      bools({false}),                                        // 2: another value
      bools({true}, optional_bool),                          // 3: another element type
      Arg::tuple({Arg::integer(1), Arg::real(-0.0)}),        // 4
      Arg::tuple({Arg::integer(1), Arg::real(0.0)}),         // 5: -0.0 is not 0.0
      Arg::list(ArgType{K::kTensor, {}}, {Arg::tensor(3)}),  // 6: holds a reference
      Arg::list(ArgType{K::kTensor, {}}, {Arg::tensor(3)}),  // 7: equal to 6
  });
  const ArgRefs args = pool.refs(range);
  SharedConstants shared;
  std::vector<c10::IValue> got;
  for (ArgRef a : args) got.push_back(shared.get(a));
  EXPECT_TRUE(got[0].is(got[1]));
  EXPECT_FALSE(got[0].is(got[2]));
  EXPECT_EQ(got[2].toBoolList().get(0), false);
  EXPECT_FALSE(got[0].is(got[3]));
  EXPECT_FALSE(got[4].is(got[5]));
  EXPECT_TRUE(std::signbit(got[4].toTupleRef().elements()[1].toDouble()));
  EXPECT_FALSE(std::signbit(got[5].toTupleRef().elements()[1].toDouble()));
  EXPECT_FALSE(got[6].is(got[7]));  // filled per run: never shared
  EXPECT_TRUE(shared.get(args[4]).is(got[4]));
}

}  // namespace
}  // namespace ca::detail
