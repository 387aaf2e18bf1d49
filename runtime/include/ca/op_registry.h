#pragma once
/// @file
/// The op registry: op name -> the node's functional form and its packed-args schema, exactly
/// as upstream hands them to `PyCompilerInterface::bind_function`. The only process-global state
/// of ca-replay: filled once by harvesting every built-in autograd node, then read-mostly
/// (trainers may add custom functions).

#include <ATen/core/jit_type.h>
#include <torch/csrc/autograd/node.h>

#include <cstddef>
#include <memory>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace ca {

/// `variable_list(const variable_list& grads, const ivalue_list& packed_args)`.
using FunctionalFn = torch::autograd::functional_apply_t;

/// One resolved op.
struct OpEntry {
  std::string name;                 ///< e.g. "MulBackward0"
  FunctionalFn fn;                  ///< the node's `<Op>_apply_functional_ivalue`
  std::vector<at::TypePtr> schema;  ///< type of each packed arg, in order
  bool is_custom_function = false;  ///< a `torch::autograd::Function<T>` registered by a trainer
  /// Length of the `needs_input_grad` flags the function unpacks first (into a fixed-size array,
  /// without a bounds check), or -1 when unknown. Checked when a graph is loaded.
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

/// Process-wide op registry. Thread-safe.
class OpRegistry {
 public:
  /// The registry, harvested on first call (tens of milliseconds, once per process). Must not be
  /// first called while another `PyCompilerInterface` is installed (e.g. inside Python compiled
  /// autograd): upstream binds each node type's function only once per process.
  static OpRegistry& global();

  /// The entry for `name`. Throws OpNotFoundError naming the op when it is unknown.
  const OpEntry& get(const std::string& name) const;
  /// The entry for `name`, or nullptr. The pointer stays valid for the life of the process.
  const OpEntry* find(const std::string& name) const;
  /// Adds an entry (custom functions, ops bound during capture). Returns false, changing
  /// nothing, when the name is already registered: entries are immutable once added.
  bool add(OpEntry entry);
  /// Every registered name, sorted.
  std::vector<std::string> names() const;
  /// The result of the start-up harvest.
  const HarvestReport& harvest_report() const { return report_; }

  OpRegistry(const OpRegistry&) = delete;
  OpRegistry& operator=(const OpRegistry&) = delete;

 private:
  OpRegistry() = default;

  mutable std::shared_mutex mutex_;
  std::unordered_map<std::string, std::unique_ptr<OpEntry>> entries_;
  HarvestReport report_;
};

}  // namespace ca
