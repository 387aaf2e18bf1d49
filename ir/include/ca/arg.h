// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file
/// Packed arguments in the IR. Two forms of the same thing:
///  - `Arg`, a tree value that front ends, tools and tests build and edit;
///  - `ArgPool`, where a graph keeps every node's args as one pre-order array of 16-byte
///    records, strings, complex numbers and types in side tables (one copy of each distinct
///    type and string). Readers walk it through `ArgRef` (one arg) and `ArgRefs` (a sequence
///    of sibling args): views that point at their pool, valid while it stays where it is (a
///    moved or copied Graph has a pool of its own) and is not appended to.

#include <c10/util/complex.h>

#include <cstdint>
#include <iterator>
#include <string>
#include <unordered_map>
#include <vector>

namespace ca {

/// Index of an SSA value: graph inputs come first, then node outputs in definition order.
using ValueId = int32_t;
/// Stands for an undefined tensor (an absent gradient, an unset saved variable).
inline constexpr ValueId kNoValue = -1;

/// A c10 type, as much as packed args need to rebuild typed containers exactly (a `List[bool]`
/// stays a `List[bool]`, an empty `List[int]` keeps its element type).
struct ArgType {
  enum class Kind : uint8_t {
    kAny,
    kNone,
    kBool,
    kInt,
    kFloat,
    kComplex,
    kString,
    kTensor,
    kSymInt,
    kSymFloat,
    kNumber,
    kLayout,
    kDevice,
    kScalarType,
    kMemoryFormat,
    kOptional,  ///< contained = {T}
    kList,      ///< contained = {T}
    kTuple,     ///< contained = element types
    kDict,      ///< contained = {K, V}
  };
  Kind kind = Kind::kAny;
  std::vector<ArgType> contained;

  bool operator==(const ArgType& o) const { return kind == o.kind && contained == o.contained; }
  bool operator!=(const ArgType& o) const { return !(*this == o); }
};

/// One packed argument as a tree: an IValue in which tensors and symbolic sizes are references
/// to values. Layout, ScalarType and MemoryFormat are ints inside an IValue; they keep their
/// own kinds here so that dumps and other front ends can read them. Only the fields of `kind`
/// are kept when a graph stores the arg (`ArgPool::append`).
struct Arg {
  enum class Kind : uint8_t {
    kNone,
    kBool,          ///< payload in `b`
    kInt,           ///< payload in `i`
    kDouble,        ///< payload in `d`
    kComplex,       ///< payload in `c`
    kString,        ///< payload in `s`
    kLayout,        ///< payload in `i`
    kScalarType,    ///< payload in `i`
    kMemoryFormat,  ///< payload in `i`
    kDevice,        ///< payload in `i` (DeviceType) and `device_index`
    kTensor,        ///< `ref` names a tensor value; kNoValue is an undefined tensor
    kSymInt,        ///< `ref` names an int graph input (a symbolic size)
    kList,          ///< typed list: `type` is the element type, `items` the elements
    kTuple,         ///< `items` are the elements
    kDict,          ///< `type` = key type, `value_type` = value type, `items` = k0, v0, k1, v1, ...
  };
  Kind kind = Kind::kNone;
  bool b = false;
  int8_t device_index = -1;
  ValueId ref = kNoValue;
  int64_t i = 0;
  double d = 0.0;
  c10::complex<double> c{0.0, 0.0};
  std::string s;
  ArgType type;
  ArgType value_type;
  std::vector<Arg> items;

  /// Compares the fields of `kind` (doubles by bits, so NaN payloads compare equal).
  bool operator==(const Arg& o) const;
  bool operator!=(const Arg& o) const { return !(*this == o); }

  static Arg none() { return Arg{}; }
  static Arg boolean(bool v);
  static Arg integer(int64_t v, Kind kind = Kind::kInt);
  static Arg real(double v);
  static Arg string(const std::string& v);
  static Arg tensor(ValueId id);
  static Arg list(ArgType elem, std::vector<Arg> items);
  static Arg tuple(std::vector<Arg> items);
};

/// True for the kinds that hold items: kList, kTuple, kDict.
inline bool is_container(Arg::Kind kind) {
  return kind == Arg::Kind::kList || kind == Arg::Kind::kTuple || kind == Arg::Kind::kDict;
}

/// Where a sequence of sibling args lies in a pool: `count` args, taking `size` records from
/// record `first` on. A node's args are one range.
struct ArgRange {
  uint32_t first = 0;
  uint32_t size = 0;   ///< records, every nested item included
  uint32_t count = 0;  ///< args at the top level
};

class ArgPool;
class ArgRefs;

/// A view of one arg in a pool; the accessors read the fields of its kind (others read as in a
/// default `Arg`).
class ArgRef {
 public:
  ArgRef(const ArgPool& pool, uint32_t index) : pool_(&pool), index_(index) {}

