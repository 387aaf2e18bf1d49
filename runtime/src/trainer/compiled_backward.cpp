#include "ca/compiled_backward.h"

#include <torch/csrc/autograd/autograd.h>

#include <list>
#include <unordered_map>

#include "ca/error.h"
#include "ca/op_registry.h"
#include "capture/capture_walk.h"
#include "capture/graph_walk.h"
#include "trainer/backward_access.h"
#include "trainer/step_key.h"

namespace ca {
namespace {

// A prepared graph and the key it was captured under.
struct CacheEntry {
  size_t hash = 0;
  detail::StepKey key;
  Executor executor;
};

std::string options_text(const BackwardOptions& o) {
  return o.retain_graph ? "retain_graph" : "";  // create_graph never reaches the cache
}

}  // namespace

struct CompiledBackward::Impl {
  CompiledBackwardOptions options;
  CompiledBackwardStats stats;
  std::list<CacheEntry> lru;  ///< most recently used first
  /// By key hash; a hit is confirmed by comparing the whole key (a collision is a miss that
  /// replaces the older entry).
  std::unordered_map<size_t, std::list<CacheEntry>::iterator> index;

  // The reason the new key misses: where it parts from the closest cached graph.
  std::string miss_reason(const detail::StepKey& key) const {
    const CacheEntry* closest = nullptr;
    size_t best = 0;
    for (const CacheEntry& e : lru) {
      const size_t n = detail::common_prefix(key, e.key);
      if (closest == nullptr || n > best) closest = &e, best = n;
    }
    return closest == nullptr ? "empty cache" : detail::describe_difference(key, closest->key);
  }

  Executor& insert(size_t hash, detail::StepKey key, Graph graph) {
    if (auto old = index.find(hash); old != index.end()) {
      lru.erase(old->second);
      index.erase(old);
    }
    lru.push_front(CacheEntry{hash, std::move(key), Executor(std::move(graph), options.executor)});
    index[hash] = lru.begin();
    while (lru.size() > std::max<size_t>(options.cache_size, 1)) {
      index.erase(lru.back().hash);
      lru.pop_back();
    }
    return lru.front().executor;
  }
};

CompiledBackward::CompiledBackward(CompiledBackwardOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
}

CompiledBackward::~CompiledBackward() = default;

const CompiledBackwardStats& CompiledBackward::stats() const { return impl_->stats; }

void CompiledBackward::clear() {
  impl_->index.clear();
  impl_->lru.clear();
}

std::vector<at::Tensor> CompiledBackward::backward(const std::vector<at::Tensor>& roots,
                                                   const std::vector<at::Tensor>& grads,
                                                   BackwardOptions options) {
  auto eager = [&] {
    torch::autograd::backward(roots, grads, options.retain_graph, options.create_graph);
  };
  return detail::BackwardAccess::step(
      *this, [&] { return detail::walk_graph(roots, grads, /*keys=*/true); }, options, eager);
}

namespace detail {

void BackwardAccess::fall_back(CompiledBackward& cb, const std::string& reason,
                               const std::function<void()>& eager) {
  ++cb.impl_->stats.eager_fallbacks;
  cb.impl_->stats.last_fallback_reason = reason;
  eager();
}

std::vector<at::Tensor> BackwardAccess::step(
    CompiledBackward& cb, const std::function<std::unique_ptr<GraphWalk>()>& walk_fn,
    BackwardOptions options, const std::function<void()>& eager) {
  CompiledBackward::Impl& s = *cb.impl_;
  auto fall_back = [&](const std::string& reason) {
    BackwardAccess::fall_back(cb, reason, eager);
    return std::vector<at::Tensor>{};
  };
  if (options.create_graph) {
    if (s.options.strict) throw CaptureError("create_graph=true: a backward of a backward");
    return fall_back("create_graph=true");
  }
  OpRegistry::global();  // harvest before any walk: it needs the process's compiler slot
  std::unique_ptr<GraphWalk> walk;
  try {
    walk = walk_fn();
  } catch (const CaptureError& e) {
    if (s.options.strict) throw;
    return fall_back(e.what());
  }
  StepKey key = step_key(*walk, options_text(options));
  const size_t hash = key.hash();
  Executor* executor = nullptr;
  std::vector<at::Tensor> inputs;
  if (auto it = s.index.find(hash); it != s.index.end() && it->second->key == key) {
    ++s.stats.hits;
    s.lru.splice(s.lru.begin(), s.lru, it->second);  // now the most recently used
    executor = &it->second->executor;
    inputs = walk->compiler.tensor_args.inputs;
  } else {
    CaptureResult cap;
    try {
      cap = capture_walk(*walk, /*release_variables=*/false);
    } catch (const CaptureError& e) {
      if (s.options.strict) throw;
      return fall_back(e.what());
    }
    ++s.stats.misses;
    s.stats.last_miss_reason = s.miss_reason(key);
    executor = &s.insert(hash, std::move(key), std::move(cap.graph));
    inputs = std::move(cap.inputs);
  }
  // Without retain_graph the executor holds the only references to the saved tensors, so each is
  // freed at its last use, as eager backward frees them.
  walk->compiler.tensor_args.inputs.clear();
  if (!options.retain_graph) {
    for (const NodePtr& fn : walk->order) fn->release_variables();
  }
  return executor->run_consuming(std::move(inputs));
}

}  // namespace detail
}  // namespace ca
