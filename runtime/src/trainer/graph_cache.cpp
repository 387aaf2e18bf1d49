// SPDX-License-Identifier: BSD-3-Clause
#include "trainer/graph_cache.h"

#include <algorithm>
#include <mutex>

namespace ca::detail {

std::shared_ptr<const CacheEntry> GraphCache::find(const StepKey& key, size_t hash) const {
  std::shared_lock lock(mutex_);
  for (const std::shared_ptr<CacheEntry>& e : entries_) {
    if (e->hash == hash && e->key == key) {
      e->last_used.store(clock_.fetch_add(1, std::memory_order_relaxed) + 1,
                         std::memory_order_relaxed);
      return e;
    }
  }
  return nullptr;
}

std::vector<std::shared_ptr<const CacheEntry>> GraphCache::recent_checked(size_t n) const {
  std::shared_lock lock(mutex_);
  std::vector<std::shared_ptr<const CacheEntry>> out;
  for (const std::shared_ptr<CacheEntry>& e : entries_) {
    if (e->check) out.push_back(e);
  }
  const size_t kept = std::min(n, out.size());
  std::partial_sort(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(kept), out.end(),
                    [](const auto& a, const auto& b) {
                      return a->last_used.load(std::memory_order_relaxed) >
                             b->last_used.load(std::memory_order_relaxed);
                    });
  out.resize(kept);
  return out;
}

void GraphCache::touch(const CacheEntry& entry) const {
  entry.last_used.store(clock_.fetch_add(1, std::memory_order_relaxed) + 1,
                        std::memory_order_relaxed);
}

std::string GraphCache::miss_reason(const StepKey& key) const {
  std::shared_lock lock(mutex_);
  for (const std::shared_ptr<CacheEntry>& e : entries_) {
    if (e->key == key) return "the same graph was captured meanwhile on another thread";
  }
  const CacheEntry* closest = nullptr;
  size_t best = 0;
  for (const std::shared_ptr<CacheEntry>& e : entries_) {
    const size_t n = common_prefix(key, e->key);
    if (closest == nullptr || n > best) closest = e.get(), best = n;
  }
  return closest == nullptr ? "empty cache" : describe_difference(key, closest->key);
}

void GraphCache::insert(std::shared_ptr<CacheEntry> entry) {
  entry->last_used.store(clock_.fetch_add(1, std::memory_order_relaxed) + 1,
                         std::memory_order_relaxed);
  std::unique_lock lock(mutex_);
  auto same = std::find_if(entries_.begin(), entries_.end(),
                           [&](const auto& e) { return e->hash == entry->hash; });
  if (same != entries_.end()) {
    *same = std::move(entry);
    return;
  }
  if (entries_.size() >= capacity_) {
    auto oldest =
        std::min_element(entries_.begin(), entries_.end(), [](const auto& a, const auto& b) {
          return a->last_used.load(std::memory_order_relaxed) <
                 b->last_used.load(std::memory_order_relaxed);
        });
    *oldest = std::move(entry);
    return;
  }
  entries_.push_back(std::move(entry));
}

size_t GraphCache::size() const {
  std::shared_lock lock(mutex_);
  return entries_.size();
}

void GraphCache::clear() {
  std::unique_lock lock(mutex_);
  entries_.clear();
}

}  // namespace ca::detail
