// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file
/// ca::FieldPath: where a check is in a graph ("nodes[3].args[0].items[1]"), kept on the stack as
/// a chain of segments and spelled out only for an error message, so that checking a
/// million-node graph builds no path strings. The reader and the validator name fields with it.

#include <cstddef>
#include <string>

namespace ca {

class FieldPath {
 public:
  static constexpr size_t kNoIndex = ~size_t{0};
  /// A top-level field: FieldPath("nodes", 3) is "nodes[3]".
  explicit FieldPath(const char* field, size_t index = kNoIndex)
      : FieldPath(nullptr, field, index) {}
  /// A child field of this one, which must outlive it; `field` starts with '.'.
  FieldPath operator()(const char* field, size_t index = kNoIndex) const {
    return FieldPath(this, field, index);
  }
  std::string str() const {
    std::string out = parent_ != nullptr ? parent_->str() : std::string();
    out += field_;
    if (index_ != kNoIndex) out += "[" + std::to_string(index_) + "]";
    return out;
  }

 private:
  FieldPath(const FieldPath* parent, const char* field, size_t index)
      : parent_(parent), field_(field), index_(index) {}
  const FieldPath* parent_;
  const char* field_;
  size_t index_;
};

/// An error message at `path`: its text, then `text`.
inline std::string operator+(const FieldPath& path, const std::string& text) {
  return path.str() + text;
}

}  // namespace ca
