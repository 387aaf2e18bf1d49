// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Attributes the heap counter's allocations (heap_counter.h) to the runtime or to an op: a
// RunObserver that marks when the replaying thread is inside torch.

#include "ca/executor.h"
#include "heap_counter.h"

namespace ca::bench {

class AllocAttribution : public RunObserver {
 public:
  void op_begin(size_t) override { set_in_op(true); }
  void op_end(size_t) override { set_in_op(false); }
};

}  // namespace ca::bench
