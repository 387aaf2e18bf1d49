// SPDX-License-Identifier: BSD-3-Clause
// Builds the plan of a verified graph: infer metadata to elide validate_outputs nodes proven
// no-ops, precompute where each reference goes in the packed args, and compute last uses.
#include "plan/plan.h"

#include <algorithm>

#include "plan/meta_infer.h"
#include "registry/op_entry.h"

namespace ca::detail {
namespace {

// The name a profiler shows for a step. Eager's engine wraps every node it runs in a scope named
// "autograd::engine::evaluate_function: <node name>", so a replayed node is named the same way
// and users' trace tooling reads both; steps that eager runs inside a node or its input buffers
// (validate_outputs, sums, CopySlices' two halves, aten calls) are named by what they are.
std::string trace_name(const Graph& g, const Node& n) {
  static const std::string kEngine = "autograd::engine::evaluate_function: ";
  switch (n.kind) {
    case NodeKind::kFunctional:
    case NodeKind::kOpaque:  // the live node itself: eager's own scope name
      return kEngine + std::string(g.op(n));
    case NodeKind::kAccumulateGrad:
      return kEngine + "torch::autograd::AccumulateGrad";
    case NodeKind::kAten:
      return "ca::aten: " + std::string(g.op(n)) +
             (g.overload(n).empty() ? "" : "." + std::string(g.overload(n)));
    default:
      return std::string("ca::") + node_kind_name(n.kind);
  }
}

class Planner {
 public:
  explicit Planner(Plan& plan) : plan_(plan) {
    alias_.resize(static_cast<size_t>(plan.graph.num_values));
    for (size_t v = 0; v < alias_.size(); ++v) alias_[v] = static_cast<ValueId>(v);
  }

  void build(std::vector<BoundNode> bound, const MetaInference& inference) {
    const Graph& g = plan_.graph;
    // Sized once: growing by doubling would hold the old and new arrays of (large) steps at once,
    // the load's peak on a graph of a million nodes.
    const auto elided = static_cast<size_t>(
        std::count(inference.validate_is_noop.begin(), inference.validate_is_noop.end(), true));
    plan_.steps.reserve(g.nodes.size() - elided);
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const Node& n = g.nodes[i];
      if (inference.validate_is_noop[i]) {
        // Elided: its outputs are its inputs.
        const c10::ArrayRef<ValueId> ins = g.ids(n.inputs);
        const c10::ArrayRef<ValueId> outs = g.ids(n.outputs);
        for (size_t k = 0; k < outs.size(); ++k) {
          if (outs[k] != kNoValue) alias_[static_cast<size_t>(outs[k])] = map(ins[k]);
        }
        ++plan_.stats.validates_elided;
        continue;
      }
      plan_.steps.push_back(make_step(i, n, std::move(bound[i])));
    }
    for (ValueId v : g.outputs) plan_.outputs.push_back(map(v));
  }

 private:
  ValueId map(ValueId v) const { return v == kNoValue ? v : alias_[static_cast<size_t>(v)]; }

  Step make_step(size_t i, const Node& n, BoundNode bound) {
    Step s;
    s.node = static_cast<uint32_t>(i);
    const Graph& g = plan_.graph;
    s.trace_name = &*plan_.trace_names.insert(trace_name(g, n)).first;
    for (ValueId v : g.ids(n.inputs)) s.inputs.push_back(map(v));
    const c10::ArrayRef<ValueId> outs = g.ids(n.outputs);
    s.outputs = IdList(outs.begin(), outs.end());
    switch (n.kind) {
      case NodeKind::kFunctional:
      case NodeKind::kAten: {
        OpCall& call = std::get<OpCall>(bound);
        CallStep c;
        c.op = call.op;
        c.aten = std::move(call.aten);
        c.args = std::move(call.args);
        c.check = std::move(call.check);
        uint32_t j = 0;
        std::unique_ptr<RebuiltArgs> rebuilt;
        for (ArgRef a : plan_.graph.args(n)) add_arg_slots(a, j++, c, rebuilt);
        c.rebuilt = std::move(rebuilt);
        s.payload = std::move(c);
        break;
      }
      case NodeKind::kValidateOutputs:
        s.payload = ValidateStep{std::move(std::get<MetadataList>(bound))};
        add_symbolic_args(n, s);
        break;
      case NodeKind::kAccumulate:
        s.payload = AccumulateStep{};
        break;
      case NodeKind::kAccumulateGrad:
        s.payload = AccumulateGradStep{std::get<AccumulateGradFlags>(bound).has_post_hooks, false};
        break;
      case NodeKind::kCopySlicesPrologue:
        s.payload = std::move(std::get<BoxedGeometry>(bound));
        add_symbolic_args(n, s);
        break;
      case NodeKind::kCopySlicesEpilogue:
        s.payload = std::move(std::get<CopySlicesFlags>(bound));
        break;
      case NodeKind::kOpaque:
        s.payload = OpaqueStep{static_cast<uint32_t>(plan_.opaque_nodes++)};
        break;
    }
    return s;
  }

