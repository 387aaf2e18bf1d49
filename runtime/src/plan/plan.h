// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The execution plan: an immutable, per-graph form of the graph in which everything that does
// not depend on the inputs' values was done at load (ops bound, reference paths computed,
// provably no-op validate_outputs removed, last uses known). Per-run state lives in a Frame.

#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

#include "ca/graph.h"
#include "load/op_binding.h"
#include "load/verify.h"
#include "plan/compact_vector.h"

namespace ca::detail {

/// A step's value ids, up to two inline: a million-step plan makes no heap block for most.
using IdList = CompactVector<ValueId, 2>;

/// Where a value goes inside a node's packed args on each run: args[arg], then index by index
/// through nested lists and tuples.
struct SlotPath {
  static constexpr size_t kMaxDepth = 4;
  ValueId value = kNoValue;
  uint32_t arg = 0;
  uint8_t depth = 0;  ///< number of indices in `path`; 0 = the arg itself
  bool is_symint = false;
  std::array<uint32_t, kMaxDepth> path{};
};

/// A functional or aten call with its packed-args template.
/// Args with references inside a dict, rebuilt per run (rare: boxed in their CallStep).
struct RebuiltArgs {
  std::vector<std::pair<uint32_t, uint32_t>> args;  ///< (packed arg j, its record in `pool`)
  ArgPool pool;                                     ///< the args, value ids mapped
};

/// A functional or aten call with its packed-args template.
struct CallStep {
  const OpEntry* op = nullptr;                      ///< functional
  std::unique_ptr<const c10::OperatorHandle> aten;  ///< aten
  std::vector<c10::IValue> args;                    ///< template; frames own filled copies
  std::vector<SlotPath> slots;
  std::unique_ptr<const RebuiltArgs> rebuilt;  ///< null when every reference has a slot
  CallCheck check;  ///< functional ops that trust a grad's rank or a saved tensor's values
  /// A built-in op whose outputs nobody sees after the replay, or that makes fresh tensors an
  /// accumulate_grad at most steals: it runs without view tracking (exec/below_autograd.h;
  /// mark_untracked_views in plan.cpp says why that changes nothing a caller can see).
  bool untracked_views = false;
};
/// A validate_outputs that could not be proven a no-op at load.
struct ValidateStep {
  MetadataList metadata;
};
struct AccumulateStep {};
struct AccumulateGradStep {
  bool has_post_hooks = false;
  bool steal = false;  ///< the grad is dead after this step: AccumulateGrad may steal it
};

/// A live autograd node, called through the run's OpaqueCalls.
struct OpaqueStep {
  uint32_t index = 0;  ///< its rank among the graph's opaque nodes (OpaqueCalls::call)
};

using StepPayload = std::variant<CallStep, ValidateStep, AccumulateStep, AccumulateGradStep,
                                 BoxedGeometry, CopySlicesFlags, OpaqueStep>;

/// validate_outputs / copy_slices_prologue args that hold symbolic sizes (graphs exported with
/// dynamic shapes), value ids mapped: the payload is rebound from them on each run.
struct SymbolicArgs {
  ArgPool pool;
  ArgRange args;
};

struct Step {
  uint32_t node = 0;  ///< index of the graph node it runs
  /// The name a profiler shows for this step (trace_name() in plan.cpp), kept once per distinct
  /// name in Plan::trace_names: a million steps of one op share one string.
  const std::string* trace_name = nullptr;
  // Value ids, up to two inline (IdList): a million-step plan makes no heap block for most.
  IdList inputs;
  IdList outputs;
  IdList frees;  ///< values dead once this step ran
  StepPayload payload;
  std::unique_ptr<const SymbolicArgs> symbolic_args;  ///< null for most steps (boxed: rare)

  ArgRefs symbolic() const { return symbolic_args->pool.refs(symbolic_args->args); }
};

/// Counters of what load did, for reports and tests.
struct PlanStats {
  size_t validates_elided = 0;
  size_t meta_calls = 0;      ///< functional ops run on meta tensors
  size_t meta_memo_hits = 0;  ///< inferences answered from the memo
  size_t meta_unknown = 0;    ///< functional nodes whose outputs stayed unknown
  SchemaReport schemas;       ///< the graph's op schemas against the registry
};

struct Plan {
  Plan() = default;
  Plan(Plan&&) = default;  // moving keeps trace_names' strings where the steps' views point
  Plan& operator=(Plan&&) = default;
  Plan(const Plan&) = delete;  // a copy's steps would view the original's trace_names
  Plan& operator=(const Plan&) = delete;
  ~Plan() = default;

  Graph graph;
  std::vector<Step> steps;
  std::unordered_set<std::string> trace_names;  ///< what Step::trace_name views
  std::vector<ValueId> outputs;                 ///< graph outputs after aliasing
  std::vector<ValueId> input_frees;             ///< inputs no step reads
  std::vector<size_t> grad_targets;             ///< graph inputs that accumulate_grad writes
  size_t opaque_nodes = 0;  ///< OpaqueStep count (ExecutorOptions::opaque_nodes)
  PlanStats stats;
  int64_t max_tensor_elements = 0;  ///< ExecutorOptions::max_tensor_elements
};

/// Plans a verified graph. Refuses nothing: what is wrong with a graph, verify() found.
Plan build_plan(VerifiedGraph verified);

}  // namespace ca::detail
