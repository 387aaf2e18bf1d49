// SPDX-License-Identifier: BSD-3-Clause
// The load pipeline's op-binding step, one check at a time: each graph here is structurally
// valid (validate_graph accepts it) but semantically wrong, and goes through bytes -> decode ->
// Executor exactly as `replay` and `replay --verify` load it.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

#include "ca/capture.h"
#include "ca/error.h"
#include "ca/executor.h"
#include "ca/graph_io.h"
#include "ca/graph_validate.h"
#include "ca/version.h"
#include "sample_graphs.h"
#include "tensor_test_util.h"
#include "test_util.h"

namespace ca {
namespace {

CaptureResult linear_capture() {
  torch::manual_seed(0);
  auto w = torch::randn({3, 4}, torch::requires_grad());
  auto b = torch::randn({3}, torch::requires_grad());
  auto x = torch::randn({2, 4});
  auto scale = torch::full({3}, 2.5);  // a saved tensor: MulBackward0
  return capture({(torch::linear(x, w, b) * scale).sum()});
}

/// Loads `g` the way the CLI does (through bytes), after checking it is structurally valid.
Executor load(const Graph& g, ExecutorOptions options = {}) {
  validate_graph(g);  // the graphs below are wrong only in what binding checks
  const std::vector<uint8_t> bytes = graph_to_bytes(g);
  return Executor(graph_from_bytes(bytes.data(), bytes.size()), options);
}

template <class E>
std::string load_error(const Graph& g, ExecutorOptions options = {}) {
  return test::error_of<E>([&] { load(g, options); }, "loading the graph");
}

size_t first_functional(const Graph& g, const std::string& op = "") {
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.kind == NodeKind::kFunctional && (op.empty() || g.op(n) == op)) return i;
  }
  throw std::runtime_error("no functional node " + op);
}

/// Edits the packed args of the first `op` node: `edit(std::vector<Arg>& args)`.
template <class Edit>
void edit_functional(Graph& g, const std::string& op, Edit&& edit) {
  test::edit_args(g, first_functional(g, op), edit);
}

OpSchema& schema_of(Graph& g, const std::string& op) {
  for (OpSchema& s : g.op_schemas) {
    if (s.op == op) return s;
  }
  throw std::runtime_error("no recorded schema for " + op);
}

using test::copies;

TEST(OpBinding, CaptureRecordsTheRegistrySchemaOfEveryOpItUses) {
  const Graph g = linear_capture().graph;
  ASSERT_FALSE(g.op_schemas.empty());
  for (const Node& n : g.nodes) {
    if (n.kind != NodeKind::kFunctional) continue;
    bool found = false;
    for (const OpSchema& s : g.op_schemas) found = found || s.op == g.op(n);
    EXPECT_TRUE(found) << g.op(n);
  }
  Graph copy = g;
  const OpSchema& mul = schema_of(copy, "MulBackward0");
  EXPECT_EQ(mul.needs_input_grad_count, 2);
  EXPECT_EQ(mul.args.size(), 5u);
}

TEST(OpBinding, UnknownOpsAreAllListedInOneError) {
  Graph g = linear_capture().graph;
  int renamed = 0;
  for (Node& n : g.nodes) {
    if (n.kind == NodeKind::kFunctional)
      n.op = g.intern("NoSuchBackward" + std::to_string(renamed++ % 2));
  }
  ASSERT_GE(renamed, 2);
  const std::string msg = load_error<OpNotFoundError>(g);
  EXPECT_TRUE(test::contains(msg, "NoSuchBackward0")) << msg;
  EXPECT_TRUE(test::contains(msg, "NoSuchBackward1")) << msg;
}

TEST(OpBinding, UnknownAtenOpIsNamed) {
  Graph g = linear_capture().graph;
  Node aten;
  aten.kind = NodeKind::kAten;
  aten.op = g.intern("aten::no_such_op");
  aten.overload = g.intern("Tensor");
  g.nodes.insert(g.nodes.begin(), aten);
  EXPECT_TRUE(test::contains(load_error<OpNotFoundError>(g), "aten::no_such_op.Tensor"));
}

TEST(OpBinding, AFunctionalOpWithoutRecordedSchemaIsRefused) {
  Graph g = linear_capture().graph;
  const std::string op(g.op(g.nodes[first_functional(g)]));
  g.op_schemas.erase(g.op_schemas.begin());  // sorted: the first is some op the graph uses
  const std::string msg = load_error<FormatError>(g);
  EXPECT_TRUE(test::contains(msg, "records no packed-args schema for op")) << msg;
  (void)op;
}

TEST(OpBinding, AnotherTorchWithTheSameSchemasLoadsAndReplays) {
  CaptureResult cap = linear_capture();
  cap.graph.torch_version = "2.99.0";
  Executor ex = load(cap.graph);
  const auto grads = ex.run(copies(cap.inputs));
  EXPECT_FALSE(grads.empty());
}

