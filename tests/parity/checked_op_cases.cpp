// SPDX-License-Identifier: BSD-3-Clause
#include "parity/parity_cases.h"

namespace ca::testing {

namespace F = torch::nn::functional;

// Ops whose backward the runtime checks on every call (a grad's rank, saved lengths, saved
// index values): honest graphs of each must replay exactly as before.
std::vector<ParityCase> checked_op_cases() {
  return {
      {"max_pool3d_indices",
       [] {
         auto x = leaf({1, 2, 4, 4, 4});
         return scalar(std::get<0>(torch::max_pool3d_with_indices(x, {2, 2, 2})).pow(2).sum());
       }},
      {"fractional_max_pool2d",
       [] {
         auto x = leaf({1, 2, 8, 8});
         auto out = torch::fractional_max_pool2d(x, {2, 2}, {4, 4}, torch::rand({1, 2, 2}));
         return scalar(std::get<0>(out).pow(2).sum());
       }},
      {"ctc_loss_tensor_lengths",  // _ctc_loss.Tensor: CtcLossBackward1, lengths as tensors
       [] {
         auto x = leaf({6, 2, 5});
         auto targets = torch::tensor({1, 2, 3, 4, 1});
         auto out = torch::_ctc_loss(x.log_softmax(2), targets, torch::tensor({6, 5}),
                                     torch::tensor({3, 2}));
         return scalar(std::get<0>(out).sum());
       }},
      {"batch_norm_eval_and_without_running_stats",
       [] {
         torch::nn::BatchNorm1d eval_bn(3),
             no_stats(torch::nn::BatchNormOptions(3).track_running_stats(false));
         eval_bn->eval();
         auto x = leaf({4, 3, 5});
         return scalar((no_stats(eval_bn(x)) * torch::randn({4, 3, 5})).sum());
       }},
      {"norms_and_pools",
       [] {
         auto x = leaf({2, 4, 6, 6});
         auto y = torch::adaptive_max_pool2d(torch::group_norm(x, 2), {3, 2});
         auto [lo, hi] = torch::aminmax(std::get<0>(y), 3, /*keepdim=*/false);
         return scalar(torch::layer_norm(lo + hi.pow(2), {3}).pow(2).sum());
       }},
      {"amin_keepdim_repeat_expand",
       [] {
         auto x = leaf({2, 3, 4});
         auto y = x.amin({0, 2}, true).repeat({2, 1, 2}).expand({4, 2, 3, 2});
         return scalar((y * torch::randn({4, 2, 3, 2})).sum());
       }},
      {"unfold_as_strided",
       [] {
         auto x = leaf({12});
         auto y = x.unfold(0, 4, 3).as_strided({2, 3}, {1, 2}, 1);
         return scalar((y * torch::randn({2, 3})).sum());
       }},
      {"lu_unpack",
       [] {
         auto a = leaf({3, 3});
         auto [lu, pivots] = torch::linalg_lu_factor(a);
         auto [p, l, u] = torch::lu_unpack(lu, pivots);
         return scalar((l * torch::randn({3, 3})).sum() + (u * torch::randn({3, 3})).sum());
       }},
      {"irfft_replication_pad",
       [] {
         auto x = leaf({2, 5});
         auto y = F::pad(torch::fft::irfft(x, 8).unsqueeze(0),
                         F::PadFuncOptions({2, 1}).mode(torch::kReplicate));
         return scalar((y * torch::randn({1, 2, 11})).sum());
       }},
  };
}

}  // namespace ca::testing
