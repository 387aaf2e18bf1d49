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

class Recorder final : public dyn::PyCompilerInterface {
 public:
  explicit Recorder(std::vector<OpEntry>* out) : out_(out) {}

  std::string bind_function(PyObject*, const std::string& fn_name, FunctionalFn fn,
                            std::vector<at::TypePtr> schema, bool is_custom_function,
                            bool) const override {
    out_->push_back({fn_name, std::move(fn), std::move(schema), is_custom_function});
    throw HarvestStop{};
  }
  variable_list call_function(PyObject*, const char*, const std::string&, const variable_list&,
                              const torch::autograd::ivalue_list&,
                              const c10::IValue&) const override {
    throw HarvestStop{};  // the type was bound before us: nothing to harvest
  }
  variable_list call_copy_slices_prologue(PyObject*, const variable_list&,
                                          const at::TensorGeometry&,
                                          const at::TensorGeometry&) const override {
    throw HarvestStop{};
  }
  variable_list call_copy_slices_epilogue(PyObject*, const std::vector<bool>&, const at::Tensor&,
                                          const variable_list&,
                                          const at::Tensor&) const override {
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
};

// Nodes only forward the py_compiler pointer; any non-null value serves in C++.
PyObject* sentinel_compiler() {
  static char tag;
  return reinterpret_cast<PyObject*>(&tag);
}

// Drives one node through compiled_args then apply_with_saved, as the capture loop would.
// Returns an empty string on success, else why nothing was bound.
std::string drive(const NodeFactory& factory, std::vector<OpEntry>& bound) {
  const size_t before = bound.size();
  try {
    NodeSample sample = factory.make();
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
    return "apply_with_saved returned without calling bind_function";
  } catch (const HarvestStop&) {
    if (bound.size() > before) return "";
    return "already bound in this process by another PyCompilerInterface";
  } catch (const std::exception& e) {
    std::string what = e.what();
    return "threw before bind_function: " + what.substr(0, what.find('\n'));
  }
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
  {
    dyn::PyCompilerGuard guard(std::make_unique<Recorder>(&bound));
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
