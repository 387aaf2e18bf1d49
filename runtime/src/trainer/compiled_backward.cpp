// SPDX-License-Identifier: BSD-3-Clause
#include "ca/compiled_backward.h"

#include <torch/csrc/autograd/autograd.h>

#include <functional>
#include <mutex>

#include "ca/error.h"
#include "ca/op_registry.h"
#include "capture/capture_walk.h"
#include "capture/graph_walk.h"
#include "distributed/grad_reducer.h"
#include "trainer/backward_access.h"
#include "trainer/engine_task.h"
#include "trainer/graph_cache.h"
#include "trainer/live_nodes.h"
#include "trainer/step_check.h"
#include "trainer/step_counters.h"
#include "trainer/step_key.h"

namespace ca {
namespace {

// What of a call the cached graph depends on besides its nodes: retain_graph (it decides what
// the replay frees) and the gradients it taps. create_graph never reaches the cache.
std::string options_text(const BackwardOptions& o, const std::string& taps_key = {}) {
  return (o.retain_graph ? "retain_graph;" : "") + taps_key;
}

// The engine's output edges for grad(inputs): a non-leaf's grad_fn slot, a leaf's accumulator
// (none when nothing in the graph uses the leaf: its gradient is then undefined).
torch::autograd::edge_list output_edges(const std::vector<at::Tensor>& inputs) {
  torch::autograd::edge_list edges;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const at::Tensor& t = inputs[i];
    if (!t.defined() || !t.requires_grad()) {
      throw CaptureError("grad(): inputs[" + std::to_string(i) + "] does not require grad");
    }
    if (t.grad_fn()) {
      edges.push_back(torch::autograd::impl::gradient_edge(t));
    } else {
      edges.emplace_back(torch::autograd::impl::try_get_grad_accumulator(t), 0);
    }
  }
  return edges;
}

// Feeds each retain_grad hook the gradient the replay tapped for it: the hook writes the
// non-leaf tensor's .grad, as eager runs it before the node.
void run_retain_hooks(const detail::GraphWalk& walk, const std::vector<at::Tensor>& taps) {
  for (size_t t = walk.grad_outputs; t < walk.taps.size(); ++t) {
    const detail::GradTap& tap = walk.taps[t];
    torch::autograd::variable_list grads(tap.input_nr + 1);
    grads[tap.input_nr] = taps[t];
    (*tap.retain_hook)(grads);
  }
}

// Whether this thread is inside a step (see BackwardAccess::in_step).
thread_local bool stepping = false;

// Marks the thread as stepping for a scope; nests.
class SteppingScope {
 public:
  SteppingScope() : was_(stepping) { stepping = true; }
  ~SteppingScope() { stepping = was_; }
  SteppingScope(const SteppingScope&) = delete;
  SteppingScope& operator=(const SteppingScope&) = delete;

 private:
  bool was_;
};

}  // namespace

struct CompiledBackward::Impl {
  CompiledBackwardOptions options;
  detail::StepCounters counters;
  std::unique_ptr<detail::GraphCache> cache;
  /// With data_parallel: every rank must run its collectives in one order, so steps that
  /// average gradients take turns.
  std::mutex reducer_mutex;
  std::unique_ptr<detail::GradReducer> reducer;

  void note_reduced() { counters.reduced(reducer->launched(), reducer->launched_early()); }
};

CompiledBackward::CompiledBackward(CompiledBackwardOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  impl_->cache = std::make_unique<detail::GraphCache>(impl_->options.cache_size);
  if (impl_->options.data_parallel) {
    impl_->reducer = std::make_unique<detail::GradReducer>(impl_->options.data_parallel);
  }
}

CompiledBackward::~CompiledBackward() = default;

CompiledBackwardStats CompiledBackward::stats() const {
  CompiledBackwardStats s = impl_->counters.read();
  s.cached_graphs = impl_->cache->size();
  return s;
}

void CompiledBackward::clear() { impl_->cache->clear(); }

