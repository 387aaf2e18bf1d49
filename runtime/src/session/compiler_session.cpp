// SPDX-License-Identifier: BSD-3-Clause
#include "session/compiler_session.h"

#include <pthread.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include "ca/error.h"
#include "leaf_lock.h"
#include "torch_compat.h"

namespace ca::detail {
namespace {

using torch::autograd::ivalue_list;

// Nodes only forward the py_compiler pointer; any non-null value serves in C++.
PyObject* session_py_compiler() {
  static char tag;
  return reinterpret_cast<PyObject*>(&tag);
}

[[noreturn]] void refuse(const std::string& what) {
  throw CaptureError("unexpected compiler call during this session: " + what);
}

// The interface upstream's nodes call; every call goes to the session's CompilerCalls.
class Forwarder final : public compat::CompilerInterfaceBase {
 public:
  explicit Forwarder(CompilerCalls& calls) : calls_(calls) {}

  std::string bind_function(PyObject*, const std::string& name,
                            torch::autograd::functional_apply_t fn, std::vector<at::TypePtr> schema,
                            bool is_custom_function, bool) const override {
    return calls_.bind_function(name, std::move(fn), std::move(schema), is_custom_function);
  }
  variable_list call_function(PyObject*, const char* method, const std::string& name,
                              const variable_list& grads, const ivalue_list& packed_args,
                              const c10::IValue& output_metadata) const override {
    if (std::string(method) != "apply_functional") {
      throw CaptureError(name + ": unsupported compiler call '" + method + "'");
    }
    return calls_.call_function(name, grads, packed_args, output_metadata);
  }
  variable_list call_copy_slices_prologue(PyObject*, const variable_list& grads,
                                          const at::TensorGeometry& base,
                                          const at::TensorGeometry& view) const override {
    return calls_.copy_slices_prologue(grads, base, view);
  }
  variable_list call_copy_slices_epilogue(PyObject*, const std::vector<bool>& needs_input_grad,
                                          const at::Tensor& result, const variable_list& res,
                                          const at::Tensor& grad_slice) const override {
    return calls_.copy_slices_epilogue(needs_input_grad, result, res, grad_slice);
  }
  at::Tensor call_unpack(PyObject*, std::optional<size_t> hook_id,
                         size_t hook_input_id) const override {
    return calls_.unpack_saved(hook_id, hook_input_id);
  }
  at::Tensor accumulate_grad(const at::Tensor& variable, const at::Tensor& variable_grad,
                             const at::Tensor& grad, bool has_post_hooks) const override {
    return calls_.accumulate_grad(variable, variable_grad, grad, has_post_hooks);
  }

