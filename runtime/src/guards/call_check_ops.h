// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The per-call check functions (call_check_shapes.cpp: grad ranks and shapes;
// call_check_saved.cpp: saved tensors' values and sizes), listed by call_check_table.cpp. Each
// throws ExecutionError through CallView::fail when its op would read out of bounds.

#include "guards/call_checks.h"

namespace ca::detail::checks {

void amax_amin(const CallView& c);
void aminmax(const CallView& c);
void as_strided(const CallView& c);
void batch_norm(const CallView& c);
void batch_norm_eval(const CallView& c);
void batch_norm_no_stats(const CallView& c);
void batch_norm_train(const CallView& c);
void conv_double_input(const CallView& c);
void conv_double_self(const CallView& c);
void ctc_loss(const CallView& c);
void embedding(const CallView& c);
void expand(const CallView& c);
void glu_double(const CallView& c);
void group_norm(const CallView& c);
void layer_norm(const CallView& c);
void lu_unpack(const CallView& c);
void normalized_shape(const CallView& c);
void pool_indices_2d(const CallView& c);
void pool_indices_3d(const CallView& c);
void repeat(const CallView& c);
void unfold(const CallView& c);

}  // namespace ca::detail::checks