TEST(OpBinding, AnotherTorchWithADifferentSchemaIsRefusedNamingTheOp) {
  Graph g = linear_capture().graph;
  g.torch_version = "2.99.0";
  schema_of(g, "AddmmBackward0").args.push_back(ArgType{ArgType::Kind::kFloat, {}});
  const std::string msg = load_error<VersionError>(g);
  EXPECT_TRUE(test::contains(msg, "graph captured with torch 2.99.0")) << msg;
  EXPECT_TRUE(test::contains(msg, "graph uses AddmmBackward0(bool[], ")) << msg;
  EXPECT_TRUE(test::contains(msg, "but torch " + runtime_torch_version() + " has AddmmBackward0("))
      << msg;
  EXPECT_FALSE(test::contains(msg, "MulBackward0")) << msg;  // only the ops that differ
}

TEST(OpBinding, AnotherTorchsSchemaIsReportedBeforeTheArgsThatDiffer) {
  Graph g = linear_capture().graph;
  g.torch_version = "2.99.0";
  // as that torch would pack them
  edit_functional(g, "MulBackward0", [](std::vector<Arg>& args) { args.pop_back(); });
  schema_of(g, "MulBackward0").args.pop_back();
  const std::string msg = load_error<VersionError>(g);
  EXPECT_TRUE(test::contains(msg, "graph uses MulBackward0(bool[], Tensor, ScalarType, Tensor)"))
      << msg;
}

TEST(OpBinding, AllowVersionMismatchStillTypeChecksAgainstTheRuntimeSchema) {
  CaptureResult cap = linear_capture();
  cap.graph.torch_version = "2.99.0";
  schema_of(cap.graph, "MulBackward0").needs_input_grad_count = 3;
  ExecutorOptions allow;
  allow.allow_version_mismatch = true;
  Executor ex = load(cap.graph, allow);  // the args themselves still fit this torch
  EXPECT_FALSE(ex.run(copies(cap.inputs)).empty());
}

TEST(OpBinding, ASchemaThatDiffersUnderTheSameTorchIsACorruptGraph) {
  Graph g = linear_capture().graph;
  schema_of(g, "MulBackward0").args.pop_back();
  const std::string msg = load_error<FormatError>(g);
  EXPECT_TRUE(test::contains(msg, "captured with the same release")) << msg;
}

TEST(OpBinding, PackedArgCountMustMatchTheSchema) {
  Graph g = linear_capture().graph;
  edit_functional(g, "MulBackward0", [](std::vector<Arg>& args) { args.pop_back(); });
  const std::string msg = load_error<FormatError>(g);
  EXPECT_TRUE(test::contains(msg, "4 packed args, op expects 5")) << msg;
}

TEST(OpBinding, PackedArgTypesMustMatchTheSchema) {
  Graph g = linear_capture().graph;
  edit_functional(g, "MulBackward0", [](std::vector<Arg>& args) {
    args.back() = Arg::string("not what the op packs");
  });
  const std::string msg = load_error<FormatError>(g);
  EXPECT_TRUE(test::contains(msg, ".args[4]: expected ScalarType, got String")) << msg;
}

TEST(OpBinding, NeedsInputGradFlagCountMustMatchTheProbe) {
  // Upstream unpacks the flags into a fixed-size array without a bounds check.
  Graph g = linear_capture().graph;
  edit_functional(g, "MulBackward0", [](std::vector<Arg>& args) {
    args[0].items.resize(args[0].items.size() + 40, Arg::boolean(true));
  });
  const std::string msg = load_error<FormatError>(g);
  EXPECT_TRUE(test::contains(msg, "expected 2 needs_input_grad flags, got 42")) << msg;
}

TEST(OpBinding, ValidateOutputsMetadataMustCoverEachOutput) {
  Graph g = linear_capture().graph;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].kind == NodeKind::kValidateOutputs && g.args(i)[0].items().size() > 1) {
      test::edit_args(g, i, [](std::vector<Arg>& args) { args[0].items.pop_back(); });
      break;
    }
  }
  EXPECT_TRUE(test::contains(load_error<FormatError>(g), "metadata for "));
}

TEST(OpBinding, MalformedBuiltinArgsAreRefusedBeforeUpstreamUnpacksThem) {
  // InputMetadata tuples are indexed by upstream's unpacker without an arity check.
  Graph g = linear_capture().graph;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].kind != NodeKind::kValidateOutputs) continue;
    test::edit_args(g, i, [](std::vector<Arg>& args) {
      for (Arg& item : args[0].items) {
        if (item.kind == Arg::Kind::kTuple) item.items.pop_back();
      }
    });
    break;
  }
  EXPECT_TRUE(test::contains(load_error<FormatError>(g), "malformed args"));
}

}  // namespace
}  // namespace ca