 private:
  CompilerCalls& calls_;
};

}  // namespace

// upstream's PyCompilerInterface signature, by value
// NOLINTBEGIN(performance-unnecessary-value-param)
std::string CompilerCalls::bind_function(const std::string& name,
                                         torch::autograd::functional_apply_t,
                                         std::vector<at::TypePtr>, bool) {
  return name;
}
// NOLINTEND(performance-unnecessary-value-param)
variable_list CompilerCalls::call_function(const std::string& name, const variable_list&,
                                           const ivalue_list&, const c10::IValue&) {
  refuse("apply_functional " + name);
}
variable_list CompilerCalls::copy_slices_prologue(const variable_list&, const at::TensorGeometry&,
                                                  const at::TensorGeometry&) {
  refuse("copy_slices_prologue");
}
variable_list CompilerCalls::copy_slices_epilogue(const std::vector<bool>&, const at::Tensor&,
                                                  const variable_list&, const at::Tensor&) {
  refuse("copy_slices_epilogue");
}
at::Tensor CompilerCalls::unpack_saved(std::optional<size_t>, size_t) {
  refuse("unpack (saved-tensor hooks)");
}
at::Tensor CompilerCalls::accumulate_grad(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                          bool) {
  refuse("accumulate_grad");
}

namespace {
// The one process-wide interface slot's turn (see CompilerSession).
std::mutex& session_turn() {
  static std::mutex turn;
  return turn;
}
}  // namespace

CompilerSession::CompilerSession(CompilerCalls& calls)
    : turn_(session_turn()),
      guard_(std::make_unique<dyn::PyCompilerGuard>(std::make_unique<Forwarder>(calls))) {}

CompilerSession::~CompilerSession() = default;

namespace {

// Upstream's CacheKey keeps a node key's length in 16 bits (CompiledNodeArgs::key()), so a key
// past 64 KiB would be compared by a prefix only and a changed constant past it would replay
// stale. The whole length is a private member; explicit instantiation may name it (access checks
// do not apply to its template arguments), which is how this reads it.
using KeySizeMember = size_t dyn::CompiledNodeArgs::*;
KeySizeMember key_size_member();
template <KeySizeMember M>
struct KeySizeAccess {
  friend KeySizeMember key_size_member() { return M; }
};
template struct KeySizeAccess<&dyn::CompiledNodeArgs::_specialization_key_size>;

// SwapSavedVariables::before() moves each saved value into a private stash and puts a proxy in
// its place; only after() puts it back. A node that throws in between (an unregistered custom
// function, a refused call, a failing op) would leave meta proxies in the user's autograd graph,
// and the eager fallback would then run on them. The stashes are private members of private
// types; explicit instantiation may name them (as above), and the friend below restores each
// stash's values without naming their types.
//
// Some nodes stash locals of their own apply_with_saved (AccumulateGrad swaps copies of its
// variable and grad). Those frames are gone once the exception reaches apply_node: writing into
// one would release whatever its dead slot still holds, a second time. They lie on this thread's
// stack below apply_node's own frame (stacks grow down on every target we build for); such a key
// is dropped, every other one (node members, other nodes' metadata: heap) is restored.
class DeadFrames {
 public:
  explicit DeadFrames(const void* live_frame)
      : hi_(reinterpret_cast<uintptr_t>(live_frame)), lo_(stack_low(hi_)) {}
  bool holds(const void* p) const {
    const auto a = reinterpret_cast<uintptr_t>(p);
    return a >= lo_ && a < hi_;
  }

 private:
  // Where the bounds cannot be read, a window far larger than the few frames that unwound.
  static constexpr uintptr_t kFallbackWindow = uintptr_t{1} << 20;

  // The thread's lowest stack address, read once per thread (glibc parses /proc/self/maps for
  // the main thread, and harvest unwinds through here for every node type).
  static uintptr_t stack_low(uintptr_t frame) {
    thread_local const uintptr_t kLow = [] {
      uintptr_t found = 0;
      pthread_attr_t attr;
      if (pthread_getattr_np(pthread_self(), &attr) != 0) return found;
      void* base = nullptr;
      size_t size = 0;
      if (pthread_attr_getstack(&attr, &base, &size) == 0)
        found = reinterpret_cast<uintptr_t>(base);
      pthread_attr_destroy(&attr);
      return found;
    }();
    if (kLow != 0 && kLow < frame) return kLow;
    return frame > kFallbackWindow ? frame - kFallbackWindow : 0;
  }

