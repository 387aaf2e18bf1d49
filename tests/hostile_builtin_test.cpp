// SPDX-License-Identifier: BSD-3-Clause
// Hostile graphs for the builtin node kinds (accumulate_grad, validate_outputs, copy_slices),
// built by editing a real capture's IR: refused at load, or a clean ExecutionError at run time,
// never a silently converted .grad or torch's internal assert text. Eager autograd is the
// reference for the graphs left intact.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

#include "ca/capture.h"
#include "ca/error.h"
#include "ca/executor.h"
#include "ca/graph_io.h"
#include "captured_backward.h"
#include "hostile_load.h"
#include "sample_graphs.h"
#include "test_util.h"

namespace ca {
namespace {

using test::contains;

using test::load;
using test::load_error;

using test::CapturedBackward;
using test::grads_match_eager;

/// (w * x).sum() for a Float[4, 3] parameter w: MulBackward0 -> validate_outputs ->
/// accumulate_grad.
CapturedBackward capture_mul() {
  torch::manual_seed(1);
  const at::Tensor w = torch::randn({4, 3}, torch::requires_grad());
  return test::capture_with_eager((w * torch::randn({4, 3})).sum(), {w});
}

/// Edits the metadata entry for the grad of the validate_outputs right before the
/// accumulate_grad: `edit(Arg& metadata)`.
template <class Edit>
void edit_grad_metadata(Graph& g, Edit&& edit) {
  for (size_t i = 1; i < g.nodes.size(); ++i) {
    if (g.nodes[i].kind == NodeKind::kAccumulateGrad &&
        g.nodes[i - 1].kind == NodeKind::kValidateOutputs) {
      return test::edit_args(g, i - 1, [&](std::vector<Arg>& args) { edit(args[0].items[0]); });
    }
  }
  throw std::runtime_error("no validate_outputs before an accumulate_grad");
}

// Packed InputMetadata: ((requires_grad, memory_format, device, dtype, layout, pinned), shape,
// is_tensor_subclass, grad_dtype).
Arg& options_field(Arg& md, size_t k) { return md.items[0].items[k]; }

void set_dtype(Arg& md, c10::ScalarType t) {
  options_field(md, 3).i = static_cast<int64_t>(t);
  md.items[3].i = static_cast<int64_t>(t);
}

std::string run_error(const CapturedBackward& c, const Graph& g) {
  const Executor ex = load(g);
  return test::error_of<ExecutionError>([&] { ex.run(c.cap.inputs); }, "replaying");
}

TEST(HostileBuiltin, TheUncorruptedGraphReplaysLikeEager) {
  CapturedBackward c = capture_mul();
  load(c.cap.graph).run(c.cap.inputs);
  EXPECT_TRUE(grads_match_eager(c));
}

TEST(HostileBuiltin, AccumulateGradRefusesAGradOfAnotherDtype) {
  CapturedBackward c = capture_mul();
  // validate_outputs now casts to Double
  edit_grad_metadata(c.cap.graph, [](Arg& md) { set_dtype(md, c10::kDouble); });
  EXPECT_TRUE(contains(run_error(c, c.cap.graph),
                       "accumulate_grad: grad Double[4, 3] on cpu for a parameter Float[4, 3]"));
  EXPECT_FALSE(c.params[0].grad().defined()) << "no .grad was stored";
}

TEST(HostileBuiltin, AccumulateGradRefusesAGradOfAnotherShape) {
  CapturedBackward c = capture_mul();
  // [1, 3]: validate_outputs sums the grad down to it
  edit_grad_metadata(c.cap.graph, [](Arg& md) { md.items[1].items[0].i = 1; });
  EXPECT_TRUE(contains(run_error(c, c.cap.graph), "grad Float[1, 3] on cpu for a parameter"));
}

TEST(HostileBuiltin, AccumulateGradOnlyWritesIntoTensorsRecordedAsRequiringGrad) {
  CapturedBackward c = capture_mul();
  for (const Node& n : c.cap.graph.nodes) {
    if (n.kind == NodeKind::kAccumulateGrad) {
      c.cap.graph.inputs[static_cast<size_t>(c.cap.graph.ids(n.inputs)[0])].meta.requires_grad =
          false;
    }
  }
  EXPECT_TRUE(contains(load_error(c.cap.graph), "was not recorded as a tensor requiring grad"));
}

TEST(HostileBuiltin, ValidateOutputsMetadataIsCheckedAtLoad) {
  struct Case {
    std::function<void(Arg&)> edit;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {[](Arg& md) { set_dtype(md, c10::kLong); }, "dtype Long is not differentiable"},
      {[](Arg& md) { md.items[3].i = static_cast<int64_t>(c10::kInt); },
       "dtype Int is not differentiable"},
      {[](Arg& md) { options_field(md, 4).i = static_cast<int64_t>(c10::kSparse); },
       "layout is not strided"},
      {[](Arg& md) { options_field(md, 2).i = static_cast<int64_t>(c10::DeviceType::Meta); },
       "device meta is not cpu or cuda"},
      {[](Arg& md) { md.items[1].items[1].i = -3; }, "has a negative size"},
  };
  for (const Case& k : cases) {
    CapturedBackward c = capture_mul();
    edit_grad_metadata(c.cap.graph, k.edit);
    const std::string error = load_error(c.cap.graph);
    EXPECT_TRUE(contains(error, k.expected));
    EXPECT_FALSE(contains(error, "INTERNAL ASSERT"));
  }
}

/// An in-place op on a view: the copy_slices prologue/epilogue pair.
CapturedBackward capture_in_place_view() {
  torch::manual_seed(2);
  const at::Tensor a = torch::randn({4, 3}, torch::requires_grad());
  at::Tensor x = a.clone();
  x.narrow(0, 1, 2).mul_(torch::randn({2, 3}));
  return test::capture_with_eager(x.exp().sum(), {a});
}

size_t prologue(const Graph& g) {
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].kind == NodeKind::kCopySlicesPrologue) return i;
  }
  throw std::runtime_error("no copy_slices prologue");
}

