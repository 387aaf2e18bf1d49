// SPDX-License-Identifier: BSD-3-Clause
// replay --list-ops [--json]: the op registry as text, or as the schema table that front ends
// outside this process (the Python exporter) type packed args with.
#include <cstdio>
#include <iterator>
#include <nlohmann/json.hpp>

#include "ca/graph.h"
#include "ca/op_registry.h"
#include "ca/version.h"
#include "commands.h"

namespace ca::cli {
namespace {

using nlohmann::json;

// The names of schema/ca_graph.fbs's ArgTypeKind, in ArgType::Kind order.
constexpr const char* kTypeKindNames[] = {
    "Any",          "None",     "Bool",     "Int",    "Float",  "Complex", "String",
    "Tensor",       "SymInt",   "SymFloat", "Number", "Layout", "Device",  "ScalarType",
    "MemoryFormat", "Optional", "List",     "Tuple",  "Dict",
};
static_assert(std::size(kTypeKindNames) == static_cast<size_t>(ArgType::Kind::kDict) + 1,
              "one name per ArgType::Kind");

json type_json(const ArgType& t) {
  json out = {{"kind", kTypeKindNames[static_cast<size_t>(t.kind)]}};
  if (!t.contained.empty()) {
    json contained = json::array();
    for (const ArgType& c : t.contained) contained.push_back(type_json(c));
    out["contained"] = std::move(contained);
  }
  return out;
}

json op_json(const OpInfo& info) {
  json types = json::array();
  for (const ArgType& t : info.types) types.push_back(type_json(t));
  return {{"name", info.name},
          {"signature", info.arg_types},
          {"args", std::move(types)},
          {"needs_input_grad_count", info.needs_input_grad_count},
          {"custom_function", info.is_custom_function}};
}

int print_json(const OpRegistry& registry) {
  const HarvestReport& report = registry.harvest_report();
  json ops = json::array();
  for (const std::string& name : registry.names()) ops.push_back(op_json(registry.info(name)));
  json misses = json::array();
  for (const OpMiss& miss : report.misses) {
    misses.push_back({{"name", miss.name}, {"reason", miss.reason}});
  }
  const json out = {{"torch_version", runtime_torch_version()}, {"format_version", kFormatVersion},
                    {"builtin_types", report.builtin_types},    {"resolved", report.resolved},
                    {"unresolved", std::move(misses)},          {"ops", std::move(ops)}};
  std::printf("%s\n", out.dump().c_str());
  return 0;
}

}  // namespace

int cmd_list_ops(const Options& o) {
  const OpRegistry& registry = OpRegistry::global();
  if (o.json) return print_json(registry);
  for (const std::string& name : registry.names()) std::printf("%s\n", name.c_str());
  const HarvestReport& report = registry.harvest_report();
  for (const OpMiss& miss : report.misses) {
    std::fprintf(stderr, "unresolved %s: %s\n", miss.name.c_str(), miss.reason.c_str());
  }
  std::fprintf(stderr, "harvest took %.1f ms\n", report.millis);
  std::printf("resolved %zu of %zu built-in ops\n", report.resolved, report.builtin_types);
  return 0;
}

}  // namespace ca::cli
