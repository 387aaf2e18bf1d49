// SPDX-License-Identifier: BSD-3-Clause
// The registry reaches every built-in node's functional form, and says clearly when it cannot.
#include "ca/op_registry.h"

#include <gtest/gtest.h>

#include <string>

#include "ca/custom_function.h"
#include "ca/error.h"
#include "registry/op_entry.h"

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
  const detail::OpEntry* mul = detail::find_op("MulBackward0");
  ASSERT_NE(mul, nullptr);
  EXPECT_EQ(mul->name, "MulBackward0");
  ASSERT_TRUE(static_cast<bool>(mul->fn));
  // needs_input_grad, other, other_scalar_type, self, self_scalar_type
  const OpInfo info = OpRegistry::global().info("MulBackward0");
  EXPECT_EQ(info.arg_types,
            (std::vector<std::string>{"bool[]", "Tensor", "ScalarType", "Tensor", "ScalarType"}));
  EXPECT_FALSE(info.is_custom_function);
}

TEST(OpRegistry, ProbesHowManyNeedsInputGradFlagsEachOpTakes) {
  const OpRegistry& registry = OpRegistry::global();
  EXPECT_EQ(registry.info("MulBackward0").needs_input_grad_count, 2);  // self, other
  EXPECT_EQ(registry.info("AddmmBackward0").needs_input_grad_count, 3);
  EXPECT_EQ(registry.info("CatBackward0").needs_input_grad_count, 1);  // a tensor list counts once
  EXPECT_EQ(registry.info("CopyBackwards").needs_input_grad_count, 2);
  EXPECT_EQ(registry.info("AccumulateGrad").needs_input_grad_count, -1);  // packs no flags
  size_t known = 0;
  const auto names = registry.names();
  for (const std::string& name : names) known += registry.info(name).needs_input_grad_count >= 0;
  std::printf("needs_input_grad count known for %zu of %zu ops\n", known, names.size());
  EXPECT_GE(known * 100, names.size() * 95);
}

TEST(OpRegistry, HandWrittenNodesResolveUnderBothNames) {
  const OpRegistry& registry = OpRegistry::global();
  EXPECT_TRUE(registry.contains("AccumulateGrad"));
  EXPECT_TRUE(registry.contains("CopyBackwards"));
  // upstream binds CopyBackwards under its qualified name(); graphs refer to it that way
  EXPECT_TRUE(registry.contains("torch::autograd::CopyBackwards"));
}

TEST(OpRegistry, UnknownNameThrowsErrorNamingIt) {
  try {
    OpRegistry::global().info("NoSuchBackward7");
    FAIL() << "expected OpNotFoundError";
  } catch (const OpNotFoundError& e) {
    EXPECT_NE(std::string(e.what()).find("NoSuchBackward7"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(OpRegistry::global().contains("NoSuchBackward7"));
}

TEST(OpRegistry, CustomFunctionRegistrationKeepsTheFirstEntry) {
  auto identity = [](const auto& g, const auto&) { return g; };
  EXPECT_TRUE(detail::register_custom_function("ca_test_op", identity));
  const detail::OpEntry* first = detail::find_op("ca_test_op");
  ASSERT_NE(first, nullptr);
  EXPECT_TRUE(first->is_custom_function);
  EXPECT_FALSE(detail::register_custom_function("ca_test_op", identity));
  EXPECT_EQ(detail::find_op("ca_test_op"), first);
}

TEST(OpRegistry, BuiltinsCannotBeReplacedByACustomFunction) {
  const detail::OpEntry* mul = detail::find_op("MulBackward0");
  EXPECT_FALSE(detail::register_custom_function("MulBackward0",
                                                [](const auto& g, const auto&) { return g; }));
  EXPECT_EQ(detail::find_op("MulBackward0"), mul);
  EXPECT_FALSE(mul->is_custom_function);
}

}  // namespace
}  // namespace ca
