// SPDX-License-Identifier: BSD-3-Clause
// replay --dump FILE: print a loaded graph, one line per input and node, then (on stderr) what
// the executor's load would make of it: how many validate_outputs nodes it elides.
#include <cstdio>

#include "ca/error.h"
#include "ca/escape.h"
#include "ca/executor.h"
#include "ca/graph_dump.h"
#include "ca/graph_io.h"
#include "commands.h"

namespace ca::cli {

int cmd_dump(const Options& o) {
  Graph g = load_graph(o.dump, load_options(o));           // errors go to main: stderr, exit 2
  std::fputs(escape_text(dump_graph(g)).c_str(), stdout);  // names come from the file
  try {
    ExecutorOptions options;
    options.allow_version_mismatch = o.allow_version_mismatch;
    const Executor ex(std::move(g), options);
    const ExecutorStats& st = ex.stats();
    std::fprintf(stderr, "plan: %zu of %zu nodes run; %zu validate_outputs elided at load\n",
                 st.plan_steps, st.nodes, st.validates_elided);
  } catch (const Error& e) {
    std::fprintf(stderr, "plan: not built: %s\n", e.what());
  }
  return 0;
}

}  // namespace ca::cli
