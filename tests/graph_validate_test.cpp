// SPDX-License-Identifier: BSD-3-Clause
// ca::validate_graph: each structural rule of graph.h, one mutation of a valid graph at a time.
#include "ca/graph_validate.h"

#include <gtest/gtest.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ca/error.h"
#include "ca/graph.h"
#include "ca/graph_dump.h"
#include "sample_graphs.h"
#include "test_util.h"

namespace ca {
namespace {

struct Case {
  const char* name;
  std::function<void(Graph&)> mutate;
  const char* message;  ///< expected substring of the FormatError
};

const std::vector<Case>& cases() {
  using test::make_node;
  static const std::vector<Case> kCases = {
      {"op schemas out of order",
       [](Graph& g) { g.op_schemas.insert(g.op_schemas.begin(), g.op_schemas[0]); },
       "op_schemas[1].op: 'MulBackward0' is not after 'MulBackward0'"},
      {"op schema without a name", [](Graph& g) { g.op_schemas[0].op.clear(); },
       "op_schemas[0].op: empty op name"},
      {"op schema flag count below -1",
       [](Graph& g) { g.op_schemas[0].needs_input_grad_count = -5; },
       "op_schemas[0].needs_input_grad_count: -5 is below -1"},
      {"node input out of range", [](Graph& g) { g.id(g.nodes[3].inputs, 0) = 93; },
       "nodes[3].inputs[0]: value id 93 out of range [0, 15)"},
      {"negative id", [](Graph& g) { g.id(g.nodes[4].inputs, 1) = -7; },
       "nodes[4].inputs[1]: value id -7 out of range [0, 15)"},
      {"undefined input where not allowed", [](Graph& g) { g.id(g.nodes[3].inputs, 0) = kNoValue; },
       "nodes[3].inputs[0]: value id -1 out of range"},
      {"use before define", [](Graph& g) { g.id(g.nodes[2].inputs, 0) = 11; },
       "nodes[2].inputs[0]: value id 11 used before its definition by nodes[3]"},
      {"own output as input", [](Graph& g) { g.id(g.nodes[2].inputs, 0) = 9; },
       "value id 9 used before its definition by nodes[2]"},
      {"defined twice", [](Graph& g) { g.id(g.nodes[2].outputs, 0) = 7; },
       "nodes[2].outputs[0]: value id 7 already defined by nodes[1]"},
      {"output redefines an input", [](Graph& g) { g.id(g.nodes[2].outputs, 0) = 1; },
       "nodes[2].outputs[0]: value id 1 already defined by inputs[1]"},
      {"num_values too large", [](Graph& g) { g.num_values = 1000000000; },
       "num_values: 1000000000 out of range [5, 17)"},
      {"num_values below inputs", [](Graph& g) { g.num_values = 2; },
       "num_values: 2 out of range [5, 17)"},
      {"value never defined", [](Graph& g) { g.num_values = 16; },
       "value id 15 is defined by no node"},
      {"graph output out of range", [](Graph& g) { g.outputs[0] = 15; },
       "outputs[0]: value id 15 out of range [0, 15)"},
      {"graph output is a scalar", [](Graph& g) { g.outputs[0] = 3; },
       "outputs[0]: value id 3 is the scalar input 'size.0', expected a tensor"},
      {"node inputs outside the id pool",
       [](Graph& g) {
         g.nodes[2].inputs = IdRange{1000, 2};
       },
       "nodes[2].inputs: range [1000, +2) is not a range of the"},
      {"node outputs past the id pool's end",
       [](Graph& g) {
         g.nodes[3].outputs = IdRange{static_cast<uint32_t>(g.value_ids.size()), 1};
       },
       "nodes[3].outputs: range ["},
      {"op name not in the table", [](Graph& g) { g.nodes[0].op = 999; },
       "nodes[0].op: name id 999 is not in the graph's name table"},
      {"empty functional op", [](Graph& g) { g.nodes[0].op = g.intern(""); },
       "nodes[0].op: empty op name"},
      {"empty aten op", [](Graph& g) { g.nodes[4].op = g.intern(""); },
       "nodes[4].op: empty op name"},
      {"bad node kind", [](Graph& g) { g.nodes[1].kind = static_cast<NodeKind>(42); },
       "nodes[1].kind: kind 42 out of range [0, 8)"},
      {"accumulate arity",
       [](Graph& g) {
         test::edit_ids(g, 2, &Node::inputs,
                        [&](std::vector<ValueId>& v) { v.push_back(kNoValue); });
       },
       "nodes[2].inputs: 3 inputs, expected 2"},
      {"accumulate outputs",
       [](Graph& g) {
         test::edit_ids(g, 2, &Node::outputs,
                        [&](std::vector<ValueId>& v) { v.push_back(kNoValue); });
       },
       "nodes[2].outputs: 2 outputs, expected 1"},
      {"validate_outputs arity",
       [](Graph& g) {
         test::edit_ids(g, 1, &Node::outputs,
                        [&](std::vector<ValueId>& v) { v.push_back(kNoValue); });
       },
       "nodes[1].outputs: 3 outputs for as many inputs, expected 2"},
      {"validate_outputs args",
       [](Graph& g) { test::edit_args(g, 1, [](std::vector<Arg>& a) { a.clear(); }); },
       "nodes[1].args: 0 args, expected 1"},
      {"prologue outputs",
       [](Graph& g) {
         test::edit_ids(g, 3, &Node::outputs, [&](std::vector<ValueId>& v) { v.pop_back(); });
       },
       "nodes[3].outputs: 2 outputs, expected 3"},
      {"prologue args",
       [](Graph& g) { test::edit_args(g, 3, [](std::vector<Arg>& a) { a.pop_back(); }); },
       "nodes[3].args: 1 args, expected 2"},
      {"epilogue inputs",
       [](Graph& g) {
         test::edit_ids(g, 5, &Node::inputs, [&](std::vector<ValueId>& v) { v.resize(1); });
       },
       "nodes[5].inputs: 1 inputs, expected at least 2"},
      {"accumulate_grad outputs", [](Graph& g) { g.nodes[6].outputs = g.add_ids({kNoValue}); },
       "nodes[6].outputs: 1 outputs, expected 0"},
      {"accumulate_grad arg kind",
       [](Graph& g) { test::edit_args(g, 6, [](std::vector<Arg>& a) { a[0] = Arg::integer(1); }); },
       "nodes[6].args[0]: has_post_hooks must be a bool"},
      {"accumulate_grad variable not an input", [](Graph& g) { g.id(g.nodes[6].inputs, 0) = 13; },
       "nodes[6].inputs[0]: value id 13 is not a graph input"},
      {"accumulate_grad variable undefined",
       [](Graph& g) { g.id(g.nodes[6].inputs, 0) = kNoValue; },
       "nodes[6].inputs[0]: value id -1 out of range"},
      {"node input is an int input", [](Graph& g) { g.id(g.nodes[0].inputs, 0) = 3; },
       "nodes[0].inputs[0]: value id 3 is the scalar input 'size.0', expected a tensor"},
      {"tensor arg ref before define",
       [](Graph& g) { test::edit_args(g, 0, [](std::vector<Arg>& a) { a[0] = Arg::tensor(12); }); },
       "nodes[0].args[0].ref: value id 12 used before its definition by nodes[3]"},
      {"nested tensor ref out of range",
       [](Graph& g) {
         test::edit_args(
             g, 0, [](std::vector<Arg>& a) { a[0] = Arg::tuple({Arg::tuple({Arg::tensor(99)})}); });
       },
       "nodes[0].args[0].items[0].items[0].ref: value id 99 out of range [0, 15)"},
      {"symint ref to a tensor input",
       [](Graph& g) {
         test::edit_args(g, 0, [](std::vector<Arg>& a) { a[0] = test::sym_int(2); });
       },
       "nodes[0].args[0].ref: value id 2 is not an int graph input"},
      {"symint ref past inputs",
       [](Graph& g) {
         test::edit_args(g, 0, [](std::vector<Arg>& a) { a[0] = test::sym_int(7); });
       },
       "nodes[0].args[0].ref: symint input id 7 out of range [0, 5)"},
      {"bad arg kind",
       [](Graph& g) {
         test::edit_args(g, 0, [](std::vector<Arg>& a) { a[1].kind = static_cast<Arg::Kind>(15); });
       },
       "nodes[0].args[1].kind: kind 15 out of range [0, 15)"},
      {"bad scalar type payload",
       [](Graph& g) {
         test::edit_args(g, 0, [](std::vector<Arg>& a) {
           a[0] = test::with_kind(Arg::Kind::kScalarType, 100);
         });
       },
       "nodes[0].args[0].i: scalar type 100 out of range"},
      {"bad layout payload",
       [](Graph& g) {
         test::edit_args(
             g, 0, [](std::vector<Arg>& a) { a[0] = test::with_kind(Arg::Kind::kLayout, -1); });
       },
       "nodes[0].args[0].i: layout -1 out of range"},
      {"bad device",
       [](Graph& g) {
         test::edit_args(
             g, 0, [](std::vector<Arg>& a) { a[0] = test::with_kind(Arg::Kind::kDevice, 77); });
       },
       "nodes[0].args[0]: device type 77 index -1 is not a valid device"},
      {"odd dict items",
       [](Graph& g) {
         test::edit_args(
             g, 0, [](std::vector<Arg>& a) { a[0] = test::dict_arg({}, {}, {Arg::integer(1)}); });
       },
       "nodes[0].args[0].items: 1 items, a dict needs key/value pairs"},
      {"args outside the pool",
       [](Graph& g) {
         g.nodes[2].args = ArgRange{9999, 1, 1};
       },
       "nodes[2].args: range [9999, +1) of 1 args is not a range of the arg pool"},
      {"args that split an arg",
       [](Graph& g) {
         g.nodes[2].args = g.nodes[3].args;
         --g.nodes[2].args.size;
       },
       "nodes[2].args: range"},
      {"list type without element",
       [](Graph& g) {
         test::edit_args(g, 0, [](std::vector<Arg>& a) {
           a[0] = Arg::list(test::nested(ArgType::Kind::kList, {}), {});
         });
       },
       "nodes[0].args[0].type.contained: 0 contained types, expected 1"},
      {"bad input dtype",
       [](Graph& g) { g.inputs[1].meta.dtype = static_cast<c10::ScalarType>(-3); },
       "inputs[1].meta.dtype: scalar type -3 out of range"},
  };
  return kCases;
}

TEST(GraphValidate, SampleGraphIsValid) { EXPECT_NO_THROW(validate_graph(test::sample_graph())); }

TEST(GraphValidate, TinyAndEmptyGraphsAreValid) {
  EXPECT_NO_THROW(validate_graph(test::tiny_graph()));
  EXPECT_NO_THROW(validate_graph(Graph{}));
}

TEST(GraphValidate, EachRuleNamesPathValueAndBound) {
  for (const Case& c : cases()) {
    Graph g = test::sample_graph();
    c.mutate(g);
    try {
      validate_graph(g);
      ADD_FAILURE() << c.name << ": no error";
    } catch (const FormatError& e) {
      EXPECT_TRUE(test::contains(e.what(), c.message)) << c.name;
    }
  }
}

// A graph cannot hold items on an arg that is not a container: the pool refuses to store one
// (the reader refuses it in a file, graph_bad_input_test).
TEST(GraphValidate, ThePoolRefusesItemsOnAScalar) {
  Graph g = test::sample_graph();
  Arg a = Arg::integer(1);
  a.items = {Arg::none()};
  EXPECT_EQ(test::error_of<FormatError>([&] { g.set_args(0, {a}); }),
            "1 items on an arg that is not a list, tuple or dict");
}

TEST(GraphValidate, UndefinedTensorsAllowedWhereDocumented) {
  Graph g = test::sample_graph();
  g.nodes[0].inputs = g.add_ids({kNoValue});            // functional grads
  g.nodes[1].inputs = g.add_ids({kNoValue, 6});         // validate_outputs
  g.nodes[2].inputs = g.add_ids({kNoValue, kNoValue});  // accumulate
  g.id(g.nodes[6].inputs, 1) = kNoValue;                // accumulate_grad's grad
  test::edit_args(g, 0, [](std::vector<Arg>& a) { a[0] = Arg::tensor(kNoValue); });  // saved
  g.outputs = {kNoValue};
  EXPECT_NO_THROW(validate_graph(g));
}

// A node's names and ids live in its graph's tables: names once each, ids through ranges.
TEST(GraphTables, NamesAreInternedAndIdsAreReadThroughRanges) {
  Graph g;
  const Node a = g.make_node(NodeKind::kFunctional, "MulBackward0", {0}, {}, {1});
  const Node b = g.make_node(NodeKind::kFunctional, "MulBackward0", {1, kNoValue}, {}, {2});
  EXPECT_EQ(a.op, b.op);
  EXPECT_EQ(g.op(b), "MulBackward0");
  EXPECT_EQ(g.overload(b), "");
  EXPECT_EQ(g.name(12345), "");  // outside the table: validation names it
  EXPECT_EQ(g.ids(b.inputs).vec(), (std::vector<ValueId>{1, kNoValue}));
  const IdRange copy = g.add_ids(g.ids(b.inputs));  // read from the pool it grows
  EXPECT_EQ(g.ids(copy).vec(), (std::vector<ValueId>{1, kNoValue}));
  g.id(copy, 1) = 7;
  EXPECT_EQ(g.ids(copy).vec(), (std::vector<ValueId>{1, 7}));
  EXPECT_EQ(g.ids(b.inputs).vec(), (std::vector<ValueId>{1, kNoValue}));
  EXPECT_THROW(g.ids(IdRange{100, 1}), std::out_of_range);
  EXPECT_THROW(g.id(b.inputs, 2), std::out_of_range);
  // A node copied from the graph's own tables (views into them while they grow).
  const Node c = g.make_node(b.kind, g.op(b), g.ids(b.inputs), {}, g.ids(b.outputs));
  EXPECT_EQ(g.ids(c.outputs).vec(), std::vector<ValueId>{2});
  EXPECT_EQ(g.op(c), "MulBackward0");
  // What a graph is moved from keeps 0 as the empty name.
  const Graph moved_to = std::move(g);
  EXPECT_EQ(moved_to.op(c), "MulBackward0");
  EXPECT_NE(g.intern("X"), 0u);  // NOLINT(bugprone-use-after-move): reuse is what is tested
  EXPECT_EQ(g.name(0), "");
}

// A dump reads a graph that was never validated: ids and names outside its tables are named.
TEST(GraphTables, ADumpNamesIdsAndNamesOutsideTheTables) {
  Graph g = test::sample_graph();
  g.nodes[2].inputs = IdRange{1000, 2};
  g.nodes[0].op = 999;
  const std::string dump = dump_graph(g);
  EXPECT_TRUE(test::contains(dump, "[ids: not a range of value_ids]")) << dump;
  EXPECT_TRUE(test::contains(dump, "name#999")) << dump;
  EXPECT_FALSE(g == test::sample_graph());
}

}  // namespace
}  // namespace ca
