// SPDX-License-Identifier: BSD-3-Clause
// Graphs exported with dynamic shapes (ca_export with dynamic=True): sizes are int graph inputs,
// tensor dims recorded as kDynamicSize accept any size, and validate_outputs / copy_slices
// metadata that holds symbolic sizes is rebuilt from the current sizes on each run.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "ca/error.h"
#include "ca/executor.h"
#include "sample_graphs.h"
#include "test_util.h"

namespace ca {
namespace {

using K = ArgType::Kind;
using test::leaf;
using test::sym_int;

Arg sizes(std::vector<Arg> items) { return Arg::list(leaf(K::kSymInt), std::move(items)); }

// One InputMetadata as upstream packs it: (options, sizes, is_tensor_subclass, grad_dtype).
Arg metadata(Arg shape) {
  Arg device = Arg::integer(0, Arg::Kind::kDevice);
  Arg options = Arg::tuple({Arg::none(), Arg::none(), device,
                            Arg::integer(static_cast<int64_t>(c10::kFloat), Arg::Kind::kScalarType),
                            Arg::integer(0, Arg::Kind::kLayout), Arg::none()});
  Arg one = Arg::tuple({options, std::move(shape), Arg::boolean(false), Arg::none()});
  // upstream's IValuePacker<InputMetadata>::packed_type(), optional, as the list's element type
  auto opt = [](K kind) { return test::nested(K::kOptional, {leaf(kind)}); };
  const ArgType packed_options =
      test::nested(K::kTuple, {opt(K::kBool), opt(K::kMemoryFormat), opt(K::kDevice),
                               opt(K::kScalarType), opt(K::kLayout), opt(K::kBool)});
  const ArgType packed =
      test::nested(K::kTuple, {packed_options, test::nested(K::kList, {leaf(K::kSymInt)}),
                               leaf(K::kBool), opt(K::kScalarType)});
  return Arg::list(test::nested(K::kOptional, {packed}), {one});
}

Arg geometry(Arg shape, const std::vector<int64_t>& strides, int64_t offset) {
  std::vector<Arg> s;
  s.reserve(strides.size());
  for (int64_t v : strides) s.push_back(Arg::integer(v));
  return Arg::tuple({std::move(shape), Arg::list(leaf(K::kInt), s), Arg::integer(offset)});
}

// grad (0-dim) -> SumBackward0 to [n, 3] -> validate_outputs to [n, 3] -> copy_slices_prologue
// with base [n, 3] and view [1, 3]; `x` ([dynamic, 3]) is bound but unused.
Graph dynamic_graph() {
  Graph g;
  g.torch_version = "";
  GraphInput grad{GraphInput::Kind::kTensor, "grad", {c10::kFloat, {}, c10::kCPU, false}, 0, 0};
  GraphInput x{
      GraphInput::Kind::kTensor, "x", {c10::kFloat, {kDynamicSize, 3}, c10::kCPU, false}, 0, 0};
  GraphInput n{GraphInput::Kind::kInt, "size.0", {}, 4, 0};
  g.inputs = {grad, x, n};
  const Arg n_by_3 = sizes({sym_int(2), Arg::integer(3)});
  Node sum;
  sum.kind = NodeKind::kFunctional;
  sum.op = g.intern("SumBackward0");
  sum.inputs = g.add_ids({0});
  sum.args = g.arg_pool.append({test::bools({true}), n_by_3});
  sum.outputs = g.add_ids({3});
  Node validate;
  validate.kind = NodeKind::kValidateOutputs;
  validate.op = g.intern("validate_outputs");
  validate.inputs = g.add_ids({3});
  validate.args = g.arg_pool.append({metadata(n_by_3)});
  validate.outputs = g.add_ids({4});
  Node prologue;
  prologue.kind = NodeKind::kCopySlicesPrologue;
  prologue.inputs = g.add_ids({4});
  prologue.args =
      g.arg_pool.append({geometry(n_by_3, {3, 1}, 0),
                         geometry(sizes({Arg::integer(1), Arg::integer(3)}), {3, 1}, 3)});
  prologue.outputs = g.add_ids({5, 6, 7});
  g.nodes = {sum, validate, prologue};
  g.op_schemas = {OpSchema{
      "SumBackward0",
      {test::nested(K::kList, {leaf(K::kBool)}), test::nested(K::kList, {leaf(K::kSymInt)})},
      1,
      false}};
  g.num_values = 8;
  g.outputs = {4, 5, 7};
  return g;
}

std::vector<at::Tensor> inputs_for(int64_t n, int64_t x_rows) {
  return {torch::tensor(2.0f), torch::zeros({x_rows, 3}), torch::tensor(n)};
}

TEST(ExecutorDynamic, OneGraphReplaysForEverySize) {
  Executor ex(dynamic_graph());
  for (int64_t n : {4, 2, 7}) {
    const auto out = ex.run(inputs_for(n, n + 1));
    ASSERT_EQ(out.size(), 3u);
    EXPECT_TRUE(torch::equal(out[0], torch::full({n, 3}, 2.0f))) << n;
    EXPECT_EQ(out[1].sizes(), (std::vector<int64_t>{n, 3}));
    EXPECT_TRUE(torch::equal(out[2], torch::full({1, 3}, 2.0f)));  // the view at offset 3
  }
}

TEST(ExecutorDynamic, DynamicDimsAcceptAnySizeButKeepRankAndFixedDims) {
  Executor ex(dynamic_graph());
  auto inputs = inputs_for(4, 9);
  EXPECT_NO_THROW(ex.run(inputs));
  inputs[1] = torch::zeros({9, 4});
  EXPECT_THROW(ex.run(inputs), InputError);
  inputs[1] = torch::zeros({9});
  EXPECT_THROW(ex.run(inputs), InputError);
}

// Sizes bound per run are checked as load checks constant ones: with n = 1 the view at offset 3
// would lie past the end of its [1, 3] base.
TEST(ExecutorDynamic, SymbolicGeometryOutsideItsBaseIsRefusedPerRun) {
  Executor ex(dynamic_graph());
  try {
    ex.run(inputs_for(1, 1));
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("not inside its base"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(ex.run(inputs_for(2, 2)));
}

// A per-call guard reads a symbolic size list as this run binds it, not as the file holds it:
// UnfoldBackward0's check rebuilds the unfold's output shape from self_sym_sizes = [n] and
// refuses a grad of another shape before torch's kernel walks it.
Graph dynamic_unfold() {
  Graph g;
  g.torch_version = "";
  g.inputs = {GraphInput{GraphInput::Kind::kTensor,
                         "grad",
                         {c10::kFloat, {kDynamicSize, 2}, c10::kCPU, false},
                         0,
                         0},
              GraphInput{GraphInput::Kind::kInt, "size.0", {}, 6, 0}};
  Node unfold;
  unfold.kind = NodeKind::kFunctional;
  unfold.op = g.intern("UnfoldBackward0");
  unfold.inputs = g.add_ids({0});
  // needs_input_grad, dimension, self_sym_sizes, size, step: x.unfold(0, 2, 1) of x = [n]
  unfold.args = g.arg_pool.append({test::bools({true}), Arg::integer(0), sizes({sym_int(1)}),
                                   Arg::integer(2), Arg::integer(1)});
  unfold.outputs = g.add_ids({2});
  g.nodes = {unfold};
  g.op_schemas = {
      OpSchema{"UnfoldBackward0",
               {test::nested(K::kList, {leaf(K::kBool)}), leaf(K::kInt),
                test::nested(K::kList, {leaf(K::kSymInt)}), leaf(K::kInt), leaf(K::kInt)},
               1,
               false}};
  g.num_values = 3;
  g.outputs = {2};
  return g;
}

TEST(ExecutorDynamic, PerCallGuardsReadSymbolicSizesAsEachRunBindsThem) {
  Executor ex(dynamic_unfold());
  for (int64_t n : {6, 4}) {
    const at::Tensor x = torch::zeros({n}, torch::requires_grad());
    const at::Tensor grad = torch::randn({n - 1, 2});
    x.unfold(0, 2, 1).backward(grad);
    const auto out = ex.run({grad, torch::tensor(n)});
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(torch::equal(out[0], x.grad())) << n;
  }
  // n = 3 makes a [2, 2] unfold: a [5, 2] grad would be walked past its end.
  try {
    ex.run({torch::randn({5, 2}), torch::tensor(int64_t{3})});
    FAIL() << "expected ExecutionError";
  } catch (const ExecutionError& e) {
    EXPECT_NE(std::string(e.what()).find("the unfold's output has shape [2, 2]"), std::string::npos)
        << e.what();
  }
}

TEST(ExecutorDynamic, SymbolicMetadataIsNeverElided) {
  Executor ex(dynamic_graph());
  EXPECT_EQ(ex.stats().validates_elided, 0u);
}

TEST(ExecutorDynamic, ATensorReferenceInValidateMetadataIsRefusedAtLoad) {
  Graph g = dynamic_graph();
  test::edit_args(
      g, 1, [](std::vector<Arg>& args) { args[0].items[0].items[1].items[0] = Arg::tensor(0); });
  const std::string msg = test::error_of<FormatError>([&] { Executor{g}; });
  EXPECT_NE(msg.find("expected a constant, found a tensor reference"), std::string::npos) << msg;
}

}  // namespace
}  // namespace ca
