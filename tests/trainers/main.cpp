// SPDX-License-Identifier: BSD-3-Clause
// trainer_corpus --program NAME --mode eager|enable: runs one program of the corpus. In enable
// mode the program runs under one `ca::EnableGuard` (the line a user adds), and ca's counters go
// to stderr at the end as `ca: hits=H misses=M fallbacks=F checked_hits=C opaque=O`, so stdout
// stays byte-comparable with the eager run's.
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "ca/compiled_backward.h"
#include "trainers/programs.h"

int main(int argc, char** argv) {
  std::string program, mode = "eager";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--program") == 0) program = argv[i + 1];
    if (std::strcmp(argv[i], "--mode") == 0) mode = argv[i + 1];
  }
  if (mode != "eager" && mode != "enable") {
    std::fprintf(stderr, "--mode must be eager or enable, not '%s'\n", mode.c_str());
    return 2;
  }
  for (const trainers::Program& p : trainers::programs()) {
    if (program != p.name) continue;
    torch::set_num_threads(1);
    std::unique_ptr<ca::EnableGuard> on;
    if (mode == "enable") on = std::make_unique<ca::EnableGuard>();
    const int rc = p.run();
    on.reset();
    if (mode == "enable") {
      const ca::CompiledBackwardStats s = ca::enabled_stats();
      std::fprintf(stderr, "ca: hits=%zu misses=%zu fallbacks=%zu checked_hits=%zu opaque=%zu\n",
                   s.hits, s.misses, s.eager_fallbacks, s.checked_hits, s.opaque_calls);
      if (!s.last_opaque_nodes.empty()) {
        std::fprintf(stderr, "ca: last opaque nodes: %s\n", s.last_opaque_nodes.c_str());
      }
      if (!s.last_fallback_reason.empty()) {
        std::fprintf(stderr, "ca: last fallback: %s\n", s.last_fallback_reason.c_str());
      }
    }
    std::fflush(stdout);
    return rc;
  }
  std::fprintf(stderr, "unknown --program '%s'; one of:", program.c_str());
  for (const trainers::Program& p : trainers::programs()) std::fprintf(stderr, " %s", p.name);
  std::fprintf(stderr, "\n");
  return 2;
}
