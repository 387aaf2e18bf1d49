#include <cstdio>

#include "ca/op_registry.h"
#include "commands.h"

namespace ca::cli {

int cmd_list_ops(const Options&) {
  const OpRegistry& registry = OpRegistry::global();
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