std::vector<at::Tensor> CompiledBackward::backward(const std::vector<at::Tensor>& roots,
                                                   const std::vector<at::Tensor>& grads,
                                                   BackwardOptions options) {
  auto eager = [&] {
    torch::autograd::backward(roots, grads, options.retain_graph, options.create_graph);
    return std::vector<at::Tensor>{};
  };
  return detail::BackwardAccess::step(
      *this, [&] { return detail::make_root(roots, grads); }, {}, options, eager,
      /*writes_grads=*/true);
}

std::vector<at::Tensor> CompiledBackward::grad(const std::vector<at::Tensor>& outputs,
                                               const std::vector<at::Tensor>& inputs,
                                               const std::vector<at::Tensor>& grad_outputs,
                                               GradOptions options) {
  auto eager = [&] {
    return torch::autograd::grad(outputs, inputs, grad_outputs, options.retain_graph,
                                 options.create_graph, options.allow_unused);
  };
  const detail::WalkTargets targets{output_edges(inputs), /*accumulate_grad=*/false};
  std::vector<at::Tensor> result = detail::BackwardAccess::step(
      *this, [&] { return detail::make_root(outputs, grad_outputs); }, targets, options, eager,
      /*writes_grads=*/false);
  result.resize(inputs.size());  // a pruned grad() writes no .grad, but say so in code
  for (size_t i = 0; i < result.size() && !options.allow_unused; ++i) {
    if (!result[i].defined()) {
      throw CaptureError("grad(): no gradient reaches inputs[" + std::to_string(i) +
                         "] (it is not used in the graph); set allow_unused to get an undefined "
                         "tensor instead");
    }
  }
  return result;
}