  uintptr_t hi_, lo_;
};

template <class Stash>
void restore_stash(Stash& stash, const DeadFrames& dead) {
  for (auto& [key, stashed] : stash) {
    using Value = std::remove_const_t<std::remove_pointer_t<std::decay_t<decltype(key)>>>;
    if (!dead.holds(key)) *const_cast<Value*>(key) = std::move(stashed.prior_value);
  }
  stash.clear();
}

template <class... Stash>
void restore_stashes(const void* live_frame, Stash&... stashes) {
  if ((stashes.empty() && ...)) return;  // nothing swapped yet
  const DeadFrames dead(live_frame);
  (restore_stash(stashes, dead), ...);
}

void restore_swapped(dyn::SwapSavedVariables& saved, const void* live_frame);
template <auto... Stashes>
struct StashAccess {
  friend void restore_swapped(dyn::SwapSavedVariables& saved, const void* live_frame) {
    restore_stashes(live_frame, saved.*Stashes...);
  }
};
template struct StashAccess<
    &dyn::SwapSavedVariables::stashed_variables, &dyn::SwapSavedVariables::stashed_tensors,
    &dyn::SwapSavedVariables::stashed_symints, &dyn::SwapSavedVariables::stashed_ivalues>;

// AccumulateGrad reads its leaf's .grad again when it records: a backward on another thread
// that reaches the same leaf (threads accumulating into shared parameters) may have written one
// since the walk collected it, and then the walk's key and inputs no longer say what the node
// sees. Such a step is refused and runs eagerly; the next one walks afresh.
void check_grad_as_walked(const dyn::AutogradCompilerCall& compiler,
                          const torch::autograd::Node& node) {
  if (typeid(node) != typeid(torch::autograd::AccumulateGrad)) return;
  const at::Tensor& grad =
      static_cast<const torch::autograd::AccumulateGrad&>(node).variable.grad();
  const std::vector<at::Tensor>& walked = compiler.tensor_args.inputs;
  if (grad.defined() && std::none_of(walked.begin(), walked.end(),
                                     [&](const at::Tensor& t) { return t.is_same(grad); })) {
    throw CaptureError(
        "its leaf's .grad was written by a backward on another thread after this step's walk "
        "read it; the step runs eagerly");
  }
}

// Each edge target's grad_dtype (the dtype validate_outputs casts the gradient to; a leaf's
// set_grad_dtype changes it in place), which upstream's collect(InputMetadata) leaves out: without
// it a grad_dtype set between steps would replay the graph captured before.
void append_grad_dtypes(const torch::autograd::Node& node, std::string& key) {
  for (const torch::autograd::Edge& e : node.next_edges()) {
    if (!e.is_valid()) continue;
    const auto& md = e.function->input_metadata(e.input_nr);
    const auto dtype = compat::edge_grad_dtype(md);
    key.push_back(dtype ? static_cast<char>(*dtype) : '\xff');
  }
}

}  // namespace

void collect_node(dyn::AutogradCompilerCall& compiler, dyn::NodeCall& call,
                  torch::autograd::Node& node, bool with_edges, std::string* key) {
  dyn::CompiledNodeArgs args(compiler, call);
  {
    const AccumulateGradLock lock(node);  // it collects the leaf's .grad
    node.compiled_args(args);
  }
  if (with_edges) args.collect(node.next_edges());
  if (key != nullptr) {
    if (with_edges) append_grad_dtypes(node, *key);
    // The type's address, not its hash_code (which hashes the mangled name on every call): keys
    // live in this process only, and a type with two addresses (an RTTI copy per library) only
    // misses.
    const auto type = reinterpret_cast<uintptr_t>(&typeid(node));
    key->append(reinterpret_cast<const char*>(&type), sizeof type);
    key->append(reinterpret_cast<const char*>(args.key().key), args.*key_size_member());
  }
}

void collect_opaque(dyn::AutogradCompilerCall& compiler, dyn::NodeCall& call,
                    torch::autograd::Node& node, std::string* key) {
  dyn::CompiledNodeArgs args(compiler, call);
  args.collect(node.next_edges());
  if (key == nullptr) return;
  append_grad_dtypes(node, *key);
  // Its input count too: its replay step has one input per node input.
  const uintptr_t marks[] = {0, reinterpret_cast<uintptr_t>(&typeid(node)), node.num_inputs()};
  key->append(reinterpret_cast<const char*>(marks), sizeof marks);
  key->append(reinterpret_cast<const char*>(args.key().key), args.*key_size_member());
}

variable_list apply_node(dyn::AutogradCompilerCall& compiler, dyn::TraceState& state,
                         dyn::NodeCall& call, torch::autograd::Node& node,
                         const variable_list& grads, EdgeMetadata* edge_metadata) {
  dyn::SwapSavedVariables saved(compiler, state, session_py_compiler(), call);
  try {
    variable_list outputs;
    {
      const AccumulateGradLock lock(node);  // it reads the leaf's .grad
      check_grad_as_walked(compiler, node);
      outputs = node.apply_with_saved(grads, saved);
    }
    if (edge_metadata != nullptr && !outputs.empty()) {
      saved.before(node.next_edges());
      *edge_metadata = dyn::get_input_metadata(node.next_edges());
      saved.after(node.next_edges());
    }
    return outputs;
  } catch (...) {
    // The graph is the user's again before the error leaves; frames below this one are dead.
    restore_swapped(saved, __builtin_frame_address(0));
    throw;
  }
}

}  // namespace ca::detail
