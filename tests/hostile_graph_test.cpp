// SPDX-License-Identifier: BSD-3-Clause
// Hostile graphs built on purpose with the IR and written with graph_to_bytes, one class of issue
// 9 at a time: each must be refused at load (FormatError naming node, arg and expectation) or fail
// with a clean ExecutionError at run time, never crash, read outside a tensor or replay wrong.
// Reference results come from eager autograd (or plain ATen calls for aten nodes).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

#include "ca/capture.h"
#include "ca/error.h"
#include "ca/executor.h"
#include "ca/graph_io.h"
#include "ca/version.h"
#include "captured_backward.h"
#include "guards/guard_table.h"
#include "guards/op_rules.h"
#include "hostile_load.h"
#include "registry/op_entry.h"
#include "sample_graphs.h"
#include "test_util.h"

namespace ca {
namespace {

using test::contains;

using test::load;
using test::load_error;

// ---- aten nodes -------------------------------------------------------------------------------

GraphInput float_input(const char* name, std::vector<int64_t> sizes) {
  GraphInput in;
  in.name = name;
  in.meta.sizes = std::move(sizes);
  return in;
}

/// inputs a, b: Float[2, 3]; one aten node `op.overload(args)` -> %2, returned.
Graph aten_graph(const char* op, const char* overload, const std::vector<Arg>& args,
                 size_t outputs = 1) {
  Graph g;
  g.torch_version = runtime_torch_version();
  g.inputs = {float_input("a", {2, 3}), float_input("b", {2, 3})};
  std::vector<ValueId> defined;
  for (size_t k = 0; k < outputs; ++k) defined.push_back(static_cast<ValueId>(2 + k));
  Node n = g.make_node(NodeKind::kAten, op, {0, 1}, args, defined);
  n.overload = g.intern(overload);
  g.nodes = {n};
  g.num_values = static_cast<int32_t>(2 + outputs);
  g.outputs = {2};
  return g;
}

Arg ints(const std::vector<int64_t>& v) {
  std::vector<Arg> items;
  items.reserve(v.size());
  for (int64_t i : v) items.push_back(Arg::integer(i));
  return Arg::list(ArgType{ArgType::Kind::kInt, {}}, std::move(items));
}

const std::vector<at::Tensor> kAB = {torch::arange(6.f).reshape({2, 3}),
                                     torch::arange(6.f).reshape({2, 3}) + 1};

TEST(HostileAten, ArgsAreCheckedAgainstTheOperatorsSchemaAtLoad) {
  EXPECT_TRUE(contains(load_error(aten_graph("aten::mul", "Tensor", {})),
                       "0 args, aten::mul.Tensor takes 2"));
  EXPECT_TRUE(contains(load_error(aten_graph("aten::mul", "Tensor", {Arg::tensor(0)})),
                       "1 args, aten::mul.Tensor takes 2"));
  EXPECT_TRUE(
      contains(load_error(aten_graph("aten::mul", "Tensor", {Arg::tensor(0), Arg::integer(3)})),
               "nodes[0] (aten aten::mul).args[1] (other): expected Tensor, got Int"));
  // Defaults count: a boxed call gets none filled in.
  EXPECT_TRUE(
      contains(load_error(aten_graph("aten::add", "Tensor", {Arg::tensor(0), Arg::tensor(1)})),
               "2 args, aten::add.Tensor takes 3"));
  EXPECT_TRUE(
      contains(load_error(aten_graph("aten::mul", "Tensor", {Arg::tensor(0), Arg::tensor(1)}, 2)),
               "2 outputs, aten::mul.Tensor returns 1"));
  EXPECT_TRUE(contains(load_error(aten_graph("aten::sum", "", {Arg::tensor(0), Arg::integer(99)})),
                       "ScalarType 99 out of range"));
}

TEST(HostileAten, OpsThatWriteIntoArgsOrSetGeometryUncheckedAreRefused) {
  EXPECT_TRUE(
      contains(load_error(aten_graph("aten::mul_", "Tensor", {Arg::tensor(0), Arg::tensor(1)})),
               "writes into this argument"));
  EXPECT_TRUE(contains(
      load_error(aten_graph("aten::_reshape_alias", "", {Arg::tensor(0), ints({64}), ints({1})})),
      "without a bounds check"));
}

TEST(HostileAten, ViewsOutsideTheirStorageFailCleanlyAndGoodOnesReplay) {
  const Executor bad = load(
      aten_graph("aten::as_strided", "", {Arg::tensor(0), ints({64}), ints({1}), Arg::none()}));
  EXPECT_TRUE(contains(test::error_of<ExecutionError>([&] { bad.run(kAB); }), "out of bounds"));
  const Executor good = load(aten_graph("aten::view", "", {Arg::tensor(0), ints({3, 2})}));
  EXPECT_TRUE(torch::equal(good.run(kAB)[0], kAB[0].view({3, 2})));
  const Executor mul = load(aten_graph("aten::mul", "Tensor", {Arg::tensor(0), Arg::tensor(1)}));
  EXPECT_TRUE(torch::equal(mul.run(kAB)[0], kAB[0] * kAB[1]));
}

// An aten view may be of any logical size (a stride-0 expand): the steps reading it would walk
// all of it. No step may produce more than ExecutorOptions::max_tensor_elements elements.
TEST(HostileAten, NoStepProducesATensorPastTheElementLimit) {
  const Graph g =
      aten_graph("aten::expand", "", {Arg::tensor(0), ints({1 << 20, 2, 3}), Arg::boolean(false)});
  EXPECT_EQ(load(g).run(kAB)[0].numel(), 6 << 20);
  ExecutorOptions options;
  options.max_tensor_elements = 1 << 20;
  const std::vector<uint8_t> bytes = graph_to_bytes(g);
  const Executor small(graph_from_bytes(bytes.data(), bytes.size()), options);
  EXPECT_TRUE(contains(test::error_of<ExecutionError>([&] { small.run(kAB); }),
                       "output 0 of shape [1048576, 2, 3] has 6291456 elements, more than the "
                       "limit of 1048576 (ExecutorOptions::max_tensor_elements)"));
}

TEST(HostileAten, AnUndefinedTensorArgIsARunTimeError) {
  const Executor ex =
      load(aten_graph("aten::mul", "Tensor", {Arg::tensor(0), Arg::tensor(kNoValue)}));
  EXPECT_TRUE(contains(test::error_of<ExecutionError>([&] { ex.run(kAB); }),
                       "args[1] (other) of aten::mul.Tensor is an undefined tensor"));
}

// ---- functional nodes ---------------------------------------------------------------------------

using test::CapturedBackward;

/// linear -> split_with_sizes -> cat: AddmmBackward0 and SplitWithSizesBackward0.
CapturedBackward capture_linear_split() {
  torch::manual_seed(0);
  const std::vector<at::Tensor> params = {torch::randn({4, 3}, torch::requires_grad()),
                                          torch::randn({4}, torch::requires_grad())};
  const at::Tensor x = torch::randn({5, 3});
  auto parts = torch::linear(x, params[0], params[1]).split_with_sizes({1, 3}, 1);
  return test::capture_with_eager((parts[0] * 2).sum() + parts[1].pow(2).sum(), params);
}

size_t node_of(const Graph& g, const std::string& op) {
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.op(g.nodes[i]) == op) return i;
  }
  throw std::runtime_error("no node " + op);
}

