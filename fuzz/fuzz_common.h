// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Shared by the fuzz targets: what a target may throw, and the graph seal.
//
// A graph file carries an XXH3 checksum that random mutations almost never keep valid, so the
// graph targets take the bare FlatBuffer and seal it themselves, as a forger would: every input
// reaches the verifier, the decoder and the executor's checks, which are what is under test.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ca/error.h"
#include "checksum_seal.h"

namespace ca::fuzz {

/// The seal the tests use too (tests/checksum_seal.h, written apart from the serializer's own).
using test::sealed;

/// Graph inputs larger than this are not materialized by the replay target (not a finding).
inline constexpr int64_t kMaxInputElements = int64_t{1} << 16;
/// ExecutorOptions::max_tensor_elements of the replay target's runs.
inline constexpr int64_t kMaxStepElements = int64_t{1} << 26;

}  // namespace ca::fuzz
