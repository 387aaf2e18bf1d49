// SPDX-License-Identifier: BSD-3-Clause
// Functional ops whose backward code trusts a grad's rank, a saved list's length or the values of
// a saved tensor (issue 9's "per-op length rules", second round): each case captures a real
// forward, checks that the honest graph replays like eager autograd, then changes one saved
// constant or one saved tensor as a crafted file or batch could, and expects a FormatError at
// load or a clean ExecutionError at run time, never the op's unchecked read.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstring>
#include <functional>
#include <limits>
#include <string>

#include "ca/capture.h"
#include "ca/error.h"
#include "captured_backward.h"
#include "guards/op_rules.h"
#include "hostile_load.h"
#include "sample_graphs.h"
#include "test_util.h"

namespace ca {
namespace {

using test::contains;
using test::load;
using test::load_error;

using Case = test::CapturedBackward;

/// Captures `loss_of(params)`, runs eager backward for the reference grads, and checks that the
/// unchanged graph replays to them.
Case capture_case(const std::vector<at::Tensor>& params,
                  const std::function<at::Tensor(const std::vector<at::Tensor>&)>& loss_of) {
  Case c = test::capture_with_eager(loss_of(params), params);
  load(c.cap.graph).run(c.cap.inputs);
  EXPECT_TRUE(test::grads_match_eager(c));
  test::clear_grads(c);
  return c;
}

std::string run_error(const Case& c) {
  return test::error_of<ExecutionError>([&] { load(c.cap.graph).run(c.cap.inputs); }, "replay");
}

size_t node_of(const Graph& g, const std::string& op) {
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.op(g.nodes[i]) == op) return i;
  }
  throw std::runtime_error("no node " + op);
}

/// Position of the packed arg upstream names `name` in node `n` (from the generated rules).
size_t position(const Graph& g, size_t n, const char* name) {
  const std::string op(g.op(g.nodes.at(n)));
  const detail::OpRules* rules = detail::find_op_rules(op);
  if (rules == nullptr) throw std::runtime_error("no rules for " + op);
  for (size_t j = 0; j < rules->names.size(); ++j) {
    if (std::strcmp(rules->names[j], name) == 0) return j;
  }
  throw std::runtime_error(op + " packs no " + name);
}

ArgRef arg_named(const Graph& g, size_t n, const char* name) {
  return g.args(n).at(position(g, n, name));
}

void set_arg(Graph& g, size_t n, const char* name, const Arg& value) {
  const size_t j = position(g, n, name);
  test::edit_args(g, n, [&](std::vector<Arg>& args) { args.at(j) = value; });
}

/// Replaces the batch tensor behind saved tensor arg `name` of node `n` (a graph input), and
/// its declared shape, as a crafted batch and graph would.
void replace_saved(Case& c, size_t n, const char* name, const at::Tensor& t) {
  const ValueId v = arg_named(c.cap.graph, n, name).ref();
  if (v < 0 || static_cast<size_t>(v) >= c.cap.inputs.size()) {
    throw std::runtime_error(std::string(name) + " is not a graph input");
  }
  c.cap.inputs[static_cast<size_t>(v)] = t;
  c.cap.graph.inputs[static_cast<size_t>(v)].meta.sizes = t.sizes().vec();
}

const at::Tensor& saved(const Case& c, size_t n, const char* name) {
  return c.cap.inputs.at(static_cast<size_t>(arg_named(c.cap.graph, n, name).ref()));
}

Arg ints(const std::vector<int64_t>& v) {
  std::vector<Arg> items;
  items.reserve(v.size());
  for (int64_t i : v) items.push_back(Arg::integer(i));
  return Arg::list(ArgType{ArgType::Kind::kInt, {}}, std::move(items));
}

at::Tensor leaf(const std::vector<int64_t>& sizes) {
  return torch::randn(sizes, torch::requires_grad());
}

