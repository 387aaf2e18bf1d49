// SPDX-License-Identifier: BSD-3-Clause
// Replaces the global operator new/delete with malloc/free plus the counts of heap_counter.h.
// Libraries loaded with the executable (ours, libtorch) resolve to these through the dynamic
// linker, so their allocations are counted too. Only linked into measurement tools.
#include "heap_counter.h"

#include <malloc.h>

#include <algorithm>
#include <cstdlib>
#include <new>

namespace ca::bench {
namespace {

struct Counter {
  bool on = false;
  bool in_op = false;
  HeapCounts counts;
};
thread_local Counter t_counter;

void* counted_alloc(size_t size, size_t align) {
  void* p = align <= alignof(std::max_align_t)
                ? std::malloc(size ? size : 1)
                : std::aligned_alloc(align, (size + align - 1) / align * align);
  if (p == nullptr) throw std::bad_alloc();
  Counter& c = t_counter;
  if (c.on) {
    ++(c.in_op ? c.counts.op : c.counts.runtime);
    c.counts.live += static_cast<int64_t>(malloc_usable_size(p));
    c.counts.peak = std::max(c.counts.peak, c.counts.live);
  }
  return p;
}

void counted_free(void* p) {
  if (p == nullptr) return;
  Counter& c = t_counter;
  if (c.on) c.counts.live -= static_cast<int64_t>(malloc_usable_size(p));
  std::free(p);
}

}  // namespace

void start_counting() { t_counter = Counter{true, false, {}}; }
HeapCounts stop_counting() {
  t_counter.on = false;
  return t_counter.counts;
}
void set_in_op(bool in_op) { t_counter.in_op = in_op; }

}  // namespace ca::bench

using ca::bench::counted_alloc;
using ca::bench::counted_free;

void* operator new(size_t n) { return counted_alloc(n, 0); }
void* operator new[](size_t n) { return counted_alloc(n, 0); }
void* operator new(size_t n, std::align_val_t a) { return counted_alloc(n, size_t(a)); }
void* operator new[](size_t n, std::align_val_t a) { return counted_alloc(n, size_t(a)); }
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  try {
    return counted_alloc(n, 0);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void operator delete(void* p) noexcept { counted_free(p); }
void operator delete[](void* p) noexcept { counted_free(p); }
void operator delete(void* p, size_t) noexcept { counted_free(p); }
void operator delete[](void* p, size_t) noexcept { counted_free(p); }
void operator delete(void* p, std::align_val_t) noexcept { counted_free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { counted_free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { counted_free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { counted_free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { counted_free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { counted_free(p); }
