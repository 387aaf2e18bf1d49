// SPDX-License-Identifier: BSD-3-Clause
// replay: load, verify, replay, compare, benchmark and print captured backward graphs.
#include <cstdio>
#include <exception>

#include "ca/error.h"
#include "cli_args.h"
#include "commands.h"

int main(int argc, char** argv) {
  using namespace ca::cli;
  try {
    const Options o = parse_args(argc, argv);
    if (o.help || argc == 1) {
      std::fputs(usage().c_str(), o.help ? stdout : stderr);
      return o.help ? 0 : 2;
    }
    if (o.version) {
      std::fputs(version_text().c_str(), stdout);
      return 0;
    }
    if (!o.trace.empty() && o.graph.empty()) {
      throw ca::Error("--trace needs --graph and --inputs: it traces a replay (see --help)");
    }
    if (o.list_ops) return cmd_list_ops(o);
    if (!o.verify.empty()) return cmd_verify(o);
    if (!o.dump.empty()) return cmd_dump(o);
    if (!o.dot.empty()) return cmd_dot(o);
    if (!o.encode.empty()) return cmd_encode(o);
    if (!o.graph.empty()) return cmd_replay(o);
    throw ca::Error(
        "nothing to do: give --graph, --verify, --dump, --dot, --encode, --list-ops or --version "
        "(see --help)");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "replay: error: %s\n", e.what());
    return 2;
  }
}
