// SPDX-License-Identifier: BSD-3-Clause
// The hand-written guards, one row per guard: what the op's backward reads without checking
// it, and the rule that makes the read safe. Every rule holds for a graph captured from a real
// forward. Length rules derived from derivatives.yaml are generated (tools/gen_op_rules.py);
// these name what a formula's text does not show: a helper's own indexing, or a read that only
// a call's grads or saved values decide.
#include <algorithm>
#include <cstring>

#include "guards/call_check_ops.h"
#include "guards/guard_table.h"

namespace ca::detail {
namespace {

using namespace checks;  // NOLINT: the table names every check

NamedListRule same_length(const char* a, const char* b) { return {ListRule::kSameLength, a, b}; }
NamedListRule length(const char* a, uint16_t n) { return {ListRule::kLength, a, nullptr, n}; }
NamedListRule non_empty(const char* a) { return {ListRule::kNonEmpty, a}; }
NamedListRule covers_grads(const char* a) { return {ListRule::kCoversGrads, a}; }

std::vector<GuardRow> rows() {
  constexpr const char* kPad = "the pad backward reads two paddings per padded dim";
  constexpr const char* kStrided = "as_strided's backward reads size[i] and stride[i] together";
  constexpr const char* kSplit = "split backward reads sizes[dim] of the input's sizes";
  constexpr const char* kSplitSizes = "split_with_sizes_backward reads one split size per grad";
  constexpr const char* kPool = "max-pool backward adds each grad at grad_input[plane + index]";
  constexpr const char* kBatchNorm = "batch-norm backward reads one statistic per channel";
  constexpr const char* kConvDouble =
      "convolution double backward reads a spatial size per weight dim";
  return {
      // Load: length rules over the packed args.
      {"AsStridedBackward0", kStrided, same_length("size", "stride")},
      {"AsStridedBackward1", kStrided, same_length("size", "stride")},
      {"AsStridedScatterBackward0", kStrided, same_length("size", "stride")},
      {"CatBackward0", "cat_tensors_backward reads sizes[i][dim] of each non-empty input shape",
       NamedListRule{ListRule::kCatShapes, "tensors_args_sizes_symint", "dim"}},
      {"FftC2RBackward0", "fft_c2r_backward reads dim.back()", non_empty("dim")},
      {"FftR2CBackward0", "fft_r2c_backward reads dim.back()", non_empty("dim")},
      {"GroupedMmBackward0", "_grouped_mm_mat1_backward reads sizes[n - 2]",
       NamedListRule{ListRule::kMinLength, "self_sym_sizes", nullptr, 2, 1}},
      {"GroupedMmBackward0", "_grouped_mm_mat2_backward reads sizes[n - 2]",
       NamedListRule{ListRule::kMinLength, "mat2_sym_sizes", nullptr, 2, 2}},
      {"ReflectionPad1DBackward0", kPad, length("padding", 2)},
      {"ReflectionPad2DBackward0", kPad, length("padding", 4)},
      {"ReflectionPad3DBackward0", kPad, length("padding", 6)},
      {"RepeatBackward0", "repeat_backward reads repeats[i + grad.dim() - sizes.size()]",
       NamedListRule{ListRule::kNotShorterThan, "repeats", "self_sym_sizes"}},
      {"ReplicationPad1DBackward0", kPad, length("padding", 2)},
      {"ReplicationPad2DBackward0", kPad, length("padding", 4)},
      {"ReplicationPad3DBackward0", kPad, length("padding", 6)},
      {"SplitBackward0", kSplit, non_empty("self_sym_sizes")},
      {"SplitWithSizesBackward0", kSplit, non_empty("self_sym_sizes")},
      {"SplitWithSizesBackward0", kSplitSizes, covers_grads("split_sizes")},
      {"SplitWithSizesBackwardAutogradNestedTensor0", kSplitSizes, covers_grads("split_sizes")},
      {"UnfoldBackward0", "unfold_backward divides by step",
       NamedListRule{ListRule::kPositive, "step"}},
      {"UnsafeSplitBackward0", kSplit, non_empty("self_sym_sizes")},
      {"UnsafeSplitWithSizesBackward0", kSplit, non_empty("self_sym_sizes")},
      {"UnsafeSplitWithSizesBackward0", kSplitSizes, covers_grads("split_sizes")},

      // Run: what only a call's grads or saved values decide.
      {"AdaptiveMaxPool2DBackward0", kPool, pool_indices_2d},
      {"AdaptiveMaxPool3DBackward0", kPool, pool_indices_3d},
      {"AmaxBackward0", "restore_reduced_dims writes shape[d] for each reduced dim", amax_amin},
      {"AminBackward0", "restore_reduced_dims writes shape[d] for each reduced dim", amax_amin},
      {"AminmaxBackward0", "restore_reduced_dims writes shape[d] for each reduced dim", aminmax},
      {"AsStridedBackward0", "as_strided_backward reads size[i] per grad dim", as_strided},
      {"AsStridedBackward1", "as_strided_backward reads size[i] per grad dim", as_strided},
      {"BatchNormNoUpdateBackward0", kBatchNorm, batch_norm_eval},
      {"BatchNormWithUpdateBackward0", kBatchNorm, batch_norm_train},
      {"ConvolutionBackwardBackward0", kConvDouble, conv_double_input},
      {"ConvolutionBackwardOverrideableBackward0", kConvDouble, conv_double_input},
      {"CtcLossBackward0", "_ctc_loss_backward uses lengths and targets as offsets", ctc_loss},
      {"CtcLossBackward1", "_ctc_loss_backward uses lengths and targets as offsets", ctc_loss},
      {"EmbeddingBackward0", "embedding_dense_backward scatters into grad_weight[index]",
       embedding},
      {"ExpandBackward0", "sum_to reads sizes[i - leading] of the grad's dims", expand},
      {"FractionalMaxPool2DBackward0", kPool, pool_indices_2d},
      {"FractionalMaxPool3DBackward0", kPool, pool_indices_3d},
      {"FusedRmsNormBackward0", "rms-norm backward takes input.dim() - normalized.size()",
       normalized_shape},
      {"GluBackwardBackward0", "glu double backward halves sizes[dim] of self", glu_double},
      {"LuUnpackBackward0", "lu_unpack_backward sets each grad's last two sizes", lu_unpack},
      {"MaxPool2DWithIndicesBackward0", kPool, pool_indices_2d},
      {"MaxPool3DWithIndicesBackward0", kPool, pool_indices_3d},
      {"MpsConvolutionBackwardBackward0", kConvDouble, conv_double_self},
      {"NativeBatchNormBackward0", kBatchNorm, batch_norm},
      {"NativeBatchNormLegitBackward0", kBatchNorm, batch_norm},
      {"NativeBatchNormLegitBackward1", kBatchNorm, batch_norm_no_stats},
      {"NativeBatchNormLegitNoTrainingBackward0", kBatchNorm, batch_norm_eval},
      {"NativeGroupNormBackward0", "group-norm backward reads one statistic per sample and group",
       group_norm},
      {"NativeLayerNormBackward0", "layer-norm backward reads one statistic per normalized row",
       layer_norm},
      {"NativeLayerNormBackwardBackward0",
       "layer_norm_double_backward takes input.dim() - normalized.size()", normalized_shape},
      {"RepeatBackward0", "repeat_backward indexes repeats by grad.dim() - sizes.size()", repeat},
      {"SlowConv2DBackwardBackward0", kConvDouble, conv_double_self},
      {"UnfoldBackward0", "unfold_backward walks the grad by the unfold's geometry", unfold},
  };
}

}  // namespace

const std::vector<GuardRow>& guard_rows() {
  static const std::vector<GuardRow> kRows = [] {
    std::vector<GuardRow> t = rows();
    // Load rows first within an op, then as written: the order their checks run in.
    std::stable_sort(t.begin(), t.end(), [](const GuardRow& a, const GuardRow& b) {
      return std::strcmp(a.op, b.op) < 0;
    });
    return t;
  }();
  return kRows;
}

}  // namespace ca::detail
