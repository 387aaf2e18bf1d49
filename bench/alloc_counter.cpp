// SPDX-License-Identifier: BSD-3-Clause
// A counting global operator new for the benchmark binary only. Counters are thread-local
// plain integers, so counting never allocates and threads do not contend.
#include "alloc_counter.h"

#include <cstdlib>
#include <new>

namespace ca::bench {
namespace {

struct Counter {
  bool on = false;
  bool in_op = false;
  AllocCounts counts;
};
thread_local Counter t_counter;

void count_one() {
  Counter& c = t_counter;
  if (!c.on) return;
  if (c.in_op) {
    ++c.counts.op;
  } else {
    ++c.counts.runtime;
  }
}

void* allocate(std::size_t n) {
  count_one();
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}

void* allocate_aligned(std::size_t n, std::align_val_t align) {
  count_one();
  const auto a = static_cast<std::size_t>(align);
  if (void* p = std::aligned_alloc(a, (n + a - 1) / a * a)) return p;
  throw std::bad_alloc();
}

}  // namespace

void start_counting() { t_counter = Counter{true, false, {}}; }

AllocCounts stop_counting() {
  t_counter.on = false;
  return t_counter.counts;
}

void AllocAttribution::op_begin(size_t) { t_counter.in_op = true; }
void AllocAttribution::op_end(size_t) { t_counter.in_op = false; }

}  // namespace ca::bench

void* operator new(std::size_t n) { return ca::bench::allocate(n); }
void* operator new[](std::size_t n) { return ca::bench::allocate(n); }
void* operator new(std::size_t n, std::align_val_t a) { return ca::bench::allocate_aligned(n, a); }
void* operator new[](std::size_t n, std::align_val_t a) {
  return ca::bench::allocate_aligned(n, a);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
