// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The per-call checks (call_check_shapes.cpp: grad ranks and shapes; call_check_saved.cpp:
// saved tensors' values and sizes), listed by the guard table (guard_rows.cpp). Each is bound
// to a node's slots at load and throws ExecutionError through CallView::fail when its op would
// read out of bounds.

#include "guards/call_checks.h"

namespace ca::detail::checks {

RunGuard amax_amin(const ArgSlots& s);
RunGuard aminmax(const ArgSlots& s);
RunGuard as_strided(const ArgSlots& s);
RunGuard batch_norm(const ArgSlots& s);
RunGuard batch_norm_eval(const ArgSlots& s);
RunGuard batch_norm_no_stats(const ArgSlots& s);
RunGuard batch_norm_train(const ArgSlots& s);
RunGuard conv_double_input(const ArgSlots& s);
RunGuard conv_double_self(const ArgSlots& s);
RunGuard ctc_loss(const ArgSlots& s);
RunGuard embedding(const ArgSlots& s);
RunGuard expand(const ArgSlots& s);
RunGuard glu_double(const ArgSlots& s);
RunGuard group_norm(const ArgSlots& s);
RunGuard layer_norm(const ArgSlots& s);
RunGuard lu_unpack(const ArgSlots& s);
RunGuard normalized_shape(const ArgSlots& s);
RunGuard pool_indices_2d(const ArgSlots& s);
RunGuard pool_indices_3d(const ArgSlots& s);
RunGuard repeat(const ArgSlots& s);
RunGuard unfold(const ArgSlots& s);

}  // namespace ca::detail::checks
