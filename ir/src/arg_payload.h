// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// How an ArgPool record's payload holds each kind's field (arg.cpp reads it, arg_pool.cpp writes
// it): ints and value ids as themselves, a double as its bits, a container's type index and item
// count as the low and high halves.

#include <cstdint>
#include <cstring>

#include "ca/arg.h"

namespace ca::detail {

inline uint64_t double_bits(double d) {
  uint64_t bits = 0;
  std::memcpy(&bits, &d, sizeof d);
  return bits;
}

inline double bits_double(uint64_t bits) {
  double d = 0;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

inline bool holds_int(Arg::Kind kind) {
  return kind == Arg::Kind::kInt || kind == Arg::Kind::kLayout || kind == Arg::Kind::kScalarType ||
         kind == Arg::Kind::kMemoryFormat || kind == Arg::Kind::kDevice;
}

inline bool holds_ref(Arg::Kind kind) {
  return kind == Arg::Kind::kTensor || kind == Arg::Kind::kSymInt;
}

inline uint32_t low(uint64_t payload) { return static_cast<uint32_t>(payload); }
inline uint32_t high(uint64_t payload) { return static_cast<uint32_t>(payload >> 32); }

}  // namespace ca::detail
