// SPDX-License-Identifier: BSD-3-Clause
// Bounds a .pt pickle before torch's Unpickler runs: a simulation of its stack in which each
// value only records how deeply it nests containers.
#include "pickle_nesting.h"

#include <torch/csrc/jit/serialization/pickler_helper.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "ca/error.h"

namespace ca::detail {
namespace {

using Op = torch::jit::PickleOpCode;

/// A value the unpickler would build. `contained`: it sits inside another container (or is
/// immutable), so it must not grow any more, or its parents' recorded depth would be stale.
struct Value {
  size_t depth = 0;
  bool contained = false;
};

class NestingScan {
 public:
  NestingScan(const uint8_t* data, size_t size, size_t max_nesting)
      : data_(data), size_(size), max_nesting_(max_nesting) {}

  void run() {
    if (size_ < 2 || data_[0] != static_cast<uint8_t>(Op::PROTO) || data_[1] != 2) {
      fail("expected a protocol-2 pickle (PROTO 2) at the start");
    }
    pos_ = 2;
    while (true) {
      if (pos_ >= size_) fail("the pickle ends without STOP");
      op_pos_ = pos_;
      op_ = data_[pos_++];
      if (op_ == static_cast<uint8_t>(Op::STOP)) return;
      step(static_cast<Op>(op_));
    }
  }

 private:
  void step(Op op) {
    switch (op) {
      case Op::MARK:
        marks_.push_back(stack_.size());
        break;
      case Op::NONE:
      case Op::NEWTRUE:
      case Op::NEWFALSE:
        push({});
        break;
      case Op::BININT1:
        skip(1), push({});
        break;
      case Op::BININT2:
        skip(2), push({});
        break;
      case Op::BININT:
        skip(4), push({});
        break;
      case Op::BINFLOAT:
        skip(8), push({});
        break;
      case Op::LONG1:
        skip(read_le(1)), push({});
        break;
      case Op::BINUNICODE:
        skip(read_le(4)), push({});
        break;
      case Op::GLOBAL:
        skip_line(), skip_line(), push({});
        break;
      case Op::BINPERSID:
        pop(), push({});
        break;  // a storage: no nesting
      case Op::EMPTY_LIST:
      case Op::EMPTY_DICT:
        push({1, false});
        break;
      case Op::EMPTY_TUPLE:
        push({1, true});
        break;
      case Op::TUPLE:
        make_container(pop_mark(), true);
        break;
      case Op::LIST:
      case Op::DICT:
        make_container(pop_mark(), false);
        break;
      case Op::TUPLE1:
        make_container(top_items(1), true);
        break;
      case Op::TUPLE2:
        make_container(top_items(2), true);
        break;
      case Op::TUPLE3:
        make_container(top_items(3), true);
        break;
      case Op::APPENDS:
      case Op::SETITEMS: {
        const size_t first = pop_mark();
        if (first == 0) fail("no container below the mark");
        add_items(first - 1, first);
        break;
      }
      case Op::APPEND:  // what Python pickles a one-item list with
        add_items(top_items(2), top_items(1));
        break;
      case Op::SETITEM:
        add_items(top_items(3), top_items(2));
        break;
      case Op::BINPUT:
        put(read_le(1));
        break;
      case Op::LONG_BINPUT:
        put(read_le(4));
        break;
      case Op::BINGET:
        get(read_le(1));
        break;
      case Op::LONG_BINGET:
        get(read_le(4));
        break;
      case Op::NEWOBJ:
        pop();
        break;
      case Op::REDUCE:
      case Op::BUILD:
        reduce();
        break;
      default:
        fail("not an opcode torch's unpickler reads");
    }
  }

  /// A call's result may hold its argument, so it is as deep; neither may grow afterwards.
  void reduce() {
    const size_t arg = pop();
    pop();  // the callable
    values_[arg].contained = true;
    push({values_[arg].depth, true});
  }

