// SPDX-License-Identifier: BSD-3-Clause
// Meta inference: run each functional op once on meta tensors, memoized by op, input metadata
// and constant args, so a network of repeated layers costs one call per distinct layer.
#include "plan/meta_infer.h"

#include <ATen/ATen.h>
#include <c10/core/InferenceMode.h>
#include <torch/csrc/autograd/grad_mode.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <unordered_map>

#include "append_bytes.h"
#include "arg_convert.h"
#include "guards/validate_check.h"

namespace ca::detail {
namespace {

// Distinct meta calls per load (repeats are memoized): about 10 ms at most, so that loading stays
// fast; past it, values stay unknown. A count, not a clock, so that what is elided never depends
// on how busy the machine is.
constexpr size_t kMaxMetaCalls = 512;

struct ValueMeta {
  enum class State : uint8_t { kUnknown, kUndefined, kKnown };
  State state = State::kUnknown;
  c10::ScalarType dtype = c10::ScalarType::Float;
  std::vector<int64_t> sizes;

  static ValueMeta undefined() { return {State::kUndefined, {}, {}}; }
  bool known() const { return state == State::kKnown; }
};
using Outputs = std::optional<std::vector<ValueMeta>>;  // nullopt: the op failed on meta
/// One meta call's result: its outputs, and what they share with what it read.
struct Inferred {
  Outputs outputs;
  OutputSharing sharing = OutputSharing::kUnknown;
};

// Every defined tensor in `v` (packed args nest tensors in lists, tuples and dicts).
void collect_tensors(const c10::IValue& v, std::vector<at::Tensor>& out) {
  v.visit([&out](const c10::IValue& sub) {
    if (sub.isTensor() && sub.toTensor().defined()) out.push_back(sub.toTensor());
    return false;  // into every container
  });
}

// What the outputs share with `read` and with each other. Each tensor read is made on its own
// here, so sharing a storage means the op returned it, or a view or alias of it; a version
// counter that moved means an in-place write, which view tracking counts.
OutputSharing sharing_of(const std::vector<at::Tensor>& outs, const std::vector<at::Tensor>& read,
                         const std::vector<int64_t>& read_versions) {
  OutputSharing s = OutputSharing::kFresh;
  for (size_t k = 0; k < read.size(); ++k) {
    if (read[k]._version() != read_versions[k]) return OutputSharing::kViewsOrWrites;
  }
  for (size_t i = 0; i < outs.size(); ++i) {
    const at::Tensor& out = outs[i];
    // An output without storage (sparse, nested) is not looked into: taken as a view.
    if (!out.has_storage()) return OutputSharing::kViewsOrWrites;
    bool passed_on = false;
    for (const at::Tensor& r : read) {
      if (out.is_same(r)) {
        passed_on = true;
      } else if (out.is_alias_of(r)) {
        return OutputSharing::kViewsOrWrites;
      }
    }
    if (passed_on) {
      s = OutputSharing::kPassesReads;
      continue;
    }
    if (out._version() != 0) return OutputSharing::kViewsOrWrites;
    for (size_t j = 0; j < i; ++j) {
      if (!out.is_same(outs[j]) && outs[j].has_storage() && out.is_alias_of(outs[j])) {
        return OutputSharing::kViewsOrWrites;
      }
    }
  }
  return s;
}

// Ops may warn about meta tensors; load stays silent.
class QuietWarnings : public c10::WarningHandler {
 public:
  void process(const c10::Warning&) override {}
};

// Memo keys are compared, never read: fixed-size fields go in as their bytes, strings with their
// length first, so that no two different calls spell the same key.
void append_meta(const ValueMeta& m, std::string& key) {
  append_bytes(key, m.state);
  if (!m.known()) return;
  append_bytes(key, m.dtype);
  append_bytes(key, m.sizes.size());
  for (int64_t s : m.sizes) append_bytes(key, s);
}

class Inferrer {
 public:
  Inferrer(const Graph& g, const std::vector<BoundNode>& bound)
      : g_(g), bound_(bound), metas_(static_cast<size_t>(g.num_values)) {
    result_.validate_is_noop.assign(g.nodes.size(), false);
    result_.output_sharing.assign(g.nodes.size(), OutputSharing::kUnknown);
  }

