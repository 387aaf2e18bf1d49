// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// A replay's ops dispatched below autograd's keys. With grad mode off (as eager backward runs
// without create_graph) and no forward-AD level open, autograd's kernels only pass an op on to
// the next key: skipping them saves a dispatch hop per op (a twentieth of the MLP replay's
// instructions) and changes nothing else. ADInplaceOrView still runs where a tensor may leave
// the replay, so what a caller gets back has views and version counters as eager makes them;
// calls whose outputs nobody sees again skip it too (CallStep::untracked_views). A forward-AD level
// keeps every key: autograd's kernels carry tangents through the backward formulas
// (forward-over-reverse).

#include <c10/core/impl/LocalDispatchKeySet.h>

#include <optional>

namespace ca::detail {

class BelowAutograd {
 public:
  BelowAutograd();
  BelowAutograd(const BelowAutograd&) = delete;
  BelowAutograd& operator=(const BelowAutograd&) = delete;

  /// The keys the caller dispatched with: what user code (a custom function) runs under.
  const c10::impl::LocalDispatchKeySet& caller_keys() const { return caller_; }
  /// Whether autograd's keys are skipped; then a call whose outputs never leave the replay may
  /// skip ADInplaceOrView too (CallStep::untracked_views).
  bool active() const { return exclude_.has_value(); }

 private:
  c10::impl::LocalDispatchKeySet caller_;
  std::optional<c10::impl::ExcludeDispatchKeyGuard> exclude_;
};

}  // namespace ca::detail
