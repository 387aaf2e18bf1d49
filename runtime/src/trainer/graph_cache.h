// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The prepared graphs of one CompiledBackward, read by many threads at once: a hit takes a
// shared lock for the look-up only and runs its graph without any lock (a prepared graph is
// immutable; a run's state lives in its frame); a miss captures without any lock and takes the
// exclusive one only to insert. An entry evicted while a thread still replays it lives on until
// that replay ends.

#include <atomic>
#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <string>
#include <vector>

#include "ca/executor.h"
#include "distributed/grad_reducer.h"
#include "trainer/step_check.h"
#include "trainer/step_key.h"

namespace ca::detail {

/// A prepared graph and the key it was captured under. Immutable once cached, except for when
/// it was last used.
struct CacheEntry {
  CacheEntry(size_t h, StepKey k, Executor ex)
      : hash(h), key(std::move(k)), executor(std::move(ex)) {}
  size_t hash = 0;
  StepKey key;
  Executor executor;
  GradWrites grad_writes;                      ///< with data_parallel: where .grads are written
  std::unique_ptr<const StepCheck> check;      ///< null: every step walks (StepCheck::record)
  size_t opaque_nodes = 0;                     ///< live nodes each replay calls (LiveNodes)
  std::string opaque_description;              ///< their types and why (describe_opaque)
  mutable std::atomic<uint64_t> last_used{0};  ///< the cache's clock at its last use
};

class GraphCache {
 public:
  explicit GraphCache(size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}

  /// The entry whose key equals `key` (compared whole: equal hashes alone are a miss), marked
  /// as the most recently used; null when there is none.
  std::shared_ptr<const CacheEntry> find(const StepKey& key, size_t hash) const;
  /// Up to `n` entries that have a check, the most recently used (found or inserted) first:
  /// those a step checks directly before it walks (two: programs alternate two graphs, a GAN's
  /// or two losses').
  std::vector<std::shared_ptr<const CacheEntry>> recent_checked(size_t n) const;
  /// Marks `entry` as the most recently used.
  void touch(const CacheEntry& entry) const;
  /// Why `key` misses: where it parts from the closest cached key, or "empty cache".
  std::string miss_reason(const StepKey& key) const;
  /// Adds `entry`, replacing one of the same hash, else dropping the least recently used one
  /// past the capacity.
  void insert(std::shared_ptr<CacheEntry> entry);
  size_t size() const;
  void clear();

 private:
  size_t capacity_;
  mutable std::shared_mutex mutex_;
  std::vector<std::shared_ptr<CacheEntry>> entries_;  ///< at most capacity_; a few, so scanned
  mutable std::atomic<uint64_t> clock_{0};
};

}  // namespace ca::detail
