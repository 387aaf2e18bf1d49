// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Counts heap allocations (global operator new) per thread, and attributes each to the runtime
// or to an op through a RunObserver that marks when the thread is inside torch.

#include <cstddef>

#include "ca/executor.h"

namespace ca::bench {

/// Allocations made on this thread while counting was on.
struct AllocCounts {
  size_t runtime = 0;  ///< outside op_begin/op_end: the runtime's own
  size_t op = 0;       ///< inside op_begin/op_end: the ops'
};

/// Starts counting on this thread (counters reset).
void start_counting();
/// Stops counting on this thread and returns what was counted.
AllocCounts stop_counting();

/// Marks op time so that allocations inside it count as the op's.
class AllocAttribution : public RunObserver {
 public:
  void op_begin(size_t node) override;
  void op_end(size_t node) override;
};

}  // namespace ca::bench