TEST(HostileBuiltin, CopySlicesViewMustLieInsideItsBase) {
  CapturedBackward c = capture_in_place_view();
  load(c.cap.graph).run(c.cap.inputs);
  EXPECT_TRUE(grads_match_eager(c));

  Graph& g = c.cap.graph;
  const size_t p = prologue(g);
  std::vector<Arg> args = g.args(p).trees();
  Arg& view = args[1];  // (sizes, strides, offset)
  view.items[2].i = 100;
  g.set_args(p, args);
  EXPECT_TRUE(contains(load_error(g), "the view is not inside its base"));
  view.items[2].i = 3;
  view.items[1].items[0].i = 50;  // a row stride past the base
  g.set_args(p, args);
  EXPECT_TRUE(contains(load_error(g), "outside the storage's [0, 12)"));
  view.items[1].items.pop_back();
  g.set_args(p, args);
  EXPECT_TRUE(contains(load_error(g), "are not a geometry"));
  // Sizes whose product overflows int64 (torch multiplies them unchecked), with zero strides.
  Arg& base = args[0];
  base.items[0].items[0].i = int64_t{1} << 62;
  base.items[1].items[0].i = 0;
  g.set_args(p, args);
  EXPECT_TRUE(contains(load_error(g), "are not a geometry"));
}

// Found by the graph_replay fuzzer: a base whose strides span far more than its elements made
// the prologue allocate gigabytes for a few values.
TEST(HostileBuiltin, CopySlicesBaseStorageIsBoundedByTheElementLimit) {
  CapturedBackward c = capture_in_place_view();
  test::edit_args(c.cap.graph, prologue(c.cap.graph), [](std::vector<Arg>& args) {
    args[0].items[1].items[0].i = int64_t{1} << 37;  // base [4, 3] with strides [3, 1]
  });
  EXPECT_TRUE(contains(
      test::error_of<ExecutionError>([&] { load(c.cap.graph).run(c.cap.inputs); }, "replay"),
      "copy_slices: a base spanning 412316860419 elements, more than the limit"));
}

TEST(HostileBuiltin, GraphInputSizesMustHaveARepresentableElementCount) {
  CapturedBackward c = capture_mul();
  c.cap.graph.inputs[0].meta.sizes = {int64_t{1} << 40, int64_t{1} << 40};
  EXPECT_TRUE(contains(load_error(c.cap.graph), "more elements than int64 holds"));
}

}  // namespace
}  // namespace ca
