// SPDX-License-Identifier: BSD-3-Clause
#include "parity/parity_cases.h"

namespace ca::testing {

std::vector<ParityCase> basic_cases() {
  return {
      {"elementwise_broadcast",
       [] {
         auto x = leaf({3, 1, 4}), w = leaf({5, 4}), b = leaf({4});
         return scalar((x * w + b).tanh().sum());
       }},
      {"linear",
       [] {
         auto w = leaf({6, 4}), b = leaf({6});
         return scalar(torch::linear(torch::randn({3, 4}), w, b).pow(2).sum());
       }},
      {"matmul_3d_2d",
       [] {
         auto a = leaf({2, 3, 4}), b = leaf({4, 5});
         return scalar(torch::matmul(a, b).sum());
       }},
      {"addmm",
       [] {
         auto c = leaf({3, 5}), a = leaf({3, 4}), b = leaf({4, 5});
         return scalar(torch::addmm(c, a, b, 0.5, 2.0).sin().sum());
       }},
      {"bmm",
       [] {
         auto a = leaf({2, 3, 4}), b = leaf({2, 4, 5});
         return scalar(torch::bmm(a, b).exp().mean());
       }},
      {"copy_slices_inplace_on_view",
       [] {
         auto x = leaf({4, 3}), y = leaf({4});
         auto z = x.clone();
         z.select(1, 0).add_(y * 2);  // x[:, 0] += y: CopySlices
         return scalar((z * z).sum());
       }},
      {"index_gather_scatter",
       [] {
         auto x = leaf({5, 4}), src = leaf({2, 4});
         auto idx = torch::tensor({{0, 1, 2, 3}, {4, 3, 2, 1}});
         auto g = x.gather(0, idx);
         auto s = torch::zeros({5, 4}).scatter(0, idx, src);
         auto sel = x.index({torch::tensor({0, 2, 2})});
         return scalar(g.sum() + (s * s).sum() + sel.pow(3).sum());
       }},
      {"index_put",
       [] {
         auto x = leaf({6, 3}), v = leaf({2, 3});
         auto y = x.clone().index_put({torch::tensor({1, 4})}, v, /*accumulate=*/true);
         return scalar((y * y).sum());
       }},
      {"cumsum_prod_norm",
       [] {
         auto x = leaf({3, 5});
         auto y = x.cumsum(1).sum() + x.prod(1).sum() + torch::norm(x) + x.norm(1, {0}).sum();
         return scalar(y);
       }},
      {"split_chunk_unbind",
       [] {
         auto x = leaf({6, 4});
         auto parts = x.split(2, 0);
         auto chunks = x.chunk(2, 1);
         auto rows = x.unbind(0);
         return scalar(parts[0].sum() * 2 + parts[2].exp().sum() + chunks[1].pow(2).sum() +
                       rows[3].sin().sum());
       }},
      {"transpose_permute_noncontiguous",
       [] {
         auto x = leaf({2, 3, 4});
         auto y = x.permute({2, 0, 1}).contiguous().transpose(0, 2);
         auto w = leaf({4, 2}).t();  // a non-contiguous use of a leaf
         return scalar((y.sum(0) * w).sum());
       }},
      {"dtype_casts",
       [] {
         auto x = leaf({4, 3});
         auto d = leaf({3}, at::kDouble);
         auto y = (x.to(at::kDouble) * d).to(at::kFloat);
         return scalar((y * y).sum());
       }},
      {"float64_chain",
       [] {
         auto x = leaf({5, 5}, at::kDouble);
         return scalar(torch::matmul(x, x).log_softmax(1).sum());
       },
       1e-12},
  };
}

}  // namespace ca::testing
