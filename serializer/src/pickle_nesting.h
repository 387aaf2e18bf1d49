// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// A pre-pass over a .pt archive's pickle that bounds what torch's Unpickler would build: its
// nesting (an IValue nested 200,000 deep overflows the stack when it is destroyed, which no
// check after unpickling can prevent), string lengths and memo ids (both sized allocations).

#include <cstddef>
#include <cstdint>

namespace ca::detail {

/// Deepest container nesting accepted in a tensor-list pickle. A list of tensors needs 4 (list,
/// tensor arguments tuple, size tuple); the rest is slack for other writers.
inline constexpr size_t kMaxPickleNesting = 64;

/// Walks the `size` pickle bytes at `data` opcode by opcode without building anything, tracking
/// how deep each value on the unpickler's stack is nested. Accepts exactly the protocol-2 opcodes
/// torch's Unpickler implements. Throws FormatError (byte offset, opcode and reason) for an
/// unknown opcode, an argument past the end, a stack or mark underflow, a memo id that skips ahead,
/// a container changed after it was put inside another (cycles), or nesting deeper than
/// `max_nesting`.
void check_pickle_nesting(const uint8_t* data, size_t size, size_t max_nesting = kMaxPickleNesting);

}  // namespace ca::detail
