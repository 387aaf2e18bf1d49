// SPDX-License-Identifier: BSD-3-Clause
#include "trainer/step_key.h"

#include <c10/util/Type.h>
#include <torch/csrc/autograd/variable.h>
#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <sstream>
#include <string_view>

namespace ca::detail {
namespace {

// Writes a key's fields at a cursor into room made once: a key has a few fields for each of
// thousands of inputs, and a string append per field cost more than the rest of the key.
class Cursor {
 public:
  Cursor(std::string& out, size_t bytes) : out_(out), pos_(out.size()) { out.resize(pos_ + bytes); }
  ~Cursor() { out_.resize(pos_); }  // what was written, if less than the room made
  Cursor(const Cursor&) = delete;
  Cursor& operator=(const Cursor&) = delete;

  uint32_t offset() const { return static_cast<uint32_t>(pos_); }
  template <class T>
  void put(const T& v) {
    write(&v, sizeof v);
  }
  void put_list(c10::IntArrayRef v) {
    put(v.size());
    write(v.data(), v.size() * sizeof(int64_t));
  }

 private:
  void write(const void* data, size_t n) {
    // The room is sized by tensor_meta_bytes and kScalarBytes, which follow what is put here.
    TORCH_INTERNAL_ASSERT(pos_ + n <= out_.size(), "step key: a field past the room made for it");
    std::memcpy(out_.data() + pos_, data, n);
    pos_ += n;
  }

  std::string& out_;
  size_t pos_;
};

// The bytes put_tensor_meta writes for a tensor of `dims` dimensions.
constexpr size_t tensor_meta_bytes(size_t dims) {
  return sizeof(c10::ScalarType) + sizeof(c10::DeviceType) + sizeof(c10::DeviceIndex) +
         sizeof(c10::Layout) + 2 * (sizeof(size_t) + dims * sizeof(int64_t)) + 3 * sizeof(bool);
}

// Everything about an input tensor that the captured graph bakes in: TensorMeta (dtype, sizes,
// device), the proxy's strides, and what accumulate_grad depends on.
void put_tensor_meta(Cursor& c, const at::Tensor& t) {
  c.put(t.scalar_type());
  c.put(t.device().type());
  c.put(t.device().index());
  c.put(t.layout());
  c.put_list(t.sizes());
  c.put_list(t.strides());
  // Read from the autograd meta once: is_leaf(), requires_grad() and grad() each find it again
  // (is_leaf and grad are what their facts mean: no grad_fn_, a defined grad_).
  const torch::autograd::AutogradMeta* meta = torch::autograd::impl::get_autograd_meta(t);
  const bool leaf = meta == nullptr || !meta->grad_fn_;
  c.put(meta != nullptr && meta->requires_grad());  // a view's answers for its base too
  c.put(leaf);
  c.put(leaf && meta != nullptr && meta->grad_.defined());  // a non-leaf's .grad is unused
}

// A lifted scalar's value, bit-exact (capture bakes it into the graph): a tag and 8 bytes.
constexpr size_t kScalarBytes = 1 + sizeof(int64_t);
void put_scalar(Cursor& c, const c10::IValue& v) {
  if (v.isInt()) {
    c.put('i');
    c.put(v.toInt());
  } else if (v.isDouble()) {
    c.put('d');
    c.put(v.toDouble());
  } else if (v.isSymInt()) {
    c.put('i');
    c.put(v.toSymInt().guard_int(__FILE__, __LINE__));
  } else if (v.isSymFloat()) {
    c.put('d');
    c.put(v.toSymFloat().guard_float(__FILE__, __LINE__));
  } else {
    c.put('?');
    c.put(c10::IValue::hash(v));
  }
}

template <class T>
T read(std::string_view bytes) {
  T v{};
  std::memcpy(&v, bytes.data() + bytes.size() - sizeof v, sizeof v);
  return v;
}

std::string scalar_text(std::string_view bytes) {
  if (bytes.size() == 1 + sizeof(int64_t) && bytes[0] == 'i') {
    return std::to_string(read<int64_t>(bytes));
  }
  if (bytes.size() == 1 + sizeof(double) && bytes[0] == 'd') {
    std::ostringstream os;
    os.precision(17);
    os << read<double>(bytes);
    return os.str();
  }
  return "(a hashed value)";
}

// One section of a key's bytes (its node keys, input metas, sizes or scalars), part by part.
class Parts {
 public:
  Parts(const StepKey& key, const std::vector<uint32_t>& ends, uint32_t start)
      : bytes_(key.bytes), ends_(ends), start_(start) {}
  size_t size() const { return ends_.size(); }
  std::string_view operator[](size_t i) const {
    const uint32_t begin = i == 0 ? start_ : ends_[i - 1];
    return bytes_.substr(begin, ends_[i] - begin);
  }
  uint32_t end() const { return ends_.empty() ? start_ : ends_.back(); }

