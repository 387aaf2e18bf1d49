// SPDX-License-Identifier: BSD-3-Clause
// Device placement at load, on CPU: which CPU scalars move to CUDA and why the others stay
// (upstream's move_graph_nodes_to_cuda rule), how recorded devices are retargeted, and what
// keeps a graph from being one CUDA graph. Graphs are built by hand so that each rule is hit
// alone; one captured graph checks the rule on real nodes.
#include "ca/device_placement.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "ca/capture.h"
#include "ca/error.h"
#include "ca/executor.h"
#include "cuda/cuda_graph_replay.h"
#include "test_util.h"

namespace ca {
namespace {

const c10::Device kCuda0(c10::kCUDA, 0);
const c10::Device kCuda1(c10::kCUDA, 1);
const c10::Device kCpu(c10::kCPU);

GraphInput tensor_input(std::string name, std::vector<int64_t> sizes, c10::Device device) {
  GraphInput in;
  in.name = std::move(name);
  in.meta.sizes = std::move(sizes);
  in.meta.device = device;
  return in;
}

Node reader(Graph& g, NodeKind kind, const std::string& op, ValueId v, bool as_arg = false) {
  if (as_arg) {
    return g.make_node(kind, op, {},
                       {Arg::list(ArgType{ArgType::Kind::kTensor, {}}, {Arg::tensor(v)})}, {});
  }
  return g.make_node(kind, op, {v}, {}, {});
}

Arg device_arg(c10::Device d) {
  Arg a;
  a.kind = Arg::Kind::kDevice;
  a.i = static_cast<int64_t>(d.type());
  a.device_index = d.index();
  return a;
}

// Inputs: 0 a [4, 4] activation on `home`, 1..5 CPU scalars, 6 a symbolic size.
Graph scalar_graph(c10::Device home) {
  Graph g;
  g.inputs = {tensor_input("grad", {4, 4}, home), tensor_input("builtin", {}, kCpu),
              tensor_input("custom", {}, kCpu),   tensor_input("param", {}, kCpu),
              tensor_input("foreign", {}, kCpu),  tensor_input("unused", {}, kCpu)};
  GraphInput size;
  size.kind = GraphInput::Kind::kInt;
  size.name = "size";
  g.inputs.push_back(size);
  g.nodes = {reader(g, NodeKind::kFunctional, "DivBackward0", 1, /*as_arg=*/true),
             reader(g, NodeKind::kAten, "aten::mul", 1),
             reader(g, NodeKind::kFunctional, "MyFn", 2, /*as_arg=*/true),
             reader(g, NodeKind::kFunctional, "MulBackward0", 2),
             reader(g, NodeKind::kAccumulateGrad, "AccumulateGrad", 3),
             reader(g, NodeKind::kAten, "myns::op", 4)};
  g.op_schemas = {
      {"DivBackward0", {}, -1, false}, {"MulBackward0", {}, -1, false}, {"MyFn", {}, -1, true}};
  g.num_values = static_cast<int32_t>(g.inputs.size());
  return g;
}

TEST(DevicePlacement, CudaGraphMovesScalarsOnlyBuiltinsRead) {
  const Graph g = scalar_graph(kCuda0);
  const DevicePlacement p = place_graph(g, kCuda0);
  EXPECT_EQ(p.home, kCuda0);
  EXPECT_EQ(p.inputs[0].device, kCuda0);
  EXPECT_FALSE(p.inputs[0].cpu_scalar);
  EXPECT_TRUE(p.inputs[1].moves) << p.inputs[1].reason;
  EXPECT_EQ(p.inputs[1].device, kCuda0);
  EXPECT_TRUE(test::contains(p.inputs[1].reason, "every user is built-in (2)"));
  EXPECT_FALSE(p.inputs[2].moves);
  EXPECT_EQ(p.inputs[2].device, kCpu);
  EXPECT_TRUE(
      test::contains(p.inputs[2].reason, "read by nodes[2] (functional MyFn), a custom function"));
  EXPECT_FALSE(p.inputs[3].moves);
  EXPECT_TRUE(test::contains(p.inputs[3].reason, "CPU parameter"));
  EXPECT_FALSE(p.inputs[4].moves);
  EXPECT_TRUE(
      test::contains(p.inputs[4].reason, "read by nodes[5] (aten myns::op), not an aten/prims op"));
  EXPECT_TRUE(p.inputs[5].moves);
  EXPECT_TRUE(test::contains(p.inputs[5].reason, "no node reads it"));
  EXPECT_FALSE(p.inputs[6].cpu_scalar);  // sizes are read on the host
  EXPECT_EQ(p.inputs[6].device, kCpu);
  EXPECT_EQ(p.scalars_moved, 2u);
  EXPECT_EQ(p.scalars_kept, 3u);
  EXPECT_EQ(p.kept_scalars(), (std::vector<size_t>{2, 3, 4}));
}

TEST(DevicePlacement, NothingMovesWithoutCudaInputs) {
  const DevicePlacement p = place_graph(scalar_graph(kCpu), kCpu);
  EXPECT_EQ(p.scalars_moved, 0u);
  for (size_t k = 1; k <= 5; ++k) {
    EXPECT_FALSE(p.inputs[k].moves);
    EXPECT_TRUE(test::contains(p.inputs[k].reason, "no CUDA inputs"));
  }
}

TEST(DevicePlacement, CpuGraphMovesAsAWholeButCustomFunctionsKeepTheirScalars) {
  const DevicePlacement p = place_graph(scalar_graph(kCpu), kCuda1);
  EXPECT_EQ(p.home, kCpu);
  EXPECT_EQ(p.inputs[0].device, kCuda1);
  EXPECT_TRUE(p.inputs[1].moves);
  EXPECT_FALSE(p.inputs[2].moves);
  EXPECT_TRUE(p.inputs[3].moves) << "a CPU graph's parameters move, as model.to(device)";
  EXPECT_FALSE(p.inputs[4].moves);
}

TEST(DevicePlacement, RetargetRewritesRecordedDevicesOfTheHomeOnly) {
  Graph g = scalar_graph(kCuda0);
  Node validate;
  validate.kind = NodeKind::kValidateOutputs;
  validate.args = g.arg_pool.append({Arg::tuple({device_arg(kCuda0), device_arg(kCpu)})});
  g.nodes.push_back(validate);
  const Graph out = retarget_graph(g, place_graph(g, kCuda1));
  EXPECT_EQ(out.inputs[0].meta.device, kCuda1);
  EXPECT_EQ(out.inputs[1].meta.device, kCuda1);  // moved scalar
  EXPECT_EQ(out.inputs[2].meta.device, kCpu);    // kept scalar
  const Arg t = out.args(out.nodes.back())[0].tree();
  EXPECT_EQ(t.items[0], device_arg(kCuda1));
  EXPECT_EQ(t.items[1], device_arg(kCpu)) << "CPU stays CPU in a graph recorded on CUDA";

  const Graph from_cpu =
      retarget_graph(scalar_graph(kCpu), place_graph(scalar_graph(kCpu), kCuda0));
  EXPECT_EQ(from_cpu.inputs[0].meta.device, kCuda0);
}

TEST(DevicePlacement, MixedDevicesAreRefusedNamingTheInput) {
  Graph g = scalar_graph(kCuda0);
  g.inputs.push_back(tensor_input("elsewhere", {2}, kCpu));
  const std::string msg = test::error_of<InputError>([&] { place_graph(g, kCuda0); });
  EXPECT_TRUE(test::contains(msg, "input 7 (elsewhere) was recorded on cpu but others on cuda:0"));
}

TEST(DevicePlacement, DescribeListsEveryScalar) {
  const Graph g = scalar_graph(kCuda0);
  const std::string text = describe_scalars(g, place_graph(g, kCuda0));
  EXPECT_TRUE(test::contains(text, "input 1 (builtin): moves to cuda:0"));
  EXPECT_TRUE(test::contains(text, "input 2 (custom): stays on cpu: read by nodes["));
  EXPECT_TRUE(test::contains(text, ", a custom function"));
  EXPECT_FALSE(test::contains(text, "input 0"));
}

TEST(DevicePlacement, CudaGraphRefusalsNameTheCause) {
  Graph g = scalar_graph(kCuda0);
  EXPECT_TRUE(
      test::contains(detail::cuda_graph_refusal(g, place_graph(g, kCpu)), "needs a CUDA device"));
  EXPECT_TRUE(test::contains(detail::cuda_graph_refusal(g, place_graph(g, kCuda0)),
                             "input 2 (custom) is a CPU scalar that stays on cpu"));
  g.inputs.resize(2);  // the activation and one movable scalar; nodes reading others remain
  g.nodes = {reader(g, NodeKind::kFunctional, "MyFn", 0)};
  EXPECT_TRUE(test::contains(detail::cuda_graph_refusal(g, place_graph(g, kCuda0)),
                             "nodes[0] (functional MyFn) runs custom function MyFn"));
  g.nodes.clear();
  EXPECT_EQ(detail::cuda_graph_refusal(g, place_graph(g, kCuda0)), "");
  GraphInput size;
  size.kind = GraphInput::Kind::kInt;
  size.name = "n";
  g.inputs.push_back(size);
  EXPECT_TRUE(test::contains(detail::cuda_graph_refusal(g, place_graph(g, kCuda0)),
                             "input 2 (n) is a symbolic size"));
}

// x * tensor(2.0) and x / tensor(3.0), captured on CPU: the lifted scalars move when the graph
// replays on CUDA, since only built-in nodes read them.
TEST(DevicePlacement, CapturedScalarsOfBuiltinOpsMove) {
  auto x = torch::randn({3, 4}, torch::requires_grad());
  auto loss = (x * torch::tensor(2.0) / torch::tensor(3.0)).sum();
  const CaptureResult cap = capture({loss});
  const DevicePlacement p = place_graph(cap.graph, kCuda0);
  EXPECT_GE(p.scalars_moved, 2u);
  EXPECT_EQ(p.scalars_kept, 0u) << describe_scalars(cap.graph, p);
  EXPECT_EQ(detail::cuda_graph_refusal(cap.graph, p), "");
}

TEST(DevicePlacement, ExecutorOnCpuDeviceMatchesEager) {
  torch::manual_seed(0);
  auto w = torch::randn({3, 4}, torch::requires_grad());
  auto x = torch::randn({2, 4});
  auto loss = (torch::linear(x, w) / torch::tensor(3.0)).sum();
  const CaptureResult cap = capture({loss});
  loss.backward();
  ExecutorOptions options;
  options.device = kCpu;
  Executor ex(cap.graph, options);
  ASSERT_NE(ex.placement(), nullptr);
  std::vector<at::Tensor> inputs;
  for (const at::Tensor& t : cap.inputs)
    inputs.push_back(t.detach().clone().requires_grad_(t.requires_grad()));
  const std::vector<at::Tensor> out = ex.run(inputs);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(torch::allclose(out[0], w.grad(), 1e-6, 1e-7));
}

TEST(DevicePlacement, CudaWithoutCudaIsAClearError) {
  if (torch::cuda::is_available()) GTEST_SKIP() << "a CUDA device is visible";
  auto x = torch::randn({3}, torch::requires_grad());
  const CaptureResult cap = capture({(x * 2).sum()});
  ExecutorOptions options;
  options.device = c10::Device(c10::kCUDA);
  const std::string msg = test::error_of<Error>([&] { Executor ex(cap.graph, options); });
  EXPECT_TRUE(test::contains(msg, "replay on cuda:0 needs CUDA, which is not available here"));
  options = {};
  options.cuda_graph = true;
  EXPECT_TRUE(test::contains(test::error_of<Error>([&] { Executor ex(cap.graph, options); }),
                             "cuda_graph replay needs a CUDA device"));
}

}  // namespace
}  // namespace ca
