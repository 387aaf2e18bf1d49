// SPDX-License-Identifier: BSD-3-Clause
#include "memory_tracker.h"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <unordered_map>

namespace ca::bench {
namespace {

std::atomic<size_t> g_live{0};
std::atomic<size_t> g_peak{0};
std::atomic<size_t> g_base{0};

// What the wrapped allocator handed out, by data pointer. c10 requires data == context for
// raw allocations, so the bookkeeping lives beside the pointer rather than in the context.
struct Block {
  void* ctx;
  c10::DeleterFnPtr deleter;
  size_t bytes;
};
std::mutex g_mutex;
std::unordered_map<void*, Block>& blocks() {
  static auto* m = new std::unordered_map<void*, Block>();  // outlives every tensor
  return *m;
}

void release(void* data) {
  Block b;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    auto it = blocks().find(data);
    if (it == blocks().end()) return;
    b = it->second;
    blocks().erase(it);
  }
  g_live -= b.bytes;
  b.deleter(b.ctx);
}

class TrackingAllocator final : public c10::Allocator {
 public:
  explicit TrackingAllocator(c10::Allocator* inner) : inner_(inner) {}

  c10::DataPtr allocate(size_t n) override {
    c10::DataPtr p = inner_->allocate(n);
    void* data = p.get();
    if (data == nullptr) return p;
    c10::DeleterFnPtr deleter = p.get_deleter();
    void* ctx = p.release_context();
    {
      std::lock_guard<std::mutex> lock(g_mutex);
      blocks()[data] = Block{ctx, deleter, n};
    }
    const size_t live = g_live += n;
    size_t peak = g_peak.load();
    while (live > peak && !g_peak.compare_exchange_weak(peak, live)) {
    }
    return {data, data, &release, c10::Device(c10::kCPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &release; }
  void copy_data(void* dst, const void* src, size_t n) const override {
    default_copy_data(dst, src, n);
  }

 private:
  c10::Allocator* inner_;
};

}  // namespace

void install_memory_tracker() {
  static TrackingAllocator* tracker = [] {
    auto* t = new TrackingAllocator(c10::GetCPUAllocator());  // lives for the process
    c10::SetCPUAllocator(t, /*priority=*/100);
    return t;
  }();
  (void)tracker;
}

void reset_peak() {
  g_base = g_live.load();
  g_peak = g_live.load();
}

size_t peak_bytes_since_reset() { return g_peak.load() - g_base.load(); }

}  // namespace ca::bench