  MetaInference run() {
    if (!init_inputs()) return result_;
    QuietWarnings quiet;
    c10::WarningUtils::WarningHandlerGuard guard(&quiet);
    at::NoGradGuard no_grad;
    c10::InferenceMode not_inference(false);  // meta tensors count versions (sharing_of)
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = g_.nodes[i];
      if (n.kind == NodeKind::kFunctional) {
        functional(i, n, std::get<OpCall>(bound_[i]));
      } else if (n.kind == NodeKind::kValidateOutputs) {
        result_.validate_is_noop[i] = validate(n, std::get<MetadataList>(bound_[i]));
      } else if (n.kind == NodeKind::kAccumulate) {
        accumulate(n);
      }  // other kinds leave their outputs unknown
    }
    return result_;
  }

 private:
  // Known metadata for tensor inputs, all on one device (else nothing is inferred).
  bool init_inputs() {
    for (size_t k = 0; k < g_.inputs.size(); ++k) {
      const GraphInput& in = g_.inputs[k];
      if (in.kind != GraphInput::Kind::kTensor) continue;  // value unchecked: stays unknown
      if (device_ && *device_ != in.meta.device) return false;
      device_ = in.meta.device;
      const auto& sizes = in.meta.sizes;
      if (std::find(sizes.begin(), sizes.end(), kDynamicSize) != sizes.end()) continue;
      metas_[k] = {ValueMeta::State::kKnown, in.meta.dtype, sizes};
    }
    return device_.has_value();
  }

  const ValueMeta& meta_of(ValueId v) const {
    static const ValueMeta kUndefined = ValueMeta::undefined();
    return v == kNoValue ? kUndefined : metas_[static_cast<size_t>(v)];
  }

  // Appends the arg tree to `key`; false when it holds a symbolic size or an unknown value.
  bool append_arg(const ArgRef& a, std::string& key) const {
    append_bytes(key, a.kind());
    append_bytes(key, a.type().kind);
    switch (a.kind()) {
      case Arg::Kind::kSymInt:
        return false;  // its value is not checked at bind: shapes could differ
      case Arg::Kind::kTensor:
        if (meta_of(a.ref()).state == ValueMeta::State::kUnknown) return false;
        append_meta(meta_of(a.ref()), key);
        return true;
      case Arg::Kind::kDouble:
        append_bytes(key, a.d());
        return true;
      case Arg::Kind::kComplex:
        append_bytes(key, a.c());
        return true;
      default:
        append_bytes(key, a.i());
        append_bytes(key, a.b());
        append_bytes(key, a.device_index());
        append_bytes(key, a.s().size());
        key += a.s();
        append_bytes(key, a.items().size());
        for (ArgRef item : a.items()) {
          if (!append_arg(item, key)) return false;
        }
        return true;
    }
  }

  at::Tensor meta_tensor(ValueId v) const {
    const ValueMeta& m = meta_of(v);
    if (!m.known()) return at::Tensor();
    return at::empty(m.sizes, at::TensorOptions().dtype(m.dtype).device(at::kMeta));
  }

  c10::ArrayRef<ValueId> inputs_of(const Node& n) const { return g_.ids(n.inputs); }
  c10::ArrayRef<ValueId> outputs_of(const Node& n) const { return g_.ids(n.outputs); }

  Inferred call_on_meta(const Node& n, const OpCall& call) {
    if (result_.meta_calls >= kMaxMetaCalls) return {};
    ++result_.meta_calls;
    try {
      torch::autograd::variable_list grads;
      for (ValueId v : inputs_of(n)) grads.push_back(meta_tensor(v));
      std::vector<c10::IValue> args;
      auto tensor_of = [this](ValueId v) { return meta_tensor(v); };
      auto int_of = [](ValueId) -> int64_t { return 0; };  // never reached: refused in the key
      for (ArgRef a : g_.args(n)) args.push_back(ivalue_from_arg(a, tensor_of, int_of));
      if (call.check) call.check(grads, args);  // the op trusts what the check checks
      std::vector<at::Tensor> read;
      for (const at::Tensor& t : grads) collect_tensors(t, read);
      for (const c10::IValue& a : args) collect_tensors(a, read);
      std::vector<int64_t> read_versions;
      read_versions.reserve(read.size());
      for (const at::Tensor& r : read) read_versions.push_back(r._version());
      Inferred result{std::vector<ValueMeta>(), OutputSharing::kUnknown};
      std::vector<at::Tensor> outs;
      for (const at::Tensor& t : call.op->fn(grads, args)) {
        if (!t.defined()) {
          result.outputs->push_back(ValueMeta::undefined());
          continue;
        }
        outs.push_back(t);
        if (t.is_meta() && t.layout() == c10::kStrided && !t.is_nested()) {
          result.outputs->push_back({ValueMeta::State::kKnown, t.scalar_type(), t.sizes().vec()});
        } else {
          result.outputs->emplace_back();
        }
      }
      result.sharing = sharing_of(outs, read, read_versions);
      return result;
    } catch (const std::exception&) {
      return {};
    }
  }

