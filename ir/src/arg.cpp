// SPDX-License-Identifier: BSD-3-Clause
// ca::Arg trees and the views (ArgRef, ArgRefs) that read a pool's records.
#include "ca/arg.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "arg_payload.h"

namespace ca {
namespace {

using detail::bits_double;
using detail::double_bits;
using detail::high;
using detail::holds_int;
using detail::holds_ref;
using detail::low;

const ArgType& any_type() {
  static const ArgType kAny;
  return kAny;
}

const std::string& empty_string() {
  static const std::string kEmpty;
  return kEmpty;
}

/// A tree Arg read through ArgRef's accessors, so that one comparison serves both forms.
struct TreeFields {
  const Arg& a;
  Arg::Kind kind() const { return a.kind; }
  bool b() const { return a.b; }
  int64_t i() const { return a.i; }
  double d() const { return a.d; }
  c10::complex<double> c() const { return a.c; }
  const std::string& s() const { return a.s; }
  ValueId ref() const { return a.ref; }
  int8_t device_index() const { return a.device_index; }
  const ArgType& type() const { return a.type; }
  const ArgType& value_type() const { return a.value_type; }
};

/// The fields of `x`'s kind (items aside) equal `y`'s; doubles by bits, so that NaN payloads
/// round-trip as equal.
template <class A>
bool same_fields(const A& x, const A& y) {
  switch (x.kind()) {
    case Arg::Kind::kBool:
      return x.b() == y.b();
    case Arg::Kind::kDouble:
      return double_bits(x.d()) == double_bits(y.d());
    case Arg::Kind::kComplex:
      return double_bits(x.c().real()) == double_bits(y.c().real()) &&
             double_bits(x.c().imag()) == double_bits(y.c().imag());
    case Arg::Kind::kString:
      return x.s() == y.s();
    case Arg::Kind::kDevice:
      return x.i() == y.i() && x.device_index() == y.device_index();
    case Arg::Kind::kTensor:
    case Arg::Kind::kSymInt:
      return x.ref() == y.ref();
    case Arg::Kind::kList:
      return x.type() == y.type();
    case Arg::Kind::kDict:
      return x.type() == y.type() && x.value_type() == y.value_type();
    default:
      return !holds_int(x.kind()) || x.i() == y.i();
  }
}

}  // namespace

bool Arg::operator==(const Arg& o) const {
  return kind == o.kind && same_fields(TreeFields{*this}, TreeFields{o}) && items == o.items;
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
  return kind() == o.kind() && extent() == o.extent() && same_fields(*this, o) &&
         items() == o.items();
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

}  // namespace ca