  void add_symbolic_args(const Node& n, Step& s) const {
    const ArgRefs args = plan_.graph.args(n);
    if (!std::any_of(args.begin(), args.end(), [](const ArgRef& a) { return has_refs(a); })) {
      return;
    }
    auto symbolic = std::make_unique<SymbolicArgs>();
    symbolic->args = remapped(symbolic->pool, args);
    s.symbolic_args = std::move(symbolic);
  }

  // Slots for every reference in arg `j`; args that hold references inside a dict (or deeper
  // than SlotPath allows) are rebuilt per run instead.
  void add_arg_slots(const ArgRef& a, uint32_t j, CallStep& c,
                     std::unique_ptr<RebuiltArgs>& rebuilt) const {
    std::vector<SlotPath> slots;
    SlotPath path;
    path.arg = j;
    if (collect(a, path, slots)) {
      c.slots.insert(c.slots.end(), slots.begin(), slots.end());
      return;
    }
    if (!rebuilt) rebuilt = std::make_unique<RebuiltArgs>();
    rebuilt->args.emplace_back(j, remapped(rebuilt->pool, a.alone()).first);
  }

  bool collect(const ArgRef& a, SlotPath& path, std::vector<SlotPath>& out) const {
    if (a.kind() == Arg::Kind::kTensor || a.kind() == Arg::Kind::kSymInt) {
      if (a.ref() == kNoValue) return true;
      SlotPath s = path;
      s.value = map(a.ref());
      s.is_symint = a.kind() == Arg::Kind::kSymInt;
      out.push_back(s);
      return true;
    }
    if (a.kind() == Arg::Kind::kDict) return !has_refs(a);
    uint32_t k = 0;
    for (ArgRef item : a.items()) {
      const uint32_t at = k++;
      if (!has_refs(item)) continue;
      if (path.depth == SlotPath::kMaxDepth) return false;
      path.path[path.depth++] = at;
      const bool ok = collect(item, path, out);
      --path.depth;
      if (!ok) return false;
    }
    return true;
  }

  // Copies `args` into `pool` with their value ids mapped.
  ArgRange remapped(ArgPool& pool, const ArgRefs& args) const {
    const ArgRange r = pool.append(args);
    for_each_ref(pool.refs(r), [&](const ArgRef& ref) {
      pool.set_ref(ref.index(), map(ref.ref()));
      return true;
    });
    return r;
  }

  Plan& plan_;
  std::vector<ValueId> alias_;
};

void collect_refs(const ArgRefs& args, std::vector<ValueId>& out) {
  for_each_ref(args, [&out](const ArgRef& ref) {
    out.push_back(ref.ref());
    return true;
  });
}

std::vector<ValueId> reads_of(const Step& s) {
  std::vector<ValueId> refs = s.inputs;
  if (s.symbolic_args) collect_refs(s.symbolic(), refs);
  if (const auto* c = std::get_if<CallStep>(&s.payload)) {
    for (const SlotPath& slot : c->slots) refs.push_back(slot.value);
    if (c->rebuilt) {
      for (const auto& [j, record] : c->rebuilt->args)
        collect_refs(c->rebuilt->pool.ref(record).alone(), refs);
    }
  }
  return refs;
}

// Each value is freed right after its last reader (or its producer, if nothing reads it); an
// accumulate_grad that is the last reader of its grad may let AccumulateGrad steal it.
void plan_frees(Plan& plan) {
  constexpr size_t kNever = SIZE_MAX;
  std::vector<size_t> last(static_cast<size_t>(plan.graph.num_values), kNever - 1);
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    for (ValueId v : plan.steps[i].outputs) {
      if (v != kNoValue) last[static_cast<size_t>(v)] = i;
    }
    for (ValueId v : reads_of(plan.steps[i])) {
      if (v != kNoValue) last[static_cast<size_t>(v)] = i;
    }
  }
  for (ValueId v : plan.outputs) {
    if (v != kNoValue) last[static_cast<size_t>(v)] = kNever;
  }
  for (size_t v = 0; v < last.size(); ++v) {
    if (last[v] == kNever - 1) {
      // An unread input; any other value never written here is an elided node's output.
      if (v < plan.graph.inputs.size()) plan.input_frees.push_back(static_cast<ValueId>(v));
    } else if (last[v] != kNever) {
      plan.steps[last[v]].frees.push_back(static_cast<ValueId>(v));
    }
  }
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    Step& s = plan.steps[i];
    auto* acc = std::get_if<AccumulateGradStep>(&s.payload);
    const ValueId grad = s.inputs.size() > 1 ? s.inputs[1] : kNoValue;
    if (acc != nullptr && grad != kNoValue) acc->steal = last[static_cast<size_t>(grad)] == i;
  }
}