TEST(HostileCall, RepeatsMustCoverTheInputAndMatchTheGradsRank) {
  torch::manual_seed(0);
  Case c = capture_case({leaf({2, 3})}, [](auto& p) {
    return p[0].repeat({2, 1, 2}).pow(2).sum();
  });
  const size_t n = node_of(c.cap.graph, "RepeatBackward0");
  set_arg(c.cap.graph, n, "repeats", ints({2}));
  EXPECT_TRUE(contains(load_error(c.cap.graph), "(repeats): 1 elements for 2 in args[2]"));
  set_arg(c.cap.graph, n, "repeats",
          ints({1, 2}));  // grad rank 3, repeats 2: repeat_backward underflows
  EXPECT_TRUE(contains(run_error(c), "the op reads one of 2 repeats per grad dim"));
}

TEST(HostileCall, AnExpandsGradHasAtLeastTheInputsRank) {
  torch::manual_seed(1);
  Case c = capture_case({leaf({3, 1})}, [](auto& p) {
    return p[0].expand({2, 3, 4}).pow(2).sum();
  });
  set_arg(c.cap.graph, node_of(c.cap.graph, "ExpandBackward0"), "self_sym_sizes",
          ints({1, 1, 3, 1}));
  EXPECT_TRUE(contains(run_error(c), "an expand of a tensor of rank 4 has at least that rank"));
}

TEST(HostileCall, UnfoldsGradMustHaveTheUnfoldsShape) {
  torch::manual_seed(2);
  Case c = capture_case({leaf({10})}, [](auto& p) { return p[0].unfold(0, 3, 2).pow(2).sum(); });
  const size_t n = node_of(c.cap.graph, "UnfoldBackward0");
  set_arg(c.cap.graph, n, "step", Arg::integer(0));
  EXPECT_TRUE(contains(load_error(c.cap.graph), "(step): 0, expected an int > 0"));
  set_arg(c.cap.graph, n, "step", Arg::integer(2));
  set_arg(c.cap.graph, n, "size",
          Arg::integer(5));  // the kernel would read 5 per window of a [4, 3] grad
  EXPECT_TRUE(contains(run_error(c), "the unfold's output has shape [3, 5]"));
}

TEST(HostileCall, ReducedDimsMustFitTheReducedRank) {
  torch::manual_seed(3);
  Case c = capture_case({leaf({2, 3, 4})}, [](auto& p) { return p[0].amax({1}).pow(2).sum(); });
  set_arg(c.cap.graph, node_of(c.cap.graph, "AmaxBackward0"), "dim", ints({7}));
  EXPECT_TRUE(contains(run_error(c), "dim 7 outside the rank 3 the reduced tensor had"));
}

TEST(HostileCall, AsStridedGeometryAndSizesAreCheckedAgainstEachOtherAndTheGrad) {
  torch::manual_seed(4);
  Case c = capture_case({leaf({4, 4})}, [](auto& p) {
    return p[0].as_strided({2, 2}, {4, 1}, 1).pow(2).sum();
  });
  const size_t n = node_of(c.cap.graph, "AsStridedBackward0");
  const Arg size = arg_named(c.cap.graph, n, "size").tree();
  const Arg stride = arg_named(c.cap.graph, n, "stride").tree();
  set_arg(c.cap.graph, n, "stride", ints({4}));
  EXPECT_TRUE(contains(load_error(c.cap.graph), "2 sizes but 1 strides"));
  set_arg(c.cap.graph, n, "size", ints({2, 2, 1}));
  set_arg(c.cap.graph, n, "stride", ints({4, 1, 1}));
  EXPECT_TRUE(contains(run_error(c), "the view it is the grad of has 3 dims"));
  set_arg(c.cap.graph, n, "size", size);
  set_arg(c.cap.graph, n, "stride", stride);
  Arg geometry = arg_named(c.cap.graph, n, "self_geometry").tree();
  geometry.items[1] = ints({4});  // one stride for two sizes
  set_arg(c.cap.graph, n, "self_geometry", geometry);
  EXPECT_TRUE(contains(load_error(c.cap.graph), "(self_geometry): sizes [4, 4], strides [4]"));
}

