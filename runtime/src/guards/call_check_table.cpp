// SPDX-License-Identifier: BSD-3-Clause
// The per-call checks, one per op (or family) whose backward code reads by a grad's rank or by
// values inside a saved tensor without checking them first. Every condition holds for a graph
// captured from a real forward.
#include <algorithm>
#include <cstring>
#include <vector>

#include "guards/call_check_ops.h"

namespace ca::detail {

using namespace checks;  // NOLINT: the table names every check

const std::vector<CallCheckEntry>& call_check_table() {
  static const std::vector<CallCheckEntry> kTable = [] {
    std::vector<CallCheckEntry> t = {
        {"AdaptiveMaxPool2DBackward0", pool_indices_2d},
        {"AdaptiveMaxPool3DBackward0", pool_indices_3d},
        {"AmaxBackward0", amax_amin},
        {"AminBackward0", amax_amin},
        {"AminmaxBackward0", aminmax},
        {"AsStridedBackward0", as_strided},
        {"BatchNormNoUpdateBackward0", batch_norm_eval},
        {"BatchNormWithUpdateBackward0", batch_norm_train},
        {"AsStridedBackward1", as_strided},
        {"ConvolutionBackwardBackward0", conv_double_input},
        {"ConvolutionBackwardOverrideableBackward0", conv_double_input},
        {"CtcLossBackward0", ctc_loss},
        {"CtcLossBackward1", ctc_loss},
        {"EmbeddingBackward0", embedding},
        {"ExpandBackward0", expand},
        {"FractionalMaxPool2DBackward0", pool_indices_2d},
        {"FractionalMaxPool3DBackward0", pool_indices_3d},
        {"FusedRmsNormBackward0", normalized_shape},
        {"GluBackwardBackward0", glu_double},
        {"LuUnpackBackward0", lu_unpack},
        {"MaxPool2DWithIndicesBackward0", pool_indices_2d},
        {"MaxPool3DWithIndicesBackward0", pool_indices_3d},
        {"MpsConvolutionBackwardBackward0", conv_double_self},
        {"NativeBatchNormBackward0", batch_norm},
        {"NativeBatchNormLegitBackward0", batch_norm},
        {"NativeBatchNormLegitBackward1", batch_norm_no_stats},
        {"NativeBatchNormLegitNoTrainingBackward0", batch_norm_eval},
        {"NativeGroupNormBackward0", group_norm},
        {"NativeLayerNormBackward0", layer_norm},
        {"NativeLayerNormBackwardBackward0", normalized_shape},
        {"RepeatBackward0", repeat},
        {"SlowConv2DBackwardBackward0", conv_double_self},
        {"UnfoldBackward0", unfold},
    };
    std::sort(t.begin(), t.end(), [](const CallCheckEntry& a, const CallCheckEntry& b) {
      return std::strcmp(a.op, b.op) < 0;
    });
    return t;
  }();
  return kTable;
}

}  // namespace ca::detail