// The rules come from torch's derivatives.yaml; positions only mean something when upstream's
// packing (as the harvest saw it) has the arity the generator computed.
TEST(HostileFunctional, GeneratedRulesMatchTheHarvestedSchemas) {
  size_t matched = 0;
  for (const detail::OpRules& rules : detail::generated_op_rules()) {
    const detail::OpEntry* op = detail::find_op(rules.op);
    if (op == nullptr) continue;
    EXPECT_EQ(rules.packed_args, op->schema.size()) << rules.op;
    matched += rules.packed_args == op->schema.size();
  }
  EXPECT_GT(matched, 600u);
}

// Hand-written guard rows name ops and args by upstream's names: each must name an op this
// torch harvests and only args that op packs, or the row would bind nothing (or throw at load).
TEST(HostileFunctional, EveryHandWrittenGuardBindsToThisTorchsPacking) {
  size_t load_rows = 0, run_rows = 0;
  for (const detail::GuardRow& row : detail::guard_rows()) {
    const detail::OpRules* rules = detail::find_op_rules(row.op);
    const detail::OpEntry* op = detail::find_op(row.op);
    if (rules == nullptr || op == nullptr) {
      ADD_FAILURE() << row.op << " is not an op of this torch: its row guards nothing";
      continue;
    }
    ArgPool pool;
    const ArgRefs node_args =
        pool.refs(pool.append(std::vector<Arg>(rules->packed_args, Arg::none())));
    const std::vector<c10::IValue> args(rules->packed_args);
    const detail::ArgSlots slots(*rules, node_args, args);
    if (row.phase() == detail::GuardPhase::kLoad) {
      const auto* list = std::get_if<detail::NamedListRule>(&row.rule);
      EXPECT_NO_THROW(slots[list->a]) << row.op << ": " << row.protects;
      if (list->b != nullptr) {
        EXPECT_NO_THROW(slots[list->b]) << row.op;
      }
      ++load_rows;
    } else {
      EXPECT_NO_THROW(std::get<detail::RunGuardFactory>(row.rule)(slots))
          << row.op << ": " << row.protects;
      ++run_rows;
    }
  }
  EXPECT_GT(load_rows, 15u);
  EXPECT_GT(run_rows, 25u);
  // A name the op does not pack is this table's bug, said as such.
  const detail::OpRules* repeat = detail::find_op_rules("RepeatBackward0");
  ASSERT_NE(repeat, nullptr);
  ArgPool pool;
  const ArgRefs node_args =
      pool.refs(pool.append(std::vector<Arg>(repeat->packed_args, Arg::none())));
  const std::vector<c10::IValue> args(repeat->packed_args);
  EXPECT_TRUE(test::contains(
      test::error_of<Error>([&] { detail::ArgSlots(*repeat, node_args, args)["no_such_arg"]; }),
      "RepeatBackward0 packs no arg named no_such_arg"));
}

