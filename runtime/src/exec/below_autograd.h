// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// A replay's ops dispatched below autograd's keys. With grad mode off (as eager backward runs
// without create_graph) and no forward-AD level open, autograd's kernels only pass an op on to
// the next key: skipping them saves a dispatch hop per op and changes nothing else. A
// forward-AD level keeps every key: autograd's kernels carry tangents through the backward
// formulas (forward-over-reverse). Built-in calls may also skip ADInplaceOrView (views'
// metadata, version counts) where the plan found nothing a caller sees can tell
// (CallStep::untracked_views, mark_untracked_views in plan/plan.cpp).

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
  /// Whether autograd's keys are skipped; only then may an untracked call skip ADInplaceOrView.
  bool active() const { return exclude_.has_value(); }

 private:
  c10::impl::LocalDispatchKeySet caller_;
  std::optional<c10::impl::ExcludeDispatchKeyGuard> exclude_;
};

}  // namespace ca::detail