// How far a value reaches, which decides what the step that makes it must do as eager does.
enum class Reach : uint8_t {
  kNone,     ///< nobody sees it after the replay
  kVersion,  ///< an accumulate_grad may steal it: .grad is a detached alias, sharing its counter
  kVisible,  ///< the caller or user code gets it: a graph output, or read by a custom function
             ///< or an aten call (kernels and user code may look at views and versions)
};

// Which built-in calls run without view tracking (ADInplaceOrView): those whose outputs nobody
// sees, and those whose outputs at most an accumulate_grad steals when meta inference saw them
// make no view of anything and write nothing in place (a new tensor's version counter is then
// its own and at 0, a grad passed on keeps its own, as with tracking). Every step passes its
// reach on to all it reads: a call may pass a read on at run time where it copied on meta
// tensors (a layout decides), validate_outputs, accumulate and copy_slices may pass a grad
// through, and custom functions and aten calls hand theirs to user code and kernels.
void mark_untracked_views(Plan& plan, const std::vector<OutputSharing>& sharing) {
  std::vector<Reach> reach(static_cast<size_t>(plan.graph.num_values), Reach::kNone);
  auto raise = [&reach](ValueId v, Reach r) {
    if (v != kNoValue) reach[static_cast<size_t>(v)] = std::max(reach[static_cast<size_t>(v)], r);
  };
  for (ValueId v : plan.outputs) raise(v, Reach::kVisible);
  for (auto it = plan.steps.rbegin(); it != plan.steps.rend(); ++it) {
    Reach out = Reach::kNone;
    for (ValueId v : it->outputs) {
      if (v != kNoValue) out = std::max(out, reach[static_cast<size_t>(v)]);
    }
    auto* call = std::get_if<CallStep>(&it->payload);
    if (call != nullptr && is_builtin_functional(call->op)) {
      const OutputSharing shares = sharing[it->node];
      const bool untracked_alike =
          shares == OutputSharing::kFresh || shares == OutputSharing::kPassesReads;
      call->untracked_views = out == Reach::kNone || (out == Reach::kVersion && untracked_alike);
      for (ValueId v : reads_of(*it)) raise(v, out);
      continue;
    }
    // Custom functions, aten calls and live nodes hand what they read to user code and kernels.
    const bool foreign = call != nullptr || std::holds_alternative<OpaqueStep>(it->payload);
    Reach in = foreign ? Reach::kVisible : out;
    if (std::holds_alternative<AccumulateGradStep>(it->payload)) in = std::max(in, Reach::kVersion);
    for (ValueId v : reads_of(*it)) raise(v, in);
  }
}

}  // namespace

Plan build_plan(VerifiedGraph verified) {
  Plan plan;
  plan.graph = std::move(verified.graph);
  plan.stats.schemas = std::move(verified.schemas);
  plan.max_tensor_elements = verified.max_tensor_elements;
  std::vector<BoundNode> bound = std::move(verified.bound);
  const MetaInference inference = infer_metas(plan.graph, bound);
  plan.stats.meta_calls = inference.meta_calls;
  plan.stats.meta_memo_hits = inference.memo_hits;
  plan.stats.meta_unknown = inference.unknown;
  Planner(plan).build(std::move(bound), inference);
  plan_frees(plan);
  mark_untracked_views(plan, inference.output_sharing);
  plan.grad_targets = grad_targets(plan.graph);
  return plan;
}

}  // namespace ca::detail