TEST(HostileFunctional, TheUncorruptedGraphReplaysLikeEager) {
  CapturedBackward c = capture_linear_split();
  load(c.cap.graph).run(c.cap.inputs);
  EXPECT_TRUE(test::grads_match_eager(c));
}

/// The first functional node whose validate_outputs (the next node) reads only its outputs.
size_t validated_functional(const Graph& g) {
  for (size_t i = 0; i + 1 < g.nodes.size(); ++i) {
    if (g.nodes[i].kind == NodeKind::kFunctional &&
        g.nodes[i + 1].kind == NodeKind::kValidateOutputs &&
        g.ids(g.nodes[i + 1].inputs) == g.ids(g.nodes[i].outputs)) {
      return i;
    }
  }
  throw std::runtime_error("no functional node with its own validate_outputs");
}

// A node's result count is the count of metadata its validate_outputs checks: verify says so.
TEST(HostileFunctional, OutputsTheValidateOutputsAfterItDoesNotCheckAreRefusedAtLoad) {
  CapturedBackward c = capture_linear_split();
  Graph& g = c.cap.graph;
  const size_t i = validated_functional(g);
  const size_t declared = g.nodes[i].outputs.size;
  test::edit_ids(g, i, &Node::outputs,
                 [&](std::vector<ValueId>& v) { v.push_back(g.num_values++); });
  EXPECT_TRUE(contains(load_error(g), node_path(g, i) + ": " + std::to_string(declared + 1) +
                                          " outputs, but the validate_outputs after it checks " +
                                          std::to_string(declared)));
}

// Meta inference only optimizes: an op that returns fewer results than its node declares (the
// validate_outputs after it agreeing with the node) loads, and the run names the node and both
// counts before any value is read.
TEST(HostileFunctional, AResultCountTheOpDoesNotReturnFailsTheRunNotTheLoad) {
  CapturedBackward c = capture_linear_split();
  Graph& g = c.cap.graph;
  const size_t i = validated_functional(g);
  const size_t returned = g.nodes[i].outputs.size;
  const ValueId extra = g.num_values++;
  test::edit_ids(g, i, &Node::outputs, [&](std::vector<ValueId>& v) { v.push_back(extra); });
  // The validate_outputs passes the extra value through, with a copy of a metadata.
  test::edit_ids(g, i + 1, &Node::inputs, [&](std::vector<ValueId>& v) { v.push_back(extra); });
  test::edit_ids(g, i + 1, &Node::outputs,
                 [&](std::vector<ValueId>& v) { v.push_back(g.num_values++); });
  test::edit_args(g, i + 1, [](std::vector<Arg>& args) {
    args.at(0).items.push_back(args.at(0).items.back());
  });
  const Executor ex = load(g);
  const std::string error =
      test::error_of<ExecutionError>([&] { ex.run(c.cap.inputs); }, "replaying");
  EXPECT_TRUE(contains(error, node_path(g, i) + " on inputs ("));
  EXPECT_TRUE(contains(error, "produced " + std::to_string(returned) + " outputs, graph expects " +
                                  std::to_string(returned + 1)));
  EXPECT_FALSE(c.params[0].grad().defined()) << "no .grad was written";
}

