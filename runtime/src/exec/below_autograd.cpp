// SPDX-License-Identifier: BSD-3-Clause
#include "exec/below_autograd.h"

#include <c10/core/DispatchKeySet.h>
#include <torch/csrc/autograd/forward_grad.h>

namespace ca::detail {

BelowAutograd::BelowAutograd() : caller_(c10::impl::tls_local_dispatch_key_set()) {
  // torch opens one forward-AD level at a time, index 0 (nested levels are refused upstream).
  if (torch::autograd::ForwardADLevel::try_get_by_idx(0) == nullptr) {
    exclude_.emplace(c10::autograd_dispatch_keyset);
  }
}

}  // namespace ca::detail
