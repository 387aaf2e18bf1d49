// SPDX-License-Identifier: BSD-3-Clause
#include "ca/arg.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "ca/error.h"

namespace ca {
namespace {

uint64_t double_bits(double d) {
  uint64_t bits = 0;
  std::memcpy(&bits, &d, sizeof d);
  return bits;
}

double bits_double(uint64_t bits) {
  double d = 0;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

bool holds_int(Arg::Kind kind) {
  return kind == Arg::Kind::kInt || kind == Arg::Kind::kLayout || kind == Arg::Kind::kScalarType ||
         kind == Arg::Kind::kMemoryFormat || kind == Arg::Kind::kDevice;
}

bool holds_ref(Arg::Kind kind) { return kind == Arg::Kind::kTensor || kind == Arg::Kind::kSymInt; }

// A type spelled out as its kinds, bracketed: the key that interns it.
void spell(const ArgType& t, std::string& out) {
  out += static_cast<char>('A' + static_cast<int>(t.kind));
  if (t.contained.empty()) return;
  out += '(';
  for (const ArgType& c : t.contained) spell(c, out);
  out += ')';
}

uint32_t low(uint64_t payload) { return static_cast<uint32_t>(payload); }
uint32_t high(uint64_t payload) { return static_cast<uint32_t>(payload >> 32); }

const ArgType& any_type() {
  static const ArgType any;
  return any;
}

const std::string& empty_string() {
  static const std::string empty;
  return empty;
}

}  // namespace

bool Arg::operator==(const Arg& o) const {
  if (kind != o.kind || items != o.items) return false;
  switch (kind) {
    case Kind::kBool:
      return b == o.b;
    case Kind::kDouble:
      return double_bits(d) == double_bits(o.d);
    case Kind::kComplex:
      return double_bits(c.real()) == double_bits(o.c.real()) &&
             double_bits(c.imag()) == double_bits(o.c.imag());
    case Kind::kString:
      return s == o.s;
    case Kind::kDevice:
      return i == o.i && device_index == o.device_index;
    case Kind::kTensor:
    case Kind::kSymInt:
      return ref == o.ref;
    case Kind::kList:
      return type == o.type;
    case Kind::kDict:
      return type == o.type && value_type == o.value_type;
    default:
      return !holds_int(kind) || i == o.i;
  }
}

Arg Arg::boolean(bool v) {
  Arg a;
  a.kind = Kind::kBool;
  a.b = v;
  return a;
}

Arg Arg::integer(int64_t v, Kind kind) {
  Arg a;
  a.kind = kind;
  a.i = v;
  return a;
}

Arg Arg::real(double v) {
  Arg a;
  a.kind = Kind::kDouble;
  a.d = v;
  return a;
}

Arg Arg::string(const std::string& v) {
  Arg a;
  a.kind = Kind::kString;
  a.s = v;
  return a;
}

Arg Arg::tensor(ValueId id) {
  Arg a;
  a.kind = Kind::kTensor;
  a.ref = id;
  return a;
}

Arg Arg::list(ArgType elem, std::vector<Arg> items) {
  Arg a;
  a.kind = Kind::kList;
  a.type = std::move(elem);
  a.items = std::move(items);
  return a;
}

Arg Arg::tuple(std::vector<Arg> items) {
  Arg a;
  a.kind = Kind::kTuple;
  a.items = std::move(items);
  return a;
}

// ArgRef

int64_t ArgRef::i() const {
  const auto& r = pool_->at(index_);
  return holds_int(r.kind) ? static_cast<int64_t>(r.payload) : 0;
}

double ArgRef::d() const {
  const auto& r = pool_->at(index_);
  return r.kind == Arg::Kind::kDouble ? bits_double(r.payload) : 0.0;
}

c10::complex<double> ArgRef::c() const {
  const auto& r = pool_->at(index_);
  return r.kind == Arg::Kind::kComplex ? pool_->complexes_[r.payload]
                                       : c10::complex<double>(0.0, 0.0);
}

const std::string& ArgRef::s() const {
  const auto& r = pool_->at(index_);
  return r.kind == Arg::Kind::kString ? pool_->strings_[r.payload] : empty_string();
}

ValueId ArgRef::ref() const {
  const auto& r = pool_->at(index_);
  return holds_ref(r.kind) ? static_cast<ValueId>(static_cast<int64_t>(r.payload)) : kNoValue;
}

const ArgType& ArgRef::type() const {
  const auto& r = pool_->at(index_);
  if (r.kind == Arg::Kind::kList) return pool_->types_[low(r.payload)];
  if (r.kind == Arg::Kind::kDict) return pool_->types_[low(r.payload)].contained[0];
  return any_type();
}

const ArgType& ArgRef::value_type() const {
  const auto& r = pool_->at(index_);
  return r.kind == Arg::Kind::kDict ? pool_->types_[low(r.payload)].contained[1] : any_type();
}

ArgRefs ArgRef::items() const {
  const auto& r = pool_->at(index_);
  const uint32_t count = is_container(r.kind) ? high(r.payload) : 0;
  return ArgRefs(*pool_, ArgRange{index_ + 1, r.extent - 1, count});
}

Arg ArgRef::tree() const {
  Arg a;
  a.kind = kind();
  a.b = b();
  a.device_index = device_index();
  a.ref = ref();
  a.i = i();
  a.d = d();
  a.c = c();
  a.s = s();
  a.type = type();
  a.value_type = value_type();
  a.items = items().trees();
  return a;
}

bool ArgRef::operator==(const ArgRef& o) const {
  if (kind() != o.kind() || extent() != o.extent()) return false;
  switch (kind()) {
    case Arg::Kind::kBool:
      return b() == o.b();
    case Arg::Kind::kDouble:
      return double_bits(d()) == double_bits(o.d());
    case Arg::Kind::kComplex:
      return double_bits(c().real()) == double_bits(o.c().real()) &&
             double_bits(c().imag()) == double_bits(o.c().imag());
    case Arg::Kind::kString:
      return s() == o.s();
    case Arg::Kind::kDevice:
      return i() == o.i() && device_index() == o.device_index();
    case Arg::Kind::kTensor:
    case Arg::Kind::kSymInt:
      return ref() == o.ref();
    case Arg::Kind::kList:
    case Arg::Kind::kTuple:
    case Arg::Kind::kDict:
      return type() == o.type() && value_type() == o.value_type() && items() == o.items();
    default:
      return i() == o.i();
  }
}

// ArgRefs

ArgRef ArgRefs::operator[](size_t k) const {
  iterator it = begin();
  for (size_t j = 0; j < k; ++j) ++it;
  return *it;
}

ArgRef ArgRefs::at(size_t k) const {
  if (k >= size()) {
    throw std::out_of_range("arg " + std::to_string(k) + " of " + std::to_string(size()));
  }
  return (*this)[k];
}

std::vector<Arg> ArgRefs::trees() const {
  std::vector<Arg> out;
  out.reserve(size());
  for (ArgRef a : *this) out.push_back(a.tree());
  return out;
}

bool ArgRefs::operator==(const ArgRefs& o) const {
  if (size() != o.size() || range_.size != o.range_.size) return false;
  return std::equal(begin(), end(), o.begin());
}

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
