// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Counts CPU tensor memory: a c10 allocator that wraps the default one and tracks live and
// peak bytes, so that eager backward and replay are measured by the same rule.

#include <cstddef>

namespace ca::bench {

/// Installs the tracking allocator (once per process).
void install_memory_tracker();
/// Starts a measurement: the peak is reset to the bytes live now.
void reset_peak();
/// Peak bytes live since reset_peak(), minus the bytes live at reset.
size_t peak_bytes_since_reset();

}  // namespace ca::bench
