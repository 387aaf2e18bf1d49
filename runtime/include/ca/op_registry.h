// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file
/// The op registry, read-only: which autograd node types this runtime can replay, with the
/// packed-args schema each one reports to upstream's `bind_function`. Built once per process on
/// first use by harvesting every built-in node type of the installed torch (tens of ms), plus the
/// custom functions a trainer registers (ca/custom_function.h). The only process-global state of
/// ca-replay.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ca/graph.h"

namespace ca {

namespace detail {
struct RegistryAccess;
}  // namespace detail

/// What the registry knows of one op.
struct OpInfo {
  std::string name;                    ///< e.g. "MulBackward0"
  std::vector<std::string> arg_types;  ///< c10 type of each packed arg: "bool[]", "Tensor", ...
  std::vector<ArgType> types;          ///< the same types as IR ArgTypes (what a graph records)
  bool is_custom_function = false;     ///< registered by a trainer; its schema comes per call
  /// Length of the `needs_input_grad` flags the op unpacks first, or -1 when unknown.
  int64_t needs_input_grad_count = -1;
};

/// A node type that could not be resolved, and why.
struct OpMiss {
  std::string name;
  std::string reason;
};

/// What the start-up harvest found.
struct HarvestReport {
  size_t builtin_types = 0;  ///< generated node types found in Functions.h plus the extra ones
  size_t resolved = 0;       ///< of those, how many have a functional form
  std::vector<OpMiss> misses;
  double millis = 0.0;  ///< wall time the harvest took
};

/// Process-wide op registry. Thread-safe; built-in entries never change once harvested.
class OpRegistry {
 public:
  /// The registry, harvested on first call. Must not be first called while another
  /// `PyCompilerInterface` is installed (e.g. inside Python compiled autograd): upstream binds
  /// each node type's function only once per process, and the first binder owns it.
  static const OpRegistry& global();

  /// Whether `name` is registered (built-in or custom function).
  bool contains(const std::string& name) const;
  /// What is known of `name`. Throws OpNotFoundError naming the op when it is unknown.
  OpInfo info(const std::string& name) const;
  /// Every registered name, sorted.
  std::vector<std::string> names() const;
  /// The result of the start-up harvest.
  const HarvestReport& harvest_report() const;

  OpRegistry(const OpRegistry&) = delete;
  OpRegistry& operator=(const OpRegistry&) = delete;
  ~OpRegistry();

 private:
  OpRegistry();
  friend struct detail::RegistryAccess;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ca
