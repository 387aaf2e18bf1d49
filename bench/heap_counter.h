// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The measurement tools' one replacement of the global operator new/delete (heap_counter.cpp):
// while counting is on, it counts the calling thread's allocations and the bytes they hold, so
// a tool can report what one call allocates and the heap peak it reaches. Counters are
// thread-local plain integers: counting never allocates, threads do not contend, and a thread
// that is not counting pays one branch per call.

#include <cstddef>
#include <cstdint>

namespace ca::bench {

/// What the calling thread allocated since start_counting().
struct HeapCounts {
  size_t runtime = 0;  ///< operator new calls outside an op (see set_in_op)
  size_t op = 0;       ///< operator new calls inside an op
  /// Bytes allocated minus bytes freed on this thread, as malloc_usable_size reports them
  /// (malloc's rounding included, its chunk headers not); freeing older blocks lowers it.
  int64_t live = 0;
  int64_t peak = 0;  ///< highest `live`
};

/// Starts counting on this thread, from zero.
void start_counting();
/// Stops counting on this thread and returns what was counted.
HeapCounts stop_counting();
/// Marks whether this thread is inside an op (its allocations count as `op`).
void set_in_op(bool in_op);

}  // namespace ca::bench
