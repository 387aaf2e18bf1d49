#include "harvest/harvest.h"

#include <torch/csrc/dynamo/compiled_autograd.h>

#include <chrono>
#include <exception>

namespace ca::detail {
namespace {

namespace dyn = torch::dynamo::autograd;
using torch::autograd::variable_list;

// Thrown by the recorder to leave apply_with_saved as soon as the function is bound: nothing
// after bind_function in a node's apply_with_saved matters for harvesting.
struct HarvestStop {};

// Recorder::flags_ holds this while binding; during a probe it holds -1 until the flags are seen.
constexpr int64_t kBinding = -2;

class Recorder final : public dyn::PyCompilerInterface {
 public:
  Recorder(std::vector<OpEntry>* out, int64_t* flags) : out_(out), flags_(flags) {}

  std::string bind_function(PyObject*, const std::string& fn_name, FunctionalFn fn,
                            std::vector<at::TypePtr> schema, bool is_custom_function,
                            bool) const override {
    // Nodes that bind from a static initializer bind again in the probe pass (our throw left
    // the initializer unfinished): let them go on to pack their args.
    if (*flags_ != kBinding) return fn_name;
    out_->push_back({fn_name, std::move(fn), std::move(schema), is_custom_function});
    throw HarvestStop{};
  }
  // Reached only by the probe pass (the type is bound by then): the first packed arg is the
  // node's needs_input_grad flags.
  variable_list call_function(PyObject*, const char*, const std::string&, const variable_list&,
                              const torch::autograd::ivalue_list& packed_args,
                              const c10::IValue&) const override {
    if (!packed_args.empty() && packed_args[0].isBoolList()) {
      *flags_ = static_cast<int64_t>(packed_args[0].toBoolList().size());
    }
    throw HarvestStop{};
  }
  variable_list call_copy_slices_prologue(PyObject*, const variable_list&,
                                          const at::TensorGeometry&,
                                          const at::TensorGeometry&) const override {
    throw HarvestStop{};
  }
  variable_list call_copy_slices_epilogue(PyObject*, const std::vector<bool>&, const at::Tensor&,
                                          const variable_list&, const at::Tensor&) const override {
    throw HarvestStop{};
  }
  at::Tensor call_unpack(PyObject*, std::optional<size_t>, size_t) const override {
    throw HarvestStop{};
  }
  at::Tensor call_accumulate_grad(PyObject*, const at::Tensor&, const at::Tensor&,
                                  const at::Tensor&, bool) const override {
    throw HarvestStop{};
  }

 private:
  std::vector<OpEntry>* out_;
  int64_t* flags_;
};

// Nodes only forward the py_compiler pointer; any non-null value serves in C++.
PyObject* sentinel_compiler() {
  static char tag;
  return reinterpret_cast<PyObject*>(&tag);
}

// Drives a node through compiled_args then apply_with_saved, as the capture loop would.
void drive_sample(NodeSample sample) {
    dyn::AutogradCompilerCall compiler(dyn::SizeInput::STATIC);
    dyn::NodeCall& call = compiler.node_calls.lookup(sample.node);
    {
      dyn::CompiledNodeArgs args(compiler, call);
      sample.node->compiled_args(args);
    }
    // The sample's own tensors stand in as their proxies.
    for (const at::Tensor& t : compiler.tensor_args.inputs) {
      compiler.tensor_args.lookup(t).proxy_tensor = t;
    }
    for (auto& lifted : compiler.lifted_ivalue_args.args) lifted.proxy = *lifted.actual_ptr;
    std::vector<std::optional<c10::SymInt>> sizes(compiler.all_size_inputs.size());
    dyn::TraceState state(std::move(sizes), 0);
    dyn::SwapSavedVariables saved(compiler, state, sentinel_compiler(), call);
    sample.node->apply_with_saved(sample.grads, saved);
}

// Binds one node type. Returns an empty string on success, else why nothing was bound.
std::string drive(const NodeFactory& factory, std::vector<OpEntry>& bound) {
  const size_t before = bound.size();
  try {
    drive_sample(factory.make());
    return "apply_with_saved returned without calling bind_function";
  } catch (const HarvestStop&) {
    if (bound.size() > before) return "";
    return "already bound in this process by another PyCompilerInterface";
  } catch (const std::exception& e) {
    std::string what = e.what();
    return "threw before bind_function: " + what.substr(0, what.find('\n'));
  }
}

// Once bound, a node run again with enough (invalid) next edges gets past its index ranges and
// packs its needs_input_grad flags: their count bounds what a graph may pass the function.
int64_t probe_flag_count(const NodeFactory& factory, int64_t* flags) {
  *flags = -1;
  try {
    NodeSample sample = factory.make();
    for (int i = 0; i < 64; ++i) sample.node->add_next_edge(torch::autograd::Edge());
    drive_sample(std::move(sample));
  } catch (...) {  // HarvestStop, or a node that cannot get that far: the count stays unknown
  }
  const int64_t count = *flags;
  *flags = kBinding;
  return count;
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
  HarvestReport report;
  std::vector<OpEntry> bound;
  int64_t flags = kBinding;
  {
    dyn::PyCompilerGuard guard(std::make_unique<Recorder>(&bound, &flags));
    for (const auto* table : {&generated_node_factories(), &extra_node_factories()}) {
      for (const NodeFactory& factory : *table) {
        ++report.builtin_types;
        std::string reason = drive(factory, bound);
        if (!reason.empty()) {
          report.misses.push_back({factory.name, std::move(reason)});
        } else if (!same_op(bound.back().name, factory.name)) {
          report.misses.push_back({factory.name, "bound under another name: " + bound.back().name});
        } else {
          ++report.resolved;
          bound.back().needs_input_grad_count = probe_flag_count(factory, &flags);
          if (bound.back().name != factory.name) {  // also reachable by its short name
            OpEntry alias = bound.back();
            alias.name = factory.name;
            bound.push_back(std::move(alias));
          }
        }
      }
    }
  }
  for (OpEntry& entry : bound) add(std::move(entry));
  report.millis =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace ca::detail
