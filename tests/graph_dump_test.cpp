// SPDX-License-Identifier: BSD-3-Clause
// ca::dump_graph and ca::format_arg: the text forms used by `replay --dump` and error logs.
#include "ca/graph_dump.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "ca/graph.h"
#include "ca/version.h"
#include "sample_graphs.h"
#include "test_util.h"

namespace ca {
namespace {

TEST(GraphDump, FormatArgShortForms) {
  using test::with_kind;
  EXPECT_EQ(format_arg(Arg::none()), "None");
  EXPECT_EQ(format_arg(Arg::boolean(true)), "True");
  EXPECT_EQ(format_arg(Arg::integer(-42)), "-42");
  EXPECT_EQ(format_arg(Arg::real(0.1)), "0.1");
  EXPECT_EQ(format_arg(Arg::real(2.0)), "2.0");
  EXPECT_EQ(format_arg(Arg::real(-0.0)), "-0.0");
  EXPECT_EQ(format_arg(Arg::real(1e300)), "1e+300");
  EXPECT_EQ(format_arg(Arg::real(std::numeric_limits<double>::quiet_NaN())), "nan");
  EXPECT_EQ(format_arg(test::complex_arg(1.5, -2.25)), "(1.5-2.25j)");
  EXPECT_EQ(format_arg(Arg::string("x")), "\"x\"");
  EXPECT_EQ(format_arg(Arg::string(std::string("a\0b\"\\", 5))), "\"a\\x00b\\\"\\\\\"");
  EXPECT_EQ(format_arg(with_kind(Arg::Kind::kScalarType, 6)), "Float");
  EXPECT_EQ(format_arg(with_kind(Arg::Kind::kScalarType, 99)), "scalar_type(99)");
  EXPECT_EQ(format_arg(with_kind(Arg::Kind::kLayout, 0)), "Strided");
  EXPECT_EQ(format_arg(with_kind(Arg::Kind::kMemoryFormat,
                                 static_cast<int64_t>(c10::MemoryFormat::ChannelsLast))),
            "ChannelsLast");
  EXPECT_EQ(format_arg(test::device_arg(c10::DeviceType::CUDA, 1)), "cuda:1");
  EXPECT_EQ(format_arg(test::device_arg(c10::DeviceType::CPU, -1)), "cpu");
  EXPECT_EQ(format_arg(Arg::tensor(2)), "%2");
  EXPECT_EQ(format_arg(Arg::tensor(kNoValue)), "undef");
  EXPECT_EQ(format_arg(test::sym_int(3)), "sym%3");
  EXPECT_EQ(format_arg(test::bools({true, true})), "bools[1,1]");
  EXPECT_EQ(format_arg(test::ints({})), "ints[]");
  EXPECT_EQ(format_arg(test::ints({2, 3})), "ints[2, 3]");
  EXPECT_EQ(format_arg(Arg::tuple({Arg::integer(1)})), "(1,)");
  EXPECT_EQ(format_arg(Arg::tuple({Arg::integer(1), Arg::tensor(4)})), "(1, %4)");
  EXPECT_EQ(
      format_arg(test::dict_arg(test::leaf(ArgType::Kind::kString), test::leaf(ArgType::Kind::kInt),
                                {Arg::string("a"), Arg::integer(1)})),
      "{\"a\": 1}");
  EXPECT_EQ(format_arg(Arg::list(
                test::nested(ArgType::Kind::kOptional, {test::leaf(ArgType::Kind::kTensor)}),
                {Arg::none()})),
            "List[Optional[Tensor]][None]");
}

TEST(GraphDump, LongListsAreCut) {
  std::vector<int64_t> many(40, 7);
  const std::string s = format_arg(test::ints(many));
  EXPECT_TRUE(test::contains(s, ", ...(+24)]")) << s;
}

TEST(GraphDump, SampleGraph) {
  const std::string dump = dump_graph(test::sample_graph());
  const std::string header = "graph: format " + std::to_string(kFormatVersion) + ", torch " +
                             runtime_torch_version() +
                             ", 5 inputs, 7 nodes, 15 values, 3 outputs\n";
  EXPECT_EQ(dump.rfind(header, 0), 0u) << dump;
  for (const char* line : {
           "\n  %0 grad_output.0: Float[2, 3] cpu\n",
           "\n  %1 param.w: Float[2, 3] cpu requires_grad\n",
           "\n  %2 saved.0: Double[3] cuda:0\n",
           "\n  %3 size.0: int = 7\n",
           "\n  %4 scale: float = 0.5\n",
           "\n  0 functional MulBackward0 (%0) -> (%5, %6) [None, True, ",
           "\n  1 validate_outputs (%5, %6) -> (%7, %8) [List[Optional[Any]][None, None]]\n",
           "\n  2 accumulate (%7, undef) -> (%9)\n",
           // One expected line, split to fit: NOLINTNEXTLINE(bugprone-suspicious-missing-comma)
           "\nop schemas:\n  MulBackward0(List[bool], Tensor, ScalarType, Tensor, ScalarType), 2 "
           "flags\n",
           "\n  4 aten aten::mul.Tensor (%11, %12) -> (%13) [%11, %12]\n",
           "\n  5 copy_slices_epilogue (%10, %11, %13, undef) -> (%14, undef) [bools[1,0]]\n",
           "\n  6 accumulate_grad AccumulateGrad (%1, %14) -> () [False]\n",
           "\noutputs (%8, %14, undef)\n",
       }) {
    EXPECT_TRUE(test::contains(dump, line));
  }
}

TEST(GraphDump, InvalidGraphDoesNotCrash) {
  Graph g = test::sample_graph();
  g.nodes[0].kind = static_cast<NodeKind>(77);
  test::edit_args(g, 0, [](std::vector<Arg>& a) { a[0].kind = static_cast<Arg::Kind>(200); });
  g.inputs[0].meta.dtype = static_cast<c10::ScalarType>(100);
  const std::string dump = dump_graph(g);
  EXPECT_TRUE(test::contains(dump, "  0 unknown MulBackward0"));
  EXPECT_TRUE(test::contains(dump, "[arg(200), "));
}

}  // namespace
}  // namespace ca