TEST(HostileCall, MaxPoolIndicesMustPointIntoTheInputsPlane) {
  torch::manual_seed(5);
  Case c = capture_case({leaf({1, 2, 4, 4})}, [](auto& p) {
    return std::get<0>(torch::max_pool2d_with_indices(p[0], {2, 2}, {2, 2})).pow(2).sum();
  });
  const size_t n = node_of(c.cap.graph, "MaxPool2DWithIndicesBackward0");
  const at::Tensor good = saved(c, n, "result1").clone();
  const at::Tensor bad = good.clone().index_fill_(3, torch::tensor({0}), 16);
  replace_saved(c, n, "result1", bad);
  EXPECT_TRUE(contains(run_error(c), "(result1): holds an index outside [0, 16)"));
  // The extremes of int64, and a strided copy (checked by another path than a dense one).
  for (const int64_t v :
       {std::numeric_limits<int64_t>::min(), int64_t{-1}, std::numeric_limits<int64_t>::max()}) {
    replace_saved(c, n, "result1", good.clone().index_fill_(2, torch::tensor({1}), v));
    EXPECT_TRUE(contains(run_error(c), "holds an index outside [0, 16)")) << v;
  }
  const at::Tensor strided = bad.transpose(2, 3).contiguous().transpose(2, 3);
  ASSERT_FALSE(strided.is_contiguous());
  replace_saved(c, n, "result1", strided);
  EXPECT_TRUE(contains(run_error(c), "holds an index outside [0, 16)"));
}

TEST(HostileCall, AdaptiveMaxPoolIndicesMustPointIntoTheInputsPlane) {
  torch::manual_seed(10);
  Case c = capture_case({leaf({2, 5, 6})}, [](auto& p) {
    return std::get<0>(torch::adaptive_max_pool2d(p[0], {2, 3})).pow(2).sum();
  });
  const size_t n = node_of(c.cap.graph, "AdaptiveMaxPool2DBackward0");
  const at::Tensor indices = saved(c, n, "result1");
  replace_saved(c, n, "result1", torch::full_like(indices, -1));
  EXPECT_TRUE(contains(run_error(c), "(result1): holds an index outside [0, 30)"));
  // The adaptive kernels take the plane count from the grad or the input alone.
  replace_saved(c, n, "result1", torch::zeros({3, 2, 3}, indices.options()));
  EXPECT_TRUE(contains(run_error(c), "indices of shape [3, 2, 3] for an input of shape [2, 5, 6]"));
}

TEST(HostileCall, AminmaxDimMustFitTheReducedRank) {
  torch::manual_seed(11);
  Case c = capture_case({leaf({3, 4})}, [](auto& p) {
    auto [lo, hi] = torch::aminmax(p[0], 1);
    return lo.sum() + hi.pow(2).sum();
  });
  set_arg(c.cap.graph, node_of(c.cap.graph, "AminmaxBackward0"), "dim", Arg::integer(-9));
  EXPECT_TRUE(contains(run_error(c), "dim -9 outside the rank 2"));
}

