// SPDX-License-Identifier: BSD-3-Clause
// gen_graph --nodes N [--kind accumulate|functional] --out FILE: writes a synthetic graph file
// (see graph_gen.h) for the loader memory and --verify measurements.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "ca/graph_io.h"
#include "graph_gen.h"

namespace {

constexpr const char* kUsage =
    "usage: gen_graph --nodes N [--kind accumulate|functional] --out FILE\n";

}  // namespace

int main(int argc, char** argv) {
  size_t nodes = 0;
  std::string kind = "accumulate";
  std::string out;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--nodes") {
      nodes = std::strtoull(argv[i + 1], nullptr, 10);
    } else if (flag == "--kind") {
      kind = argv[i + 1];
    } else if (flag == "--out") {
      out = argv[i + 1];
    } else {
      std::fputs(kUsage, stderr);
      return 2;
    }
  }
  if (argc % 2 == 0 || nodes == 0 || out.empty()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  try {
    ca::save_graph(ca::bench::trivial_chain(nodes, ca::bench::trivial_kind_from_name(kind)), out);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gen_graph: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
