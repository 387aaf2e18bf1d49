// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// A CompiledBackward's counters, bumped by steps on many threads at once and read whole by
// stats(): each count is exact (an atomic), each reason the last one written.

#include <atomic>
#include <cstddef>
#include <mutex>
#include <string>

#include "ca/compiled_backward.h"

namespace ca::detail {

class StepCounters {
 public:
  /// A hit; `checked`: found by the direct check (CompiledBackwardStats::checked_hits).
  void hit(bool checked) {
    hits_.fetch_add(1, std::memory_order_relaxed);
    if (checked) checked_hits_.fetch_add(1, std::memory_order_relaxed);
  }
  void miss(std::string reason);
  /// A replay that called `calls` opaque nodes, of the types `nodes` describes.
  void opaque(size_t calls, const std::string& nodes);
  void fall_back(std::string reason);
  /// With data_parallel: the reducer's totals after a step.
  void reduced(size_t buckets, size_t overlapped);
  /// Every count and reason as of now (cached_graphs is the cache's to fill in).
  CompiledBackwardStats read() const;

 private:
  std::atomic<size_t> hits_{0}, checked_hits_{0}, misses_{0}, fallbacks_{0}, reduced_{0},
      overlapped_{0}, opaque_calls_{0};
  mutable std::mutex reasons_mutex_;
  std::string last_miss_reason_, last_fallback_reason_, last_opaque_nodes_;
};

}  // namespace ca::detail