  Arg::Kind kind() const;
  bool b() const;
  int64_t i() const;
  double d() const;
  c10::complex<double> c() const;
  const std::string& s() const;
  ValueId ref() const;
  int8_t device_index() const;
  const ArgType& type() const;        ///< kList: element type; kDict: key type
  const ArgType& value_type() const;  ///< kDict: value type
  ArgRefs items() const;
  /// This arg as a sequence of one.
  ArgRefs alone() const;

  /// Records in this arg's subtree, itself included.
  uint32_t extent() const;
  /// Position of this arg's record in its pool, and the pool.
  uint32_t index() const { return index_; }
  const ArgPool* pool() const { return pool_; }
  /// A copy as a tree, to edit or to compare.
  Arg tree() const;
  /// Compares by content, like `Arg::operator==`; the two may live in different pools.
  bool operator==(const ArgRef& o) const;
  bool operator!=(const ArgRef& o) const { return !(*this == o); }

 private:
  const ArgPool* pool_;
  uint32_t index_;
};

/// A view of sibling args (a node's args, or a container's items), iterated in order.
class ArgRefs {
 public:
  class Iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = ArgRef;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = ArgRef;

    Iterator(const ArgPool& pool, uint32_t index) : pool_(&pool), index_(index) {}
    ArgRef operator*() const { return ArgRef(*pool_, index_); }
    Iterator& operator++();
    Iterator operator++(int) {
      Iterator old = *this;
      ++*this;
      return old;
    }
    bool operator==(const Iterator& o) const { return index_ == o.index_; }
    bool operator!=(const Iterator& o) const { return index_ != o.index_; }

   private:
    const ArgPool* pool_;
    uint32_t index_;
  };
  using iterator = Iterator;

  ArgRefs(const ArgPool& pool, ArgRange range) : pool_(&pool), range_(range) {}

  size_t size() const { return range_.count; }
  bool empty() const { return range_.count == 0; }
  iterator begin() const { return {*pool_, range_.first}; }
  iterator end() const { return {*pool_, range_.first + range_.size}; }
  /// Arg `k`, found by stepping over the `k` before it; throws std::out_of_range past the end.
  ArgRef at(size_t k) const;
  /// Arg `k` (k < size()), found by stepping over the `k` before it.
  ArgRef operator[](size_t k) const;
  ArgRange range() const { return range_; }
  /// Copies as trees.
  std::vector<Arg> trees() const;
  bool operator==(const ArgRefs& o) const;
  bool operator!=(const ArgRefs& o) const { return !(*this == o); }

 private:
  const ArgPool* pool_;
  ArgRange range_;
};

/// Every arg of a graph, in one pre-order array of records. Appending may move the records:
/// views taken before an append must be taken again.
class ArgPool {
 public:
  /// Appends `args` (trees) as one range, keeping only each arg's kind's fields. Throws
  /// FormatError when an arg that is not a container has items, or past 2^32 - 1 records.
  ArgRange append(const std::vector<Arg>& args);
  /// An empty range where the next append goes, to grow with append_to.
  ArgRange next_range() const { return ArgRange{static_cast<uint32_t>(records_.size()), 0, 0}; }
  /// Appends one tree to the range `into`, which must end where the pool ends (the range that
  /// is being built).
  void append_to(ArgRange& into, const Arg& arg);
  /// Appends a copy of args held in a pool (this one or another).
  ArgRange append(const ArgRefs& args);
  /// Replaces the records of `old` (a range of this pool) with `args` and returns their range.
  /// The records after `old` move by the difference in size: the caller shifts the ranges that
  /// lie there (Graph::set_args does). For tools that edit a graph; readers append.
  ArgRange replace(ArgRange old, const std::vector<Arg>& args);