TEST(HostileCall, NormStatisticsMustHaveOneElementPerRowOrChannel) {
  torch::manual_seed(12);
  Case ln = capture_case({leaf({4, 6}), leaf({6})}, [](auto& p) {
    return (torch::layer_norm(p[0], {6}, p[1]) * torch::randn({4, 6})).sum();
  });
  const size_t lnn = node_of(ln.cap.graph, "NativeLayerNormBackward0");
  replace_saved(ln, lnn, "result1", torch::zeros({1, 1}));
  EXPECT_TRUE(contains(run_error(ln), "(result1): 1 elements, one mean per normalized row has 4"));
  replace_saved(ln, lnn, "result1", torch::zeros({1, 1}).expand({4, 1}));  // 4 reads of one
  EXPECT_TRUE(contains(run_error(ln), "(result1): not contiguous"));

  Case bn = capture_case({leaf({3, 4, 5})}, [](auto& p) {
    auto y = torch::batch_norm(p[0], {}, {}, {}, {}, /*training=*/true, 0.1, 1e-5, false);
    return (y * torch::randn({3, 4, 5})).sum();
  });
  const size_t bnn = node_of(bn.cap.graph, "NativeBatchNormBackward0");
  replace_saved(bn, bnn, "result2", torch::ones({2}));
  EXPECT_TRUE(contains(run_error(bn), "(result2): 2 elements, one statistic per channel has 4"));
  set_arg(bn.cap.graph, bnn, "result2",
          Arg::tensor(kNoValue));  // torch dereferences it: a segfault
  EXPECT_TRUE(contains(run_error(bn), "(result2): undefined, the backward reads one statistic"));

  Case gn = capture_case({leaf({3, 4, 5})}, [](auto& p) {
    return (torch::group_norm(p[0], 2) * torch::randn({3, 4, 5})).sum();
  });
  set_arg(gn.cap.graph, node_of(gn.cap.graph, "NativeGroupNormBackward0"), "HxW", Arg::integer(50));
  EXPECT_TRUE(contains(run_error(gn), "N, C, HxW = 3, 4, 50 for an input of 60 elements"));
}

TEST(HostileCall, EmbeddingIndicesMustBeRowsOfTheWeight) {
  torch::manual_seed(6);
  const at::Tensor idx = torch::tensor({{1, 3}, {9, 0}});
  Case c = capture_case({leaf({10, 4})}, [&](auto& p) {
    return (torch::embedding(p[0], idx) * torch::randn({2, 2, 4})).sum();
  });
  const size_t n = node_of(c.cap.graph, "EmbeddingBackward0");
  replace_saved(c, n, "indices", torch::tensor({{1, 3}, {10, 0}}));
  EXPECT_TRUE(contains(run_error(c), "(indices): holds an index outside [0, 10)"));
}

TEST(HostileCall, CtcLengthsAndTargetsAreCheckedBeforeTheUncheckedKernel) {
  torch::manual_seed(7);
  const at::Tensor targets = torch::tensor({{1, 2, 3}, {4, 1, 0}});
  Case c = capture_case({leaf({6, 2, 5})}, [&](auto& p) {
    return torch::ctc_loss(p[0].log_softmax(2), targets, {6, 5}, {3, 2});
  });
  const size_t n = node_of(c.cap.graph, "CtcLossBackward0");
  set_arg(c.cap.graph, n, "target_lengths", ints({3, 9}));
  EXPECT_TRUE(contains(run_error(c), "(target_lengths): 9 past the padded row"));
  set_arg(c.cap.graph, n, "target_lengths", ints({3}));
  EXPECT_TRUE(contains(run_error(c), "1 lengths for a batch of 2"));
  set_arg(c.cap.graph, n, "target_lengths", ints({3, 2}));
  set_arg(c.cap.graph, n, "input_lengths", ints({6, 60}));
  EXPECT_TRUE(contains(run_error(c), "(input_lengths): 60 outside [0, 6]"));
  set_arg(c.cap.graph, n, "input_lengths", ints({6, 5}));
  replace_saved(c, n, "targets", torch::tensor({{1, 2, 99}, {4, 1, 0}}));
  EXPECT_TRUE(contains(run_error(c), "(targets): class 99 of 5"));
  replace_saved(c, n, "targets", targets);
  // torch's kernel corrupts the heap with a log_alpha narrower than the forward's.
  replace_saved(c, n, "result1", saved(c, n, "result1").narrow(2, 0, 1).contiguous());
  EXPECT_TRUE(contains(run_error(c), "the forward makes log_alpha of shape [2, 6, 7]"));
}

