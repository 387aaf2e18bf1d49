// SPDX-License-Identifier: BSD-3-Clause
// ca::ArgPool: appending trees and copies as records, in-place edits.
#include <algorithm>
#include <limits>
#include <string>

#include "arg_payload.h"
#include "ca/arg.h"
#include "ca/error.h"

namespace ca {
namespace {

// A type spelled out as its kinds, bracketed: the key that interns it.
void spell(const ArgType& t, std::string& out) {
  out += static_cast<char>('A' + static_cast<int>(t.kind));
  if (t.contained.empty()) return;
  out += '(';
  for (const ArgType& c : t.contained) spell(c, out);
  out += ')';
}

}  // namespace

using detail::double_bits;
using detail::holds_int;
using detail::holds_ref;

// ArgPool

uint32_t ArgPool::type_index(const ArgType& type) {
  std::string key;
  spell(type, key);
  auto [it, fresh] = type_ids_.try_emplace(std::move(key), static_cast<uint32_t>(types_.size()));
  if (fresh) types_.push_back(type);
  return it->second;
}

uint32_t ArgPool::string_index(const std::string& s) {
  auto [it, fresh] = string_ids_.try_emplace(s, static_cast<uint32_t>(strings_.size()));
  if (fresh) strings_.push_back(s);
  return it->second;
}

uint32_t ArgPool::push(const Arg& arg) {
  if (!is_container(arg.kind) && !arg.items.empty()) {
    throw FormatError(std::to_string(arg.items.size()) +
                      " items on an arg that is not a list, tuple or dict");
  }
  if (records_.size() >= std::numeric_limits<uint32_t>::max()) {
    throw FormatError("a graph holds at most 2^32 - 1 arg records");
  }
  const auto index = static_cast<uint32_t>(records_.size());
  Record r;
  r.kind = arg.kind;
  switch (arg.kind) {
    case Arg::Kind::kBool:
      r.b = arg.b;
      break;
    case Arg::Kind::kDouble:
      r.payload = double_bits(arg.d);
      break;
    case Arg::Kind::kComplex:
      r.payload = complexes_.size();
      complexes_.push_back(arg.c);
      break;
    case Arg::Kind::kString:
      r.payload = string_index(arg.s);
      break;
    case Arg::Kind::kTensor:
    case Arg::Kind::kSymInt:
      r.payload = static_cast<uint64_t>(static_cast<int64_t>(arg.ref));
      break;
    case Arg::Kind::kList:
    case Arg::Kind::kTuple:
    case Arg::Kind::kDict: {
      uint32_t type = 0;
      if (arg.kind == Arg::Kind::kList) type = type_index(arg.type);
      if (arg.kind == Arg::Kind::kDict) {
        type = type_index(ArgType{ArgType::Kind::kTuple, {arg.type, arg.value_type}});
      }
      r.payload = (uint64_t{arg.items.size()} << 32) | type;
      break;
    }
    default:
      r.device_index = arg.kind == Arg::Kind::kDevice ? arg.device_index : int8_t{-1};
      if (holds_int(arg.kind)) r.payload = static_cast<uint64_t>(arg.i);
      break;
  }
  records_.push_back(r);
  for (const Arg& item : arg.items) push(item);
  records_[index].extent = static_cast<uint32_t>(records_.size() - index);
  return index;
}

uint32_t ArgPool::push_copy(const ArgRef& arg) {
  // Side-table entries are the source's: re-intern them here.
  Record r = arg.pool()->at(arg.index());
  const auto index = static_cast<uint32_t>(records_.size());
  switch (r.kind) {
    case Arg::Kind::kComplex:
      r.payload = complexes_.size();
      complexes_.push_back(arg.c());
      break;
    case Arg::Kind::kString:
      r.payload = string_index(arg.s());
      break;
    case Arg::Kind::kList:
      r.payload = (r.payload & ~uint64_t{0xffffffff}) | type_index(arg.type());
      break;
    case Arg::Kind::kDict:
      r.payload = (r.payload & ~uint64_t{0xffffffff}) |
                  type_index(ArgType{ArgType::Kind::kTuple, {arg.type(), arg.value_type()}});
      break;
    default:
      break;
  }
  records_.push_back(r);
  for (ArgRef item : arg.items()) push_copy(item);
  return index;
}

ArgRange ArgPool::append(const std::vector<Arg>& args) {
  ArgRange range{static_cast<uint32_t>(records_.size()), 0, 0};
  for (const Arg& a : args) append_to(range, a);
  return range;
}

void ArgPool::append_to(ArgRange& into, const Arg& arg) {
  if (into.first + into.size != records_.size()) {
    throw Error("ArgPool::append_to: the range does not end where the pool ends");
  }
  push(arg);
  into.size = static_cast<uint32_t>(records_.size() - into.first);
  ++into.count;
}

ArgRange ArgPool::append(const ArgRefs& args) {
  ArgRange range{static_cast<uint32_t>(records_.size()), 0, 0};
  for (ArgRef a : args) {
    // A copy from this pool reads records that push_copy's growth may move: take a tree.
    if (a.pool() == this) {
      push(a.tree());
    } else {
      push_copy(a);
    }
    ++range.count;
  }
  range.size = static_cast<uint32_t>(records_.size() - range.first);
  return range;
}

ArgRange ArgPool::replace(ArgRange old, const std::vector<Arg>& args) {
  const size_t tail = records_.size() - (old.first + old.size);
  ArgRange fresh = append(args);
  const auto old_end = records_.begin() + old.first + old.size;
  // [head][old][tail][fresh] -> [head][fresh][tail]
  std::rotate(old_end, old_end + static_cast<std::ptrdiff_t>(tail), records_.end());
  records_.erase(records_.begin() + old.first, records_.begin() + old.first + old.size);
  fresh.first = old.first;
  return fresh;
}

bool ArgPool::holds(ArgRange range) const {
  const uint64_t end = uint64_t{range.first} + range.size;
  if (end > records_.size()) return false;
  uint64_t k = range.first;
  for (uint32_t n = 0; n < range.count; ++n) {
    if (k >= end) return false;
    k += records_[k].extent;
  }
  return k == end;
}

void ArgPool::set_ref(uint32_t index, ValueId ref) {
  Record& r = records_.at(index);
  if (!holds_ref(r.kind)) throw Error("ArgPool::set_ref: the arg holds no reference");
  r.payload = static_cast<uint64_t>(static_cast<int64_t>(ref));
}

void ArgPool::set_device(uint32_t index, int64_t type, int8_t device_index) {
  Record& r = records_.at(index);
  if (r.kind != Arg::Kind::kDevice) throw Error("ArgPool::set_device: not a device arg");
  r.payload = static_cast<uint64_t>(type);
  r.device_index = device_index;
}

}  // namespace ca