  ArgRefs refs(ArgRange range) const { return ArgRefs(*this, range); }
  /// True when `range` is `range.count` whole args of this pool, as append returns them.
  bool holds(ArgRange range) const;
  ArgRef ref(uint32_t index) const { return ArgRef(*this, index); }
  /// Records held (a capacity figure: 16 bytes each).
  size_t records() const { return records_.size(); }
  void reserve(size_t records) { records_.reserve(records); }

  /// In-place edits of one record (its kind stays): a reference, a device.
  void set_ref(uint32_t index, ValueId ref);
  void set_device(uint32_t index, int64_t type, int8_t device_index);

 private:
  friend class ArgRef;
  friend class ArgRefs;

  /// One arg; containers' items follow it. 16 bytes.
  struct Record {
    Arg::Kind kind = Arg::Kind::kNone;
    bool b = false;
    int8_t device_index = -1;
    uint32_t extent = 1;  ///< records in this subtree, itself included
    /// kInt-like kinds: the int; kDouble: the double's bits; kTensor/kSymInt: the ref;
    /// kString/kComplex: a side-table index; containers: type index (low 32 bits, kDict's is
    /// a {K, V} tuple type) and item count (high 32 bits).
    uint64_t payload = 0;
  };
  static_assert(sizeof(Record) == 16, "a graph holds millions of records");

  uint32_t push(const Arg& arg);
  uint32_t push_copy(const ArgRef& arg);
  uint32_t type_index(const ArgType& type);
  uint32_t string_index(const std::string& s);
  const Record& at(uint32_t index) const { return records_[index]; }

  std::vector<Record> records_;
  std::vector<std::string> strings_;
  std::vector<c10::complex<double>> complexes_;
  std::vector<ArgType> types_;
  std::unordered_map<std::string, uint32_t> string_ids_;
  std::unordered_map<std::string, uint32_t> type_ids_;  ///< by a type's spelled-out kinds
};

/// Calls `visit(ref)` for each reference in `arg`'s tree, in pre-order: every kTensor and
/// kSymInt whose `ref()` names a value (an undefined tensor, kNoValue, refers to nothing).
/// `visit` returns true to go on and false to stop; for_each_ref returns false when a visit
/// stopped it. A pool's references are rewritten through `ArgPool::set_ref(ref.index(), …)`.
template <class Visit>
bool for_each_ref(const ArgRef& arg, Visit&& visit);

/// The same for each arg of `args`.
template <class Visit>
bool for_each_ref(const ArgRefs& args, Visit&& visit) {
  for (ArgRef a : args) {
    if (!for_each_ref(a, visit)) return false;
  }
  return true;
}

/// True when `arg`'s tree holds a reference of kind `kind` (kTensor or kSymInt), or of either
/// when `kind` is kNone.
inline bool has_refs(const ArgRef& arg, Arg::Kind kind = Arg::Kind::kNone) {
  return !for_each_ref(
      arg, [kind](const ArgRef& ref) { return kind != Arg::Kind::kNone && ref.kind() != kind; });
}

// Inline: a load reads every record through these.

inline Arg::Kind ArgRef::kind() const { return pool_->at(index_).kind; }
inline bool ArgRef::b() const { return pool_->at(index_).b; }
inline int8_t ArgRef::device_index() const { return pool_->at(index_).device_index; }
inline uint32_t ArgRef::extent() const { return pool_->at(index_).extent; }

inline ArgRefs ArgRef::alone() const { return ArgRefs(*pool_, ArgRange{index_, extent(), 1}); }

inline ArgRefs::Iterator& ArgRefs::Iterator::operator++() {
  index_ += pool_->at(index_).extent;
  return *this;
}

template <class Visit>
bool for_each_ref(const ArgRef& arg, Visit&& visit) {
  // Pre-order is the pool's order: a subtree is the records from its root on.
  const ArgPool& pool = *arg.pool();
  const uint32_t end = arg.index() + arg.extent();
  for (uint32_t k = arg.index(); k < end; ++k) {
    const ArgRef r = pool.ref(k);
    const Arg::Kind kind = r.kind();
    if ((kind == Arg::Kind::kTensor || kind == Arg::Kind::kSymInt) && r.ref() != kNoValue &&
        !visit(r)) {
      return false;
    }
  }
  return true;
}

}  // namespace ca