 private:
  std::string_view bytes_;
  const std::vector<uint32_t>& ends_;
  uint32_t start_;
};

struct Sections {
  Parts nodes, inputs, sizes, scalars;
  explicit Sections(const StepKey& k)
      : nodes(k, k.node_ends, 0),
        inputs(k, k.input_ends, nodes.end()),
        sizes(k, k.size_ends, inputs.end()),
        scalars(k, k.scalar_ends, sizes.end()) {}
};

// How many leading parts two sections share.
size_t shared(const Parts& a, const Parts& b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
  return n;
}

std::string type_name(const std::type_info* type) { return c10::demangle(type->name()); }

}  // namespace

size_t StepKey::hash() const {
  // XXH3: a key is tens of KiB on deep graphs and is hashed every step; std::hash (murmur) was
  // a third of the key's instructions on the MLP, XXH3 is a quarter.
  uint64_t seed = XXH3_64bits(options.data(), options.size());
  seed = XXH3_64bits_withSeed(bytes.data(), bytes.size(), seed);
  const uint64_t counts[] = {node_ends.size(), input_ends.size(), size_ends.size(),
                             scalar_ends.size()};
  return static_cast<size_t>(XXH3_64bits_withSeed(counts, sizeof counts, seed));
}

StepKey step_key(GraphWalk& walk, std::string options) {
  StepKey key;
  key.options = std::move(options);
  key.bytes = std::move(walk.node_keys);
  key.node_ends = std::move(walk.node_key_ends);
  key.node_types = std::move(walk.node_types);
  const auto& inputs = walk.compiler.tensor_args.inputs;
  const auto& sizes = walk.compiler.all_size_inputs;
  const auto& scalars = walk.compiler.lifted_ivalue_args.args;
  size_t bytes = sizes.size() * sizeof(int64_t) + scalars.size() * kScalarBytes;
  for (const at::Tensor& t : inputs) bytes += tensor_meta_bytes(static_cast<size_t>(t.dim()));
  key.input_ends.reserve(inputs.size());
  key.size_ends.reserve(sizes.size());
  key.scalar_ends.reserve(scalars.size());
  Cursor c(key.bytes, bytes);
  for (const at::Tensor& t : inputs) {
    put_tensor_meta(c, t);
    key.input_ends.push_back(c.offset());
  }
  for (const auto& s : sizes) {
    c.put(s.value);
    key.size_ends.push_back(c.offset());
  }
  for (const auto& lifted : scalars) {
    put_scalar(c, *lifted.actual_ptr);
    key.scalar_ends.push_back(c.offset());
  }
  return key;
}

void append_tensor_metas(const std::vector<at::Tensor>& inputs, std::string& out) {
  size_t bytes = 0;
  for (const at::Tensor& t : inputs) bytes += tensor_meta_bytes(static_cast<size_t>(t.dim()));
  Cursor c(out, bytes);
  for (const at::Tensor& t : inputs) put_tensor_meta(c, t);
}

size_t common_prefix(const StepKey& key, const StepKey& cached) {
  if (key.options != cached.options) return 0;
  const Sections a(key), b(cached);
  const size_t nodes = shared(a.nodes, b.nodes);
  if (nodes != a.nodes.size() || nodes != b.nodes.size()) return 1 + nodes;
  return 1 + nodes + shared(a.inputs, b.inputs);
}

std::string describe_difference(const StepKey& key, const StepKey& cached) {
  if (key.options != cached.options) return "the backward options or the tapped gradients differ";
  const Sections a(key), b(cached);
  const size_t nodes = shared(a.nodes, b.nodes);
  if (nodes < a.nodes.size() && nodes < b.nodes.size()) {
    const std::string now = type_name(key.node_types[nodes]);
    const std::string was = type_name(cached.node_types[nodes]);
    if (now != was) return "node " + std::to_string(nodes) + " is " + now + ", was " + was;
    return "node " + std::to_string(nodes) + " (" + now +
           "): its saved constants, specialized sizes or edges differ";
  }
  if (a.nodes.size() != b.nodes.size()) {
    return "the graph has " + std::to_string(a.nodes.size()) + " nodes, the closest cached " +
           "graph " + std::to_string(b.nodes.size());
  }
  const size_t inputs = shared(a.inputs, b.inputs);
  if (inputs < a.inputs.size() && inputs < b.inputs.size()) {
    return "input " + std::to_string(inputs) +
           ": its dtype, device, sizes, strides, requires_grad or .grad presence differ";
  }
  if (a.inputs.size() != b.inputs.size()) return "the number of inputs differs";
  const size_t sizes = shared(a.sizes, b.sizes);
  if (sizes < a.sizes.size() && sizes < b.sizes.size()) {
    return "specialized size " + std::to_string(sizes) + " is " +
           std::to_string(read<int64_t>(a.sizes[sizes])) + ", was " +
           std::to_string(read<int64_t>(b.sizes[sizes]));
  }
  const size_t scalars = shared(a.scalars, b.scalars);
  if (scalars < a.scalars.size() && scalars < b.scalars.size()) {
    return "lifted scalar " + std::to_string(scalars) + " is " + scalar_text(a.scalars[scalars]) +
           ", was " + scalar_text(b.scalars[scalars]);
  }
  return "the number of sizes or scalars differs";
}

}  // namespace ca::detail
