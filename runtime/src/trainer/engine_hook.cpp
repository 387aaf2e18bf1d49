// SPDX-License-Identifier: BSD-3-Clause
// ca::enable(): every backward() of the process goes through one process-wide CompiledBackward,
// through upstream's own seam for compiled autograd (Engine::set_compiled_autograd), which hands
// over the engine's GraphRoot and GraphTask instead of running them.
#include <ATen/ThreadLocalState.h>
#include <torch/csrc/autograd/engine.h>
#include <torch/csrc/autograd/functions/basic_ops.h>
#include <torch/csrc/autograd/graph_task.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "ca/compiled_backward.h"
#include "capture/graph_walk.h"
#include "trainer/backward_access.h"

namespace ca {
namespace {

using torch::autograd::edge_list;
using torch::autograd::Engine;
using torch::autograd::GraphTask;
using torch::autograd::variable_list;

// The process-wide engine; the hook serializes the calls of all threads on it.
struct Enabled {
  std::mutex mutex;
  std::unique_ptr<CompiledBackward> engine;
  CompiledBackwardStats last_stats;  ///< kept after disable()
  /// The thread inside a step (holding `mutex`), to tell a reentrant backward() from a replayed
  /// node (which must run eagerly: the step it is nested in holds the engine) from another
  /// thread's (which waits its turn).
  std::atomic<std::thread::id> stepping{};
};

Enabled& enabled() {
  static Enabled state;
  return state;
}

variable_list hook(const detail::NodePtr& root, const GraphTask& task, bool accumulate_grad,
                   const edge_list& outputs);

// Runs the engine's task the eager way: our hook is unset for the call (process-wide, so a
// backward() on another thread meanwhile also runs eagerly, which is correct, only slower).
variable_list run_eager(const detail::NodePtr& root, const GraphTask& task, bool create_graph,
                        bool accumulate_grad, const edge_list& outputs) {
  const auto* graph_root = dynamic_cast<const torch::autograd::GraphRoot*>(root.get());
  variable_list grads = graph_root != nullptr ? graph_root->outputs : variable_list();
  Engine::set_compiled_autograd(nullptr);
  struct Restore {  // unless disable() ran meanwhile (a call that raced it ends up here)
    ~Restore() {
      if (enabled().engine) Engine::set_compiled_autograd(&hook);
    }
  } restore;
  return Engine::get_default_engine().execute(root->next_edges(), grads, task.keep_graph_,
                                              create_graph, accumulate_grad, outputs);
}

variable_list hook(const detail::NodePtr& root, const GraphTask& task, bool accumulate_grad,
                   const edge_list& outputs) {
  Enabled& state = enabled();
  bool create_graph = false;
  {  // the engine runs nodes under the task's thread-local state: grad mode on = create_graph
    at::ThreadLocalStateGuard tls(task.thread_locals_);
    create_graph = c10::GradMode::is_enabled();
  }
  auto eager = [&] { return run_eager(root, task, create_graph, accumulate_grad, outputs); };
  if (state.stepping.load() == std::this_thread::get_id()) {
    // Reentrant: a replayed custom function's backward calls backward(); the outer step holds
    // the lock and counts nothing for it (its stats belong to the outer step's thread).
    return eager();
  }
  std::lock_guard lock(state.mutex);
  if (!state.engine) return eager();
  state.stepping.store(std::this_thread::get_id());
  struct Leave {
    Enabled& state;
    ~Leave() { state.stepping.store(std::thread::id()); }
  } leave{state};
  const detail::WalkTargets targets{outputs, accumulate_grad};
  BackwardOptions options{task.keep_graph_, create_graph};
  variable_list result = detail::BackwardAccess::step(
      *state.engine,
      [&] {
        return detail::walk_from_root(root, /*keys=*/true, targets, detail::NodeOrder::kEager);
      },
      options, eager, accumulate_grad);
  // The engine returns grad()'s gradients; a backward() returns nothing.
  if (accumulate_grad) return {};
  result.resize(outputs.size());
  return result;
}

}  // namespace

void enable(CompiledBackwardOptions options) {
  Enabled& state = enabled();
  std::lock_guard lock(state.mutex);
  state.engine = std::make_unique<CompiledBackward>(std::move(options));
  Engine::set_compiled_autograd(&hook);
}

void disable() {
  Enabled& state = enabled();
  std::lock_guard lock(state.mutex);
  Engine::set_compiled_autograd(nullptr);
  if (state.engine) state.last_stats = state.engine->stats();
  state.engine.reset();
}

CompiledBackwardStats enabled_stats() {
  Enabled& state = enabled();
  std::lock_guard lock(state.mutex);
  return state.engine ? state.engine->stats() : state.last_stats;
}

EnableGuard::EnableGuard(CompiledBackwardOptions options) { enable(std::move(options)); }
EnableGuard::~EnableGuard() { disable(); }

}  // namespace ca
