// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Counts heap bytes of every global operator new/delete in the process (the executable that
// links heap_counter.cpp replaces them), so a tool can report the peak a call reaches.

#include <cstddef>

namespace ca::bench {

/// Bytes allocated through operator new and not yet freed, as malloc_usable_size reports them
/// (malloc's rounding included, its 8-byte chunk headers not).
size_t heap_live_bytes();
/// Starts a measurement: the peak is reset to the bytes live now.
void heap_reset_peak();
/// Highest heap_live_bytes() since heap_reset_peak().
size_t heap_peak_bytes();
/// Number of operator new calls since the process started.
size_t heap_allocations();

}  // namespace ca::bench
