// SPDX-License-Identifier: BSD-3-Clause
#include "trainer/step_counters.h"

namespace ca::detail {

void StepCounters::miss(std::string reason) {
  std::lock_guard lock(reasons_mutex_);
  misses_.fetch_add(1, std::memory_order_relaxed);
  last_miss_reason_ = std::move(reason);
}

void StepCounters::opaque(size_t calls, const std::string& nodes) {
  if (calls == 0) return;
  opaque_calls_.fetch_add(calls, std::memory_order_relaxed);
  std::lock_guard lock(reasons_mutex_);
  if (last_opaque_nodes_ != nodes) last_opaque_nodes_ = nodes;
}

void StepCounters::fall_back(std::string reason) {
  std::lock_guard lock(reasons_mutex_);
  fallbacks_.fetch_add(1, std::memory_order_relaxed);
  last_fallback_reason_ = std::move(reason);
}

void StepCounters::reduced(size_t buckets, size_t overlapped) {
  reduced_.store(buckets, std::memory_order_relaxed);
  overlapped_.store(overlapped, std::memory_order_relaxed);
}

CompiledBackwardStats StepCounters::read() const {
  CompiledBackwardStats s;
  s.hits = hits_.load(std::memory_order_relaxed);
  s.checked_hits = checked_hits_.load(std::memory_order_relaxed);
  s.buckets_reduced = reduced_.load(std::memory_order_relaxed);
  s.buckets_overlapped = overlapped_.load(std::memory_order_relaxed);
  s.opaque_calls = opaque_calls_.load(std::memory_order_relaxed);
  std::lock_guard lock(reasons_mutex_);  // a count and its reason are read as one
  s.misses = misses_.load(std::memory_order_relaxed);
  s.eager_fallbacks = fallbacks_.load(std::memory_order_relaxed);
  s.last_miss_reason = last_miss_reason_;
  s.last_fallback_reason = last_fallback_reason_;
  s.last_opaque_nodes = last_opaque_nodes_;
  return s;
}

}  // namespace ca::detail