  /// Replaces stack_[first..] by a new container holding them.
  void make_container(size_t first, bool immutable) {
    Value v{1, immutable};
    for (size_t i = first; i < stack_.size(); ++i) v.depth = std::max(v.depth, hold(stack_[i]));
    stack_.resize(first);
    push(v);
  }

  /// Moves stack_[first..] into the container at stack_[at].
  void add_items(size_t at, size_t first) {
    Value& c = values_[stack_[at]];
    if (c.contained) fail("a container changes after it was put inside another (a cycle?)");
    for (size_t i = first; i < stack_.size(); ++i) {
      if (stack_[i] == stack_[at]) fail("a container is put inside itself (a cycle)");
      c.depth = std::max(c.depth, hold(stack_[i]));
    }
    check_depth(c.depth);
    stack_.resize(first);
  }

  /// Marks value `id` as held by a container; returns the depth that container gets from it.
  size_t hold(size_t id) {
    values_[id].contained = true;
    return values_[id].depth + 1;
  }

  void put(size_t id) {
    if (stack_.empty()) fail("memo put on an empty stack");
    if (id > memo_.size()) {
      fail("memo id " + std::to_string(id) + " skips ahead (" + std::to_string(memo_.size()) +
           " entries so far)");
    }
    if (id == memo_.size()) memo_.push_back(stack_.back());
    memo_[id] = stack_.back();
  }

  void get(size_t id) {
    if (id >= memo_.size()) fail("memo id " + std::to_string(id) + " was never put");
    stack_.push_back(memo_[id]);
  }

  void push(Value v) {
    check_depth(v.depth);
    values_.push_back(v);
    stack_.push_back(values_.size() - 1);
  }

  size_t pop() {
    if (stack_.empty()) fail("stack underflow");
    const size_t id = stack_.back();
    stack_.pop_back();
    return id;
  }

  /// Index of the first of the top `n` stack values.
  size_t top_items(size_t n) {
    if (stack_.size() < n) fail("stack underflow");
    return stack_.size() - n;
  }

  size_t pop_mark() {
    if (marks_.empty()) fail("no MARK");
    const size_t first = marks_.back();
    marks_.pop_back();
    if (first > stack_.size()) fail("the stack shrank below its MARK");
    return first;
  }

  void check_depth(size_t depth) {
    if (depth > max_nesting_) {
      fail("values nested deeper than " + std::to_string(max_nesting_) + " levels");
    }
  }

  void skip(size_t n) {
    if (n > size_ - pos_) {
      fail("an argument of " + std::to_string(n) + " bytes runs past the end");
    }
    pos_ += n;
  }

  size_t read_le(size_t bytes) {
    const size_t at = pos_;
    skip(bytes);
    size_t v = 0;
    for (size_t i = bytes; i-- > 0;) v = (v << 8) | data_[at + i];
    return v;
  }

  void skip_line() {
    const void* nl = std::memchr(data_ + pos_, '\n', size_ - pos_);
    if (nl == nullptr) fail("a GLOBAL name runs past the end");
    pos_ = static_cast<size_t>(static_cast<const uint8_t*>(nl) - data_) + 1;
  }

  [[noreturn]] void fail(const std::string& why) const {
    char op[8];
    std::snprintf(op, sizeof op, "0x%02x", op_);
    throw FormatError("data.pkl byte " + std::to_string(op_pos_) + " (opcode " + op + "): " + why);
  }

  const uint8_t* data_;
  size_t size_;
  size_t max_nesting_;
  size_t pos_ = 0;
  size_t op_pos_ = 0;
  uint8_t op_ = 0;
  std::vector<Value> values_;  // every value built so far, by id
  std::vector<size_t> stack_;  // value ids
  std::vector<size_t> marks_;  // stack sizes at each MARK
  std::vector<size_t> memo_;   // value ids
};

}  // namespace

void check_pickle_nesting(const uint8_t* data, size_t size, size_t max_nesting) {
  NestingScan(data, size, max_nesting).run();
}

}  // namespace ca::detail