  void functional(size_t i, const Node& n, const OpCall& call) {
    Outputs out;
    std::string& key = key_;  // one buffer for every node's key
    key.assign(reinterpret_cast<const char*>(&n.op), sizeof n.op);  // names are this graph's
    bool inferable = !call.op->is_custom_function;  // user code may not expect meta tensors
    for (ValueId v : inputs_of(n)) {
      inferable = inferable && meta_of(v).state != ValueMeta::State::kUnknown;
      append_meta(meta_of(v), key);
    }
    for (ArgRef a : g_.args(n)) inferable = inferable && append_arg(a, key);
    if (inferable) {
      auto it = memo_.find(key);
      if (it != memo_.end()) {
        ++result_.memo_hits;
      } else {
        it = memo_.emplace(key, call_on_meta(n, call)).first;
      }
      out = it->second.outputs;
      result_.output_sharing[i] = it->second.sharing;
    }
    // Another count than the node declares is the run's to report (run_step.cpp), by name.
    if (!out || out->size() != outputs_of(n).size()) {
      ++result_.unknown;
      return;
    }
    for (size_t k = 0; k < out->size(); ++k) set(outputs_of(n)[k], (*out)[k]);
  }

  // Outputs get what validate_outputs would make of the inputs; true when it provably changes
  // nothing (so the node can be elided).
  bool validate(const Node& n, const MetadataList& metadata) {
    if (has_refs(g_.args(n).at(0))) {  // symbolic sizes (read as 0 at load): nothing is known
      for (ValueId v : outputs_of(n)) set(v, ValueMeta());
      return false;
    }
    bool noop = true;
    for (size_t k = 0; k < inputs_of(n).size(); ++k) {
      const ValueMeta in = meta_of(inputs_of(n)[k]);
      if (!metadata[k] || in.state == ValueMeta::State::kUndefined) {
        set(outputs_of(n)[k], in);
        continue;
      }
      const auto& md = *metadata[k];
      if (in.known() && metadata_accepts(md, in.dtype, c10::fromIntArrayRefSlow(in.sizes),
                                         c10::kStrided, *device_, false)) {
        set(outputs_of(n)[k], in);
        continue;
      }
      noop = false;
      set(outputs_of(n)[k], ValueMeta());
    }
    return noop;
  }

  void accumulate(const Node& n) {
    const ValueMeta& a = meta_of(inputs_of(n)[0]);
    const ValueMeta& b = meta_of(inputs_of(n)[1]);
    if (a.state == ValueMeta::State::kUndefined) return set(outputs_of(n)[0], b);
    if (b.state == ValueMeta::State::kUndefined) return set(outputs_of(n)[0], a);
    const bool same = a.known() && b.known() && a.dtype == b.dtype && a.sizes == b.sizes;
    set(outputs_of(n)[0], same ? a : ValueMeta());
  }

  void set(ValueId v, ValueMeta m) {
    if (v != kNoValue) metas_[static_cast<size_t>(v)] = std::move(m);
  }

  const Graph& g_;
  const std::vector<BoundNode>& bound_;
  std::string key_;
  std::vector<ValueMeta> metas_;
  std::optional<c10::Device> device_;
  std::unordered_map<std::string, Inferred> memo_;
  MetaInference result_;
};

}  // namespace

MetaInference infer_metas(const Graph& graph, const std::vector<BoundNode>& bound) {
  return Inferrer(graph, bound).run();
}

}  // namespace ca::detail