TEST(HostileFunctional, SizesAndStridesMustHaveTheRankTheOpReads) {
  CapturedBackward c = capture_linear_split();
  test::ArgEdit addmm(c.cap.graph, node_of(c.cap.graph, "AddmmBackward0"));
  // mat2 (the weight, needs_input_grad[2]) is read by mm_mat2_backward: sizes, strides args 9, 10.
  addmm[9] = ints({});
  addmm[10] = ints({});
  EXPECT_TRUE(contains(load_error(addmm.commit()),
                       "(functional AddmmBackward0).args[9] (mat2_sym_sizes): 0 elements, the "
                       "op reads 2"));
  addmm[9] = ints({3, 4});
  addmm[10] = ints({1});
  EXPECT_TRUE(contains(load_error(addmm.commit()), "2 sizes but 1 strides"));
  addmm[10] = ints({1, 3});
  addmm[10].type = ArgType{ArgType::Kind::kAny, {}};  // a List[Any] of ints: unpack asserts
  EXPECT_TRUE(
      contains(load_error(addmm.commit()), "args[10]: expected SymInt[], got a list of Any"));
}

TEST(HostileFunctional, AnOpGivenFewerGradsThanItReadsIsRefused) {
  CapturedBackward c = capture_linear_split();
  c.cap.graph.nodes[node_of(c.cap.graph, "AddmmBackward0")].inputs = {};
  EXPECT_TRUE(contains(load_error(c.cap.graph),
                       "(functional AddmmBackward0): 0 grads, the op "
                       "reads 1"));
}

TEST(HostileFunctional, SplitSizesMustCoverEveryGrad) {
  CapturedBackward c = capture_linear_split();
  const size_t i = node_of(c.cap.graph, "SplitWithSizesBackward0");
  ASSERT_EQ(c.cap.graph.nodes[i].inputs.size, 2u);
  test::ArgEdit split(c.cap.graph, i);
  split[4] = ints({1});
  EXPECT_TRUE(contains(load_error(split.commit()),
                       "args[4] (split_sizes): 1 elements for 2 grads, the op reads one per grad"));
  split[4] = ints({1, 3});
  split[3] = ints({});
  EXPECT_TRUE(contains(load_error(split.commit()), "(self_sym_sizes): empty"));
}

TEST(HostileFunctional, CatSizesMustCoverEachInputWithOneRank) {
  torch::manual_seed(3);
  const at::Tensor a = torch::randn({2, 3}, torch::requires_grad());
  const at::Tensor b = torch::randn({2, 1}, torch::requires_grad());
  const at::Tensor loss = torch::cat({a, b}, 1).pow(2).sum();
  CaptureResult cap = capture({loss});
  loss.backward();
  const at::Tensor eager_a = a.grad().clone(), eager_b = b.grad().clone();
  a.mutable_grad().reset();
  b.mutable_grad().reset();
  load(cap.graph).run(cap.inputs);
  EXPECT_TRUE(torch::allclose(a.grad(), eager_a) && torch::allclose(b.grad(), eager_b));

  test::ArgEdit cat(cap.graph, node_of(cap.graph, "CatBackward0"));  // input sizes: args[4]
  const Arg shape_a = cat[4].items[0];
  cat[4].items = {shape_a};
  EXPECT_TRUE(contains(load_error(cat.commit()),
                       "args[4] (tensors_args_sizes_symint): 1 elements for a list of 2 tensors"));
  cat[4].items = {shape_a, ints({2})};
  EXPECT_TRUE(contains(load_error(cat.commit()), "input shapes of rank 1 and 2 for cat dim 1"));
  cat[1] = Arg::integer(int64_t{1} << 40);  // the op would allocate a grad per element
  EXPECT_TRUE(contains(load_error(cat.commit()),
                       "(tensors_size_): a list of 1099511627776 tensors "
                       "for a node with 2 outputs"));
}

}  // namespace
}  // namespace ca
