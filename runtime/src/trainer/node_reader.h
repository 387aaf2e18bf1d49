// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Reads what a node's `compiled_args` collects, for the per-step check of a cached graph (see
// step_check.h): the same fields in the same order (tools/gen_node_readers.py writes a reader per
// generated node type from torch's own generator), with constants appended to one byte string
// and tensors to one input list, where upstream's CompiledNodeArgs allocates a key buffer per
// node and maps every tensor and saved variable.

#include <ATen/TensorGeometry.h>
#include <c10/util/OptionalArrayRef.h>
#include <c10/util/flat_hash_map.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/input_metadata.h>
#include <torch/csrc/autograd/saved_variable.h>

#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "torch_compat.h"

namespace ca::detail {

/// The distinct tensors a step's nodes collect, in collection order (the captured graph's input
/// order), and which of them each collection was: 0 for an undefined tensor, else 1 + its index.
/// Recording assigns the ids; matching checks each against the recorded one.
class StepTensors {
 public:
  /// Records: ids are assigned as upstream's TensorArgs assigns them (one per TensorImpl).
  StepTensors() = default;
  /// Matches against `expected`, the ids a recording gave.
  explicit StepTensors(const std::vector<uint32_t>& expected) : expected_(&expected) {
    inputs_.reserve(expected.size());
  }

  void add(const at::Tensor& t);
  /// Whether every collection matched and, when matching, all were made and the inputs are
  /// distinct tensors (two recorded ids are never one tensor now).
  bool complete() const;
  bool ok() const { return ok_; }
  std::vector<at::Tensor>& inputs() { return inputs_; }
  const std::vector<uint32_t>& ids() const { return ids_; }

 private:
  const std::vector<uint32_t>* expected_ = nullptr;
  size_t next_ = 0;
  bool ok_ = true;
  std::vector<at::Tensor> inputs_;
  std::vector<uint32_t> ids_;                                  // recording only
  ska::flat_hash_map<const c10::TensorImpl*, uint32_t> seen_;  // recording only
};

/// Where a reader's bytes go: appended to a recording, or compared as they come with a recording
/// (a step then writes nothing, and a field that differs is found where it is read).
class ReadBytes {
 public:
  /// Records into `out`.
  explicit ReadBytes(std::string* out) : out_(out) {}
  /// Compares with `expected`.
  explicit ReadBytes(const std::string& expected) : expected_(&expected) {}

  void put(const void* data, size_t n) {
    if (out_ != nullptr) {
      out_->append(static_cast<const char*>(data), n);
      return;
    }
    same_ = same_ && pos_ + n <= expected_->size() &&
            std::memcmp(expected_->data() + pos_, data, n) == 0;
    pos_ += n;
  }
  /// Whether everything compared equal so far (always true when recording).
  bool same() const { return same_; }
  /// How far the comparison got: where the recording's remaining bytes begin.
  size_t position() const { return pos_; }

 private:
  std::string* out_ = nullptr;
  const std::string* expected_ = nullptr;
  size_t pos_ = 0;
  bool same_ = true;
};

/// Visits one node's saved state into `bytes` and `tensors`. A state it cannot read as upstream
/// would (a saved variable with unpack hooks, a nested tensor's metadata) makes it not ok; the
/// step then takes the full walk, which handles or refuses it. Unpacking a saved variable throws
/// as eager's unpack does (an in-place change, a second backward); callers treat that as not ok.
class NodeReader {
 public:
  NodeReader(ReadBytes& bytes, StepTensors& tensors) : bytes_(bytes), tensors_(tensors) {}

  /// The node being read (its saved outputs unpack with it as their grad_fn).
  void begin(const compat::NodePtr& node) { node_ = &node; }
  /// Whether every field so far could be read and, when comparing, was equal.
  bool ok() const { return ok_ && tensors_.ok() && bytes_.same(); }

  void collect(const torch::autograd::SavedVariable& sv, bool is_output);
  void collect(const std::vector<torch::autograd::SavedVariable>& v, bool is_output) {
    put(v.size());
    for (const auto& sv : v) collect(sv, is_output);
  }
  void collect(const at::Tensor& t) { tensors_.add(t); }
  void collect(const c10::SymInt& s) {
    const std::optional<int64_t> v = s.maybe_as_int();  // inline for a plain int
    put(v.has_value() ? *v : s.guard_int(__FILE__, __LINE__));
  }
  void collect(const c10::Scalar& s);
  void collect(const c10::TensorOptions& o) {
    collect(o.device());
    collect(o.dtype());
    put(o.layout());
    put(o.requires_grad());
    put(o.pinned_memory());
    collect(o.memory_format_opt());
  }
  void collect(const at::TensorGeometry& g) {
    collect(g.sym_sizes());
    collect(g.sym_strides());
    collect(g.sym_storage_offset());
  }
  void collect(const torch::autograd::TypeAndSize& t) {
    collect(t.sym_sizes);
    collect(t.options);
  }
  void collect(const c10::Device& d) {
    put(d.type());
    put(d.index());
  }
  void collect(const std::string& s) {
    put(s.size());
    bytes_.put(s.data(), s.size());
  }
  void collect(const caffe2::TypeMeta& t) { put(t.id()); }
  /// An edge's target metadata, which validate_outputs checks the node's outputs against.
  void collect(const torch::autograd::InputMetadata& m) {
    if (m.is_nested_tensor()) {  // upstream refuses these
      ok_ = false;
      return;
    }
    collect(m.options());
    put(m.is_tensor_subclass());
    const auto& shape = m.shape_as_dim_vector();
    collect(c10::SymIntArrayRef(shape));
    // Beyond upstream's collection, as the step key (compiler_session.cpp's append_grad_dtypes).
    collect(compat::edge_grad_dtype(m));
  }

  template <class T>
  void collect(const std::vector<T>& v) {
    put(v.size());
    for (const T& x : v) collect(x);
  }
  template <class T>
  void collect(c10::ArrayRef<T> v) {
    put(v.size());
    for (const T& x : v) collect(x);
  }
  template <class T>
  void collect(const c10::OptionalArray<T>& v) {
    collect(v.list);
  }
  template <class T>
  void collect(const std::optional<T>& v) {
    put(v.has_value());
    if (v.has_value()) collect(*v);
  }
  template <class A, class B>
  void collect(const std::pair<A, B>& p) {
    collect(p.first);
    collect(p.second);
  }
  /// Numbers, bools and enums (ScalarType, Layout, MemoryFormat, ...): their bytes.
  template <class T, std::enable_if_t<std::is_arithmetic_v<T> || std::is_enum_v<T>, int> = 0>
  void collect(T v) {
    put(v);
  }

  /// Marks the node unreadable (see the class comment).
  void refuse() { ok_ = false; }

 private:
  template <class T>
  void put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes_.put(&v, sizeof v);
  }

  ReadBytes& bytes_;
  StepTensors& tensors_;
  const compat::NodePtr* node_ = nullptr;
  bool ok_ = true;
};

/// Reads one node of the type it was made for (a generated node type, or one written by hand).
using NodeReadFn = void (*)(const torch::autograd::Node& node, NodeReader& r);

struct NodeReaderEntry {
  const std::type_info* type;
  NodeReadFn read;
};

/// One reader per generated node type of the installed torch (tools/gen_node_readers.py).
const std::vector<NodeReaderEntry>& generated_node_readers();

/// The reader for nodes of `type`: generated ones, GraphRoot and AccumulateGrad; null for any
/// other (custom functions, CopySlices, ...), whose graphs keep the full walk every step.
NodeReadFn node_reader_for(const std::type_info& type);

}  // namespace ca::detail
