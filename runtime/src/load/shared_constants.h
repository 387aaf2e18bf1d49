// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// One IValue for each distinct constant container a graph packs: a million-node graph packs the
// same needs_input_grad list a million times, and each c10::List costs three heap blocks.

#include <ATen/core/ivalue.h>

#include <string>
#include <unordered_map>

#include "ca/arg.h"

namespace ca::detail {

/// Shares the IValues of equal packed containers (lists, tuples, dicts) that hold no value
/// reference, within one graph (keys use the graph's interned types). Sharing is safe because
/// nothing writes into them: a frame writes only along its slots' paths, into its own copies of
/// the args that hold references (Frame::State), and replaces rebuilt args whole.
class SharedConstants {
 public:
  /// `arg` as an IValue: the one made for an equal arg before, when it is a constant container.
  c10::IValue get(const ArgRef& arg);

 private:
  std::string key_;  // one buffer for every arg's key
  std::unordered_map<std::string, c10::IValue> made_;
};

}  // namespace ca::detail
