// SPDX-License-Identifier: BSD-3-Clause
// ca::enable(): every backward() of the process goes through one process-wide CompiledBackward.
//
// The seam is the default engine itself (set_default_engine_stub, the stub Python's engine
// installs the same way): every backward()/grad() calls Engine::get_default_engine().execute(),
// and ours replays it or hands the very same call to the engine that was there before. Not
// upstream's set_compiled_autograd: with that hook set, Engine::execute throws "Re-entrant into
// Compiled Autograd" whenever another thread is between the two counter updates it makes on its
// way into the hook (two threads' backwards starting at once, however rarely, end one of them),
// and swapping the hook parks a poison value that another thread's backward() asserts on.
#include <torch/csrc/autograd/engine.h>
#include <torch/csrc/autograd/functions/basic_ops.h>

#include <memory>
#include <mutex>
#include <utility>

#include "ca/compiled_backward.h"
#include "ca/op_registry.h"
#include "capture/graph_walk.h"
#include "torch_compat.h"
#include "trainer/backward_access.h"

namespace ca {
namespace {

using torch::autograd::edge_list;
using torch::autograd::Engine;
using torch::autograd::GraphTask;
using torch::autograd::InputBuffer;
using torch::autograd::variable_list;

// The process-wide CompiledBackward. The mutex guards only the pointers: a step copies the
// shared_ptr and runs without it, so steps of many threads run at once, and a step still
// running when disable() drops the engine finishes on (and counts into) the one it took.
struct Enabled {
  std::mutex mutex;
  std::shared_ptr<CompiledBackward> engine;
  /// The engine disable() dropped, its graphs cleared: its stats, steps still running on it
  /// included.
  std::shared_ptr<CompiledBackward> last;
};

Enabled& enabled() {
  static Enabled state;
  return state;
}

std::shared_ptr<CompiledBackward> current_engine() {
  Enabled& state = enabled();
  std::lock_guard lock(state.mutex);
  return state.engine;
}

// The default engine while ca::enable() has ever been called: replays what the enabled
// CompiledBackward takes, and hands everything else, unchanged, to the engine it replaced.
class ReplayingEngine final : public Engine {
 public:
  explicit ReplayingEngine(Engine& eager) : eager_(eager) {}

  variable_list execute(const edge_list& roots, const variable_list& inputs, bool keep_graph,
                        bool create_graph, bool accumulate_grad,
                        const edge_list& outputs) override {
    const auto eager = [&] {
      return eager_.execute(roots, inputs, keep_graph, create_graph, accumulate_grad, outputs);
    };
    // A backward() inside a step runs eagerly and counts nothing: the outer step is the one
    // counted. Inside means on the step's thread (a replayed custom function's, a reentrant one
    // in an eager fallback) or inside a node the eager engine runs on any thread (a hook's on a
    // device thread, whose step waits for it). A grad() with no inputs is the engine's to refuse.
    if (detail::BackwardAccess::in_step() || torch::autograd::get_current_graph_task_id() != -1 ||
        (!accumulate_grad && outputs.empty())) {
      return eager();
    }
    const std::shared_ptr<CompiledBackward> engine = current_engine();
    if (!engine) return eager();

    // As Engine::execute begins: the root grads checked (and cast or summed to the roots' metadata,
    // on our copy), with torch's own error for a wrong one.
    variable_list grads = inputs;
    torch::autograd::validate_outputs(roots, grads, [](const std::string& msg) { return msg; });
    compat::NodePtr root = compat::make_node<torch::autograd::GraphRoot>(roots, grads);
    const detail::WalkTargets targets{outputs, accumulate_grad};
    variable_list result = detail::BackwardAccess::step(
        *engine, [&] { return root; }, targets, BackwardOptions{keep_graph, create_graph}, eager,
        accumulate_grad);
    // The engine returns grad()'s gradients; a backward() returns nothing.
    if (accumulate_grad) return {};
    result.resize(outputs.size());
    return result;
  }

  c10::intrusive_ptr<at::ivalue::Future> execute_with_graph_task(
      const std::shared_ptr<GraphTask>& task, compat::NodePtr root, InputBuffer&& buffer) override {
    return eager_.execute_with_graph_task(task, std::move(root), std::move(buffer));
  }
  std::unique_ptr<torch::autograd::AnomalyMetadata> make_anomaly_metadata() override {
    return eager_.make_anomaly_metadata();
  }
  std::unique_ptr<torch::autograd::SavedVariableHooks> get_default_saved_variable_hooks() override {
    return eager_.get_default_saved_variable_hooks();
  }

 private:
  Engine& eager_;
};

// Made on the first enable() and never destroyed: backward() on any thread may reach it until
// the process ends, and its base holds no worker threads (it runs nothing itself).
Engine& replaying_engine() {
  static ReplayingEngine* const kEngine = new ReplayingEngine(Engine::get_default_engine());
  return *kEngine;
}

void install_replaying_engine() {
  static const bool kInstalled = [] {
    replaying_engine();
    torch::autograd::set_default_engine_stub([]() -> Engine& { return replaying_engine(); });
    return true;
  }();
  (void)kInstalled;
}

}  // namespace

void enable(CompiledBackwardOptions options) {
  install_replaying_engine();
  OpRegistry::global();  // harvest now, before the program's threads draw random numbers
  auto engine = std::make_shared<CompiledBackward>(std::move(options));
  std::shared_ptr<CompiledBackward> previous, dropped;
  {
    Enabled& state = enabled();
    std::lock_guard lock(state.mutex);
    previous = std::exchange(state.engine, std::move(engine));
    dropped = std::move(state.last);
  }
  // Destroyed (with their graphs) outside the lock every backward takes, unless a step still
  // runs on one.
}

void disable() {
  std::shared_ptr<CompiledBackward> last;
  {
    Enabled& state = enabled();
    std::lock_guard lock(state.mutex);
    if (!state.engine) return;
    state.last = std::move(state.engine);
    last = state.last;
  }
  last->clear();  // its graphs go now; a step still replaying one keeps that one until it ends
}

CompiledBackwardStats enabled_stats() {
  Enabled& state = enabled();
  std::shared_ptr<CompiledBackward> engine;
  {
    std::lock_guard lock(state.mutex);
    engine = state.engine ? state.engine : state.last;
  }
  return engine ? engine->stats() : CompiledBackwardStats{};
}

EnableGuard::EnableGuard(CompiledBackwardOptions options) { enable(std::move(options)); }
EnableGuard::~EnableGuard() { disable(); }

}  // namespace ca
