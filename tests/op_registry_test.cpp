// The registry reaches every built-in node's functional form, and says clearly when it cannot.
#include "ca/op_registry.h"

#include <gtest/gtest.h>

#include <string>

#include "ca/error.h"

namespace ca {
namespace {

TEST(OpRegistry, ResolvesAtLeast99PercentOfBuiltinNodes) {
  const HarvestReport& report = OpRegistry::global().harvest_report();
  for (const OpMiss& miss : report.misses) {
    std::printf("unresolved %s: %s\n", miss.name.c_str(), miss.reason.c_str());
  }
  std::printf("resolved %zu of %zu built-in ops in %.1f ms\n", report.resolved,
              report.builtin_types, report.millis);
  // Functions.h of torch 2.13 declares 711 node types; far fewer means the scan broke.
  ASSERT_GT(report.builtin_types, 600u);
  EXPECT_GE(report.resolved * 100, report.builtin_types * 99);
  EXPECT_EQ(report.resolved + report.misses.size(), report.builtin_types);
}

TEST(OpRegistry, EntriesCarryFunctionAndSchema) {
  const OpEntry& mul = OpRegistry::global().get("MulBackward0");
  EXPECT_EQ(mul.name, "MulBackward0");
  ASSERT_TRUE(static_cast<bool>(mul.fn));
  // needs_input_grad, other, other_scalar_type, self, self_scalar_type
  ASSERT_EQ(mul.schema.size(), 5u);
  EXPECT_EQ(mul.schema[0]->str(), "bool[]");
  EXPECT_EQ(mul.schema[1]->str(), "Tensor");
  EXPECT_EQ(mul.schema[2]->str(), "ScalarType");
  EXPECT_FALSE(mul.is_custom_function);
}

TEST(OpRegistry, ProbesHowManyNeedsInputGradFlagsEachOpTakes) {
  const OpRegistry& registry = OpRegistry::global();
  EXPECT_EQ(registry.get("MulBackward0").needs_input_grad_count, 2);  // self, other
  EXPECT_EQ(registry.get("AddmmBackward0").needs_input_grad_count, 3);
  EXPECT_EQ(registry.get("CatBackward0").needs_input_grad_count, 1);  // a tensor list counts once
  EXPECT_EQ(registry.get("CopyBackwards").needs_input_grad_count, 2);
  EXPECT_EQ(registry.get("AccumulateGrad").needs_input_grad_count, -1);  // packs no flags
  size_t known = 0;
  const auto names = registry.names();
  for (const std::string& name : names) known += registry.get(name).needs_input_grad_count >= 0;
  std::printf("needs_input_grad count known for %zu of %zu ops\n", known, names.size());
  EXPECT_GE(known * 100, names.size() * 95);
}

TEST(OpRegistry, HandWrittenNodesResolveUnderBothNames) {
  const OpRegistry& registry = OpRegistry::global();
  EXPECT_NE(registry.find("AccumulateGrad"), nullptr);
  EXPECT_NE(registry.find("CopyBackwards"), nullptr);
  // upstream binds CopyBackwards under its qualified name(); graphs refer to it that way
  EXPECT_NE(registry.find("torch::autograd::CopyBackwards"), nullptr);
}

TEST(OpRegistry, UnknownNameThrowsErrorNamingIt) {
  try {
    OpRegistry::global().get("NoSuchBackward7");
    FAIL() << "expected OpNotFoundError";
  } catch (const OpNotFoundError& e) {
    EXPECT_NE(std::string(e.what()).find("NoSuchBackward7"), std::string::npos) << e.what();
  }
  EXPECT_EQ(OpRegistry::global().find("NoSuchBackward7"), nullptr);
}

TEST(OpRegistry, AddKeepsFirstEntry) {
  OpRegistry& registry = OpRegistry::global();
  OpEntry entry{"ca_test_op", [](const auto& g, const auto&) { return g; }, {}, true};
  registry.add(entry);
  const OpEntry* first = registry.find("ca_test_op");
  ASSERT_NE(first, nullptr);
  entry.schema.push_back(at::IntType::get());
  EXPECT_FALSE(registry.add(entry));
  EXPECT_EQ(registry.find("ca_test_op"), first);
  EXPECT_TRUE(first->schema.empty());
}

}  // namespace
}  // namespace ca
