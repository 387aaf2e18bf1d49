// replay --dump FILE: print a loaded graph, one line per input and node.
#include <cstdio>

#include "ca/graph_dump.h"
#include "ca/graph_io.h"
#include "commands.h"

namespace ca::cli {

int cmd_dump(const Options& o) {
  const Graph g =
      load_graph(o.dump, load_options(o));  // errors go to main: message on stderr, exit 2
  std::fputs(dump_graph(g).c_str(), stdout);
  return 0;
}

}  // namespace ca::cli