namespace detail {

bool BackwardAccess::in_step() { return stepping; }

std::vector<at::Tensor> BackwardAccess::fall_back(CompiledBackward& cb, const std::string& reason,
                                                  const EagerFn& eager, bool writes_grads) {
  cb.impl_->counters.fall_back(reason);
  GradReducer* reducer = writes_grads ? cb.impl_->reducer.get() : nullptr;
  if (reducer == nullptr) return eager();
  // Every rank runs the same collectives whether it replays or not: all buckets, after.
  reducer->begin();
  std::vector<at::Tensor> out;
  try {
    out = eager();
  } catch (...) {
    reducer->abandon();
    throw;
  }
  reducer->finish();
  cb.impl_->note_reduced();
  return out;
}

std::vector<at::Tensor> BackwardAccess::step(CompiledBackward& cb, const RootFn& root_fn,
                                             const WalkTargets& targets, BackwardOptions options,
                                             const EagerFn& eager, bool writes_grads) {
  const bool nested = stepping;  // inside another step on this thread, which holds the turn
  const SteppingScope scope;
  CompiledBackward::Impl& s = *cb.impl_;
  auto fall_back = [&](const std::string& reason) {
    return BackwardAccess::fall_back(cb, reason, eager, writes_grads);
  };
  std::unique_lock<std::mutex> in_turn;  // data-parallel steps take turns (see reducer_mutex)
  if (writes_grads && s.reducer && !nested) in_turn = std::unique_lock(s.reducer_mutex);
  if (options.create_graph) {
    if (s.options.strict) throw CaptureError("create_graph=true: a backward of a backward");
    return fall_back("create_graph=true");
  }
  // Harvest (once) before a capture holds the process's compiler slot: harvest takes it too.
  OpRegistry::global();
  NodePtr root;
  try {
    root = root_fn();
  } catch (const CaptureError& e) {
    if (s.options.strict) throw;
    return fall_back(e.what());
  }
  // The steady state: the graphs used last, checked directly against the live one. Otherwise
  // (another graph, a changed fact, a graph the check cannot take) the full walk and key.
  std::shared_ptr<const CacheEntry> entry;
  StepCheck::Step checked;
  if (targets.outputs.empty()) {
    const std::string plain = options_text(options);
    for (std::shared_ptr<const CacheEntry>& last : s.cache->recent_checked(2)) {
      if (last->key.options == plain && last->check->matches(root, checked)) {
        entry = std::move(last);
        s.cache->touch(*entry);
        s.counters.hit(/*checked=*/true);
        break;
      }
    }
  }
  std::unique_ptr<GraphWalk> walk;
  std::vector<at::Tensor> inputs = std::move(checked.inputs);
  if (!entry) {
    try {
      walk = walk_from_root(root, /*keys=*/true, targets, NodeOrder::kEager, /*opaque=*/true);
    } catch (const CaptureError& e) {
      if (s.options.strict) throw;
      return fall_back(e.what());
    }
    StepKey key = step_key(*walk, options_text(options, walk->taps_key));
    const size_t hash = key.hash();
    entry = s.cache->find(key, hash);
    if (entry) {
      s.counters.hit(/*checked=*/false);
      inputs = std::move(walk->compiler.tensor_args.inputs);
    } else {
      // Capture leaves the autograd graph as it found it whatever it throws, and the executor is
      // made before anything is released: a graph refused at either point runs eagerly, untouched.
      try {
        CaptureResult cap = capture_walk(*walk);
        std::string reason = s.cache->miss_reason(key);
        ExecutorOptions executor_options = s.options.executor;
        executor_options.opaque_nodes = true;  // LiveNodes calls them
        auto made = std::make_shared<CacheEntry>(hash, std::move(key),
                                                 Executor(std::move(cap.graph), executor_options));
        if (s.reducer) made->grad_writes = grad_writes(made->executor);
        made->opaque_nodes = walk->opaque.size();
        made->opaque_description = describe_opaque(*walk);
        made->check = StepCheck::record(*walk, walk->compiler.tensor_args.inputs, made->key);
        s.cache->insert(made);
        entry = std::move(made);
        inputs = std::move(cap.inputs);
        s.counters.miss(std::move(reason));
      } catch (const ca::Error& e) {
        if (s.options.strict) throw;
        return fall_back(e.what());
      }
    }
    walk->compiler.tensor_args.inputs.clear();  // the replay's own references are in `inputs`
  }
  // Without retain_graph the executor holds the only references to the saved tensors, so each is
  // freed at its last use, as eager backward frees them. An opaque node needs its own until it
  // has run (LiveNodes releases them then).
  const std::vector<NodePtr>& order = walk ? walk->order : checked.order;
  const std::vector<uint32_t>& opaque = walk ? walk->opaque : entry->check->opaque();
  if (!options.retain_graph) {
    for (size_t i = 0, next = 0; i < order.size(); ++i) {
      if (next < opaque.size() && opaque[next] == i) {
        ++next;
      } else {
        order[i]->release_variables();
      }
    }
  }
  LiveNodes live(order, opaque, options.retain_graph);
  // The replay returns the tapped gradients (grad() outputs, then retain_grad's), then .grads.
  GradReducer* reducer = writes_grads ? s.reducer.get() : nullptr;
  RunObserver* observer = nullptr;
  if (reducer != nullptr) {
    reducer->begin();
    reducer->plan_launches(inputs, entry->grad_writes, live.leaves());
    observer = reducer->observer();
  }
  std::vector<at::Tensor> out;
  // retain_grad hooks write .grad inside the backward, as eager's do: before any final callback.
  const std::function<void()> replay = [&] {
    out = entry->executor.run_consuming(std::move(inputs), observer, &live);
    if (walk) run_retain_hooks(*walk, out);  // a checked step has no taps (StepCheck::record)
  };
  try {
    if (entry->opaque_nodes > 0) {  // live nodes run as the engine runs a node (engine_task.h)
      run_in_engine_task(replay, root, targets.outputs, targets.accumulate_grad,
                         options.retain_graph);
    } else {
      replay();
    }
  } catch (...) {
    if (reducer != nullptr) reducer->abandon();
    if (live.error()) std::rethrow_exception(live.error());  // a hook's own, as eager gives it
    throw;
  }
  if (reducer != nullptr) {
    reducer->finish();
    s.note_reduced();
  }
  s.counters.opaque(entry->opaque_nodes, entry->opaque_description);
  if (walk) {
    out.erase(out.begin() + static_cast<std::ptrdiff_t>(walk->grad_outputs),
              out.begin() + static_cast<std::ptrdiff_t>(walk->taps.size()));
  }
  return out;
}

}  // namespace detail
}  // namespace ca
