// SPDX-License-Identifier: BSD-3-Clause
#include "registry/harvest.h"

#include <chrono>
#include <exception>

#include "registry/cpu_rng_guard.h"
#include "session/compiler_session.h"

namespace ca::detail {
namespace {

// Thrown by the receiver to leave apply_with_saved as soon as the function is bound: nothing
// after bind_function in a node's apply_with_saved matters for harvesting.
struct HarvestStop {};

// What the harvest does with a node's compiler calls: record the first binding, or (probing)
// read the needs_input_grad flags the node packs.
class HarvestCalls final : public CompilerCalls {
 public:
  std::vector<OpEntry> bound;
  bool probing = false;
  int64_t flags = -1;  ///< during a probe: the flag count seen, -1 until seen

  std::string bind_function(const std::string& name, FunctionalFn fn,
                            std::vector<at::TypePtr> schema, bool is_custom_function) override {
    // Nodes that bind from a static initializer bind again in the probe pass (our throw left
    // the initializer unfinished): let them go on to pack their args.
    if (probing) return name;
    bound.push_back({name, std::move(fn), std::move(schema), is_custom_function, -1});
    throw HarvestStop{};
  }
  // Reached only by the probe pass (the type is bound by then): the first packed arg is the
  // node's needs_input_grad flags.
  variable_list call_function(const std::string&, const variable_list&,
                              const torch::autograd::ivalue_list& packed_args,
                              const c10::IValue&) override {
    if (!packed_args.empty() && packed_args[0].isBoolList()) {
      flags = static_cast<int64_t>(packed_args[0].toBoolList().size());
    }
    throw HarvestStop{};
  }
  variable_list copy_slices_prologue(const variable_list&, const at::TensorGeometry&,
                                     const at::TensorGeometry&) override {
    throw HarvestStop{};
  }
  variable_list copy_slices_epilogue(const std::vector<bool>&, const at::Tensor&,
                                     const variable_list&, const at::Tensor&) override {
    throw HarvestStop{};
  }
  at::Tensor unpack_saved(std::optional<size_t>, size_t) override { throw HarvestStop{}; }
  at::Tensor accumulate_grad(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                             bool) override {
    throw HarvestStop{};
  }
};

// Drives a sample through both passes, its own tensors standing in as their proxies.
void drive_sample(const NodeSample& sample) {
  dyn::AutogradCompilerCall compiler(dyn::SizeInput::STATIC);
  dyn::NodeCall& call = compiler.node_calls.lookup(sample.node);
  collect_node(compiler, call, *sample.node, /*with_edges=*/false);
  for (const at::Tensor& t : compiler.tensor_args.inputs) {
    compiler.tensor_args.lookup(t).proxy_tensor = t;
  }
  for (auto& lifted : compiler.lifted_ivalue_args.args) lifted.proxy = *lifted.actual_ptr;
  dyn::TraceState state(std::vector<std::optional<c10::SymInt>>(compiler.all_size_inputs.size()),
                        0);
  apply_node(compiler, state, call, *sample.node, sample.grads);
}

// Binds one node type. Returns an empty string on success, else why nothing was bound.
std::string bind(const NodeFactory& factory, HarvestCalls& calls) {
  const size_t before = calls.bound.size();
  try {
    drive_sample(factory.make());
    return "apply_with_saved returned without calling bind_function";
  } catch (const HarvestStop&) {
    if (calls.bound.size() > before) return "";
    return "already bound in this process by another PyCompilerInterface";
  } catch (const std::exception& e) {
    std::string what = e.what();
    return "threw before bind_function: " + what.substr(0, what.find('\n'));
  }
}

// Once bound, a node run again with enough (invalid) next edges gets past its index ranges and
// packs its needs_input_grad flags: their count bounds what a graph may pass the function.
int64_t probe_flag_count(const NodeFactory& factory, HarvestCalls& calls) {
  calls.probing = true;
  calls.flags = -1;
  try {
    NodeSample sample = factory.make();
    for (int i = 0; i < 64; ++i) sample.node->add_next_edge(torch::autograd::Edge());
    drive_sample(sample);
  } catch (...) {  // HarvestStop, or a node that cannot get that far: the count stays unknown
  }
  calls.probing = false;
  return calls.flags;
}

// Some hand-written nodes bind under their qualified C++ name ("torch::autograd::CopyBackwards").
bool same_op(const std::string& bound, const std::string& expected) {
  if (bound == expected) return true;
  const std::string suffix = "::" + expected;
  return bound.size() > suffix.size() &&
         bound.compare(bound.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

HarvestReport harvest_all(const std::function<void(OpEntry)>& add) {
  const auto start = std::chrono::steady_clock::now();
  // The sample nodes draw from the default CPU generator: a program's random stream after its
  // first backward must be the one eager gives it.
  CpuRngGuard rng;
  HarvestReport report;
  HarvestCalls calls;
  {
    CompilerSession session(calls);
    for (const auto* table : {&generated_node_factories(), &extra_node_factories()}) {
      for (const NodeFactory& factory : *table) {
        ++report.builtin_types;
        std::string reason = bind(factory, calls);
        if (!reason.empty()) {
          report.misses.push_back({factory.name, std::move(reason)});
          continue;
        }
        if (!same_op(calls.bound.back().name, factory.name)) {
          report.misses.push_back(
              {factory.name, "bound under another name: " + calls.bound.back().name});
          continue;
        }
        ++report.resolved;
        const int64_t flags = probe_flag_count(factory, calls);
        calls.bound.back().needs_input_grad_count = flags;
        if (calls.bound.back().name != factory.name) {  // also reachable by its short name
          OpEntry alias = calls.bound.back();
          alias.name = factory.name;
          calls.bound.push_back(std::move(alias));
        }
      }
    }
  }
  for (OpEntry& entry : calls.bound) add(std::move(entry));
  report.millis =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace ca::detail
