#include "ca/error.h"

#include <cstdio>
#include <cstdlib>

namespace ca::detail {

void check_failed(const char* file, int line, const char* cond, const std::string& msg) {
  std::fprintf(stderr, "ca-replay internal error at %s:%d: %s (%s)\n", file, line, msg.c_str(),
               cond);
  std::abort();
}

}  // namespace ca::detail
