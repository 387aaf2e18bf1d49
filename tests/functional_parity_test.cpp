// SPDX-License-Identifier: BSD-3-Clause
// Each resolved functional form, fed the state of a real node packed with upstream's own
// PackedArgs/IValuePacker, gives the gradients eager autograd gives.
#include <gtest/gtest.h>
#include <torch/csrc/autograd/functions/tensor.h>
#include <torch/csrc/autograd/generated/Functions.h>
#include <torch/csrc/dynamo/compiled_autograd.h>
#include <torch/torch.h>

#include "registry/op_entry.h"

namespace ca {
namespace {

namespace gen = torch::autograd::generated;
using torch::autograd::variable_list;
using torch::dynamo::autograd::PackedArgs;

template <class NodeT>
NodeT& node_of(const at::Tensor& y) {
  auto* node = dynamic_cast<NodeT*>(y.grad_fn().get());
  if (node == nullptr) throw std::runtime_error("unexpected grad_fn " + y.grad_fn()->name());
  return *node;
}

// Calls the registry's function for `op` and checks its result against eager autograd.
void expect_parity(const std::string& op, const at::Tensor& y, const PackedArgs& args,
                   const std::vector<at::Tensor>& wrt, const std::vector<int>& out_index = {}) {
  const detail::OpEntry* found = detail::find_op(op);
  ASSERT_NE(found, nullptr) << op;
  const detail::OpEntry& entry = *found;
  ASSERT_EQ(entry.schema.size(), args.vec().size()) << op << ": packed args vs schema";
  const at::Tensor grad_out = torch::randn_like(y);
  variable_list got = entry.fn({grad_out}, args.vec());
  variable_list want = torch::autograd::grad({y}, wrt, {grad_out}, /*retain_graph=*/true);
  for (size_t i = 0; i < wrt.size(); ++i) {
    const size_t k = out_index.empty() ? i : static_cast<size_t>(out_index[i]);
    ASSERT_LT(k, got.size()) << op;
    ASSERT_TRUE(got[k].defined()) << op << " output " << k;
    EXPECT_EQ(got[k].scalar_type(), want[i].scalar_type()) << op << " output " << k;
    EXPECT_EQ(got[k].sizes(), want[i].sizes()) << op << " output " << k;
    EXPECT_TRUE(torch::allclose(got[k], want[i], 1e-6, 1e-7))
        << op << " output " << k << " max abs diff "
        << (got[k] - want[i]).abs().max().item<double>();
  }
}

TEST(FunctionalParity, MulBackward0) {
  auto x = torch::randn({3, 4}, torch::requires_grad());
  auto w = torch::randn({3, 4}, torch::requires_grad());
  auto y = x * w;
  auto& n = node_of<gen::MulBackward0>(y);
  PackedArgs a;
  a.pack(std::array<bool, 2>{true, true});
  a.pack(n.other_.unpack());
  a.pack(n.other_scalar_type);
  a.pack(n.self_.unpack());
  a.pack(n.self_scalar_type);
  expect_parity("MulBackward0", y, a, {x, w});
}

TEST(FunctionalParity, AddmmBackward0) {
  auto b = torch::randn({2, 5}, torch::requires_grad());
  auto m1 = torch::randn({2, 3}, torch::requires_grad());
  auto m2 = torch::randn({3, 5}, torch::requires_grad());
  auto y = torch::addmm(b, m1, m2, /*beta=*/0.5, /*alpha=*/2.0);
  auto& n = node_of<gen::AddmmBackward0>(y);
  PackedArgs a;
  a.pack(std::array<bool, 3>{true, true, true});
  a.pack(n.alpha);
  a.pack(n.beta);
  a.pack(n.mat1_.unpack());
  a.pack(n.mat1_layout);
  a.pack(n.mat1_sym_sizes);
  a.pack(n.mat1_sym_strides);
  a.pack(n.mat2_.unpack());
  a.pack(n.mat2_layout);
  a.pack(n.mat2_sym_sizes);
  a.pack(n.mat2_sym_strides);
  expect_parity("AddmmBackward0", y, a, {b, m1, m2});
}

TEST(FunctionalParity, SumBackward1) {
  auto x = torch::randn({3, 4, 5}, torch::requires_grad());
  auto y = x.sum(/*dim=*/{1}, /*keepdim=*/false);
  auto& n = node_of<gen::SumBackward1>(y);
  PackedArgs a;
  a.pack(std::array<bool, 1>{true});
  a.pack(n.dim);
  a.pack(n.keepdim);
  a.pack(n.self_sym_sizes);
  expect_parity("SumBackward1", y, a, {x});
}

TEST(FunctionalParity, ExpandBackward0) {
  auto x = torch::randn({3, 1}, torch::requires_grad());
  auto y = x.expand({2, 3, 4});
  auto& n = node_of<gen::ExpandBackward0>(y);
  PackedArgs a;
  a.pack(std::array<bool, 1>{true});
  a.pack(n.self_sym_sizes);
  expect_parity("ExpandBackward0", y, a, {x});
}

TEST(FunctionalParity, ConvolutionBackward0) {
  auto input = torch::randn({2, 4, 7, 7}, torch::requires_grad());
  auto weight = torch::randn({6, 2, 3, 3}, torch::requires_grad());
  auto bias = torch::randn({6}, torch::requires_grad());
  auto y = torch::conv2d(input, weight, bias, /*stride=*/2, /*padding=*/1, /*dilation=*/1,
                         /*groups=*/2);
  auto& n = node_of<gen::ConvolutionBackward0>(y);
  PackedArgs a;
  a.pack(std::array<bool, 3>{true, true, true});
  a.pack(n.bias_sym_sizes_opt);
  a.pack(n.dilation);
  a.pack(n.groups);
  a.pack(n.input_.unpack());
  a.pack(n.output_padding);
  a.pack(n.padding);
  a.pack(n.stride);
  a.pack(n.transposed);
  a.pack(n.weight_.unpack());
  expect_parity("ConvolutionBackward0", y, a, {input, weight, bias});
}

TEST(FunctionalParity, NativeLayerNormBackward0) {
  auto x = torch::randn({4, 6}, torch::requires_grad());
  auto w = torch::randn({6}, torch::requires_grad());
  auto b = torch::randn({6}, torch::requires_grad());
  auto y = torch::layer_norm(x, {6}, w, b);
  auto& n = node_of<gen::NativeLayerNormBackward0>(y);
  const auto& self = y.grad_fn();
  PackedArgs a;
  a.pack(std::array<bool, 3>{true, true, true});
  a.pack(n.bias_.unpack());
  a.pack(n.input_.unpack());
  a.pack(n.normalized_shape);
  a.pack(n.weight_.unpack());
  a.pack(n.result1_.unpack(self));
  a.pack(n.result2_.unpack(self));
  expect_parity("NativeLayerNormBackward0", y, a, {x, w, b});
}

TEST(FunctionalParity, SoftmaxBackward0) {
  auto x = torch::randn({5, 7}, torch::requires_grad());
  auto y = torch::softmax(x, 1);
  auto& n = node_of<gen::SoftmaxBackward0>(y);
  PackedArgs a;
  a.pack(std::array<bool, 1>{true});
  a.pack(n.dim);
  a.pack(n.self_scalar_type);
  a.pack(n.result_.unpack(y.grad_fn()));
  expect_parity("SoftmaxBackward0", y, a, {x});
}

TEST(FunctionalParity, EmbeddingBackward0) {
  auto weight = torch::randn({10, 3}, torch::requires_grad());
  auto indices = torch::tensor({1, 4, 4, 0, 9}, torch::kLong);
  auto y = torch::embedding(weight, indices, /*padding_idx=*/0);
  auto& n = node_of<gen::EmbeddingBackward0>(y);
  PackedArgs a;
  a.pack(std::array<bool, 1>{true});
  a.pack(n.indices_.unpack());
  a.pack(n.padding_idx);
  a.pack(n.scale_grad_by_freq);
  a.pack(n.sparse);
  a.pack(n.weight_sym_argsize_0);
  expect_parity("EmbeddingBackward0", y, a, {weight});
}

TEST(FunctionalParity, MaxPool2DWithIndicesBackward0) {
  auto x = torch::randn({2, 3, 6, 6}, torch::requires_grad());
  auto y = std::get<0>(torch::max_pool2d_with_indices(x, {2, 2}, {2, 2}));
  auto& n = node_of<gen::MaxPool2DWithIndicesBackward0>(y);
  PackedArgs a;
  a.pack(std::array<bool, 1>{true});
  a.pack(n.ceil_mode);
  a.pack(n.dilation);
  a.pack(n.kernel_size);
  a.pack(n.padding);
  a.pack(n.self_.unpack());
  a.pack(n.stride);
  a.pack(n.result1_.unpack(y.grad_fn()));
  expect_parity("MaxPool2DWithIndicesBackward0", y, a, {x});
}

TEST(FunctionalParity, CopyBackwards) {
  auto src = torch::randn({4}, torch::dtype(torch::kFloat64).requires_grad(true));
  auto y = torch::zeros({4});
  y.copy_(src);
  auto& n = node_of<torch::autograd::CopyBackwards>(y);
  PackedArgs a;
  a.pack(std::array<bool, 2>{false, true});
  a.pack(n.src_options);
  // output 0 is the overwritten destination's grad; output 1 is the source's
  expect_parity("torch::autograd::CopyBackwards", y, a, {src}, {1});
}

}  // namespace
}  // namespace ca
