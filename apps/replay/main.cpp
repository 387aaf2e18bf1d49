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
    if (o.list_ops) return cmd_list_ops(o);
#ifdef CA_HAVE_SERIALIZER
    if (!o.verify.empty()) return cmd_verify(o);
    if (!o.dump.empty()) return cmd_dump(o);
    if (!o.graph.empty()) return cmd_replay(o);
#endif
    throw ca::Error("nothing to do: give --graph, --verify, --dump or --list-ops");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "replay: error: %s\n", e.what());
    return 2;
  }
}
