// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// CA_CHECK: the runtime's internal-invariant check. Never used for user input, which gets a
// ca::Error naming the problem.

#include <cstdio>
#include <cstdlib>

/// Aborts with a message when an internal invariant is broken.
#define CA_CHECK(cond, msg)                                                                    \
  do {                                                                                         \
    if (!(cond)) {                                                                             \
      std::fprintf(stderr, "ca-replay internal error at %s:%d: %s (%s)\n", __FILE__, __LINE__, \
                   static_cast<const char*>(msg), #cond);                                      \
      std::abort();                                                                            \
    }                                                                                          \
  } while (0)