TEST(HostileCall, ConcatenatedCtcTargetsMustBeContiguous) {
  torch::manual_seed(13);
  Case c = capture_case({leaf({6, 2, 5})}, [](auto& p) {
    return torch::ctc_loss(p[0].log_softmax(2), torch::tensor({1, 2, 3, 4, 1}), {6, 5}, {3, 2});
  });
  const size_t n = node_of(c.cap.graph, "CtcLossBackward0");
  // Every element reads as class 1, but torch would step through the storage by the stride.
  replace_saved(c, n, "targets", torch::tensor({1}).expand({5}));
  EXPECT_TRUE(contains(run_error(c), "(targets): concatenated targets with stride 0"));
}

// Found by the graph_replay fuzzer: SumBackward0 expands its grad to the saved sizes, so sizes
// of 2^40 made a view that validate_outputs then summed for hours. Saved sizes describe a
// forward tensor: past ExecutorOptions::max_tensor_elements they are refused at load.
TEST(HostileCall, SavedSizesMayNotDescribeTensorsPastTheElementLimit) {
  torch::manual_seed(14);
  Case c = capture_case({leaf({4, 5})}, [](auto& p) { return p[0].sum(); });
  const size_t n = node_of(c.cap.graph, "SumBackward0");
  set_arg(c.cap.graph, n, "self_sym_sizes", ints({2, int64_t{1} << 40, 3}));
  EXPECT_TRUE(contains(load_error(c.cap.graph),
                       "(self_sym_sizes): sizes [2, 1099511627776, 3] describe more than "
                       "68719476736 elements (ExecutorOptions::max_tensor_elements)"));
  set_arg(c.cap.graph, n, "self_sym_sizes", ints({4, -5}));
  EXPECT_TRUE(contains(load_error(c.cap.graph), "sizes [4, -5] are not a shape"));
  // The limit is the caller's: an honest graph past a lower one is refused the same way.
  set_arg(c.cap.graph, n, "self_sym_sizes", ints({4, 5}));
  ExecutorOptions options;
  options.max_tensor_elements = 19;
  EXPECT_TRUE(contains(test::error_of<FormatError>([&] { Executor(c.cap.graph, options); }),
                       "describe more than 19 elements"));
  options.max_tensor_elements = 0;
  EXPECT_TRUE(contains(test::error_of<Error>([&] { Executor(c.cap.graph, options); }),
                       "max_tensor_elements must be >= 1"));
}

TEST(HostileCall, OpsReadingGradsByIndexGetTheirCountChecked) {
  torch::manual_seed(8);
  Case c = capture_case({leaf({3, 4, 5})}, [](auto& p) {
    return (torch::group_norm(p[0], 2) * torch::randn({3, 4, 5})).sum();
  });
  Graph& g = c.cap.graph;
  Node& n = g.nodes[node_of(g, "NativeGroupNormBackward0")];
  n.inputs = g.add_ids({g.ids(n.inputs)[0]});
  EXPECT_TRUE(contains(load_error(c.cap.graph), "1 grads, the op reads 3"));
}

TEST(HostileCall, FftDimsAndPaddingsHaveTheLengthTheOpReads) {
  torch::manual_seed(9);
  Case fft =
      capture_case({leaf({4, 6})}, [](auto& p) { return torch::fft::rfft(p[0]).abs().sum(); });
  set_arg(fft.cap.graph, node_of(fft.cap.graph, "FftR2CBackward0"), "dim", ints({}));
  EXPECT_TRUE(contains(load_error(fft.cap.graph), "(dim): empty, the op reads an element of it"));
  Case pad = capture_case({leaf({1, 2, 5, 5})}, [](auto& p) {
    return torch::reflection_pad2d(p[0], {1, 1, 2, 2}).pow(2).sum();
  });
  set_arg(pad.cap.graph, node_of(pad.cap.graph, "ReflectionPad2DBackward0"), "padding",
          ints({1, 1}));
  EXPECT_TRUE(contains(load_error(pad.cap.graph), "(padding): 2 elements, the op reads 4"));
}

}  // namespace
}  // namespace ca
