#include "trainer/step_key.h"

#include <c10/util/Type.h>

#include <algorithm>
#include <cstring>
#include <sstream>

namespace ca::detail {
namespace {

template <class T>
void put(std::string& out, const T& v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

void put_list(std::string& out, c10::IntArrayRef v) {
  put(out, v.size());
  out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(int64_t));
}

// Everything about an input tensor that the captured graph bakes in: TensorMeta (dtype, sizes,
// device), the proxy's strides, and what accumulate_grad depends on.
std::string tensor_meta(const at::Tensor& t) {
  std::string out;
  put(out, t.scalar_type());
  put(out, t.device().type());
  put(out, t.device().index());
  put(out, t.layout());
  put_list(out, t.sizes());
  put_list(out, t.strides());
  put(out, t.requires_grad());
  put(out, t.is_leaf());
  put(out, t.is_leaf() && t.grad().defined());  // .grad of a non-leaf warns and is unused
  return out;
}

// A lifted scalar's value, bit-exact (capture bakes it into the graph).
std::string scalar_bytes(const c10::IValue& v) {
  std::string out;
  if (v.isInt()) {
    out.push_back('i');
    put(out, v.toInt());
  } else if (v.isDouble()) {
    out.push_back('d');
    put(out, v.toDouble());
  } else if (v.isSymInt()) {
    out.push_back('i');
    put(out, v.toSymInt().guard_int(__FILE__, __LINE__));
  } else if (v.isSymFloat()) {
    out.push_back('d');
    put(out, v.toSymFloat().guard_float(__FILE__, __LINE__));
  } else {
    out.push_back('?');
    put(out, c10::IValue::hash(v));
  }
  return out;
}

std::string scalar_text(const std::string& bytes) {
  if (bytes.size() == 1 + sizeof(int64_t) && bytes[0] == 'i') {
    int64_t v;
    std::memcpy(&v, bytes.data() + 1, sizeof v);
    return std::to_string(v);
  }
  if (bytes.size() == 1 + sizeof(double) && bytes[0] == 'd') {
    double v;
    std::memcpy(&v, bytes.data() + 1, sizeof v);
    std::ostringstream os;
    os.precision(17);
    os << v;
    return os.str();
  }
  return "(a hashed value)";
}

// The type name a node key starts with (see collect_node).
std::string type_of(const std::string& node_key) {
  return c10::demangle(node_key.substr(0, node_key.find('\0')).c_str());
}

}  // namespace

size_t StepKey::hash() const {
  const std::hash<std::string> h;
  size_t seed = h(options);
  auto mix = [&seed](size_t v) { seed ^= v + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2); };
  for (const std::string& k : node_keys) mix(h(k));
  for (const std::string& m : input_metas) mix(h(m));
  for (int64_t v : sizes) mix(std::hash<int64_t>()(v));
  for (const std::string& v : scalars) mix(h(v));
  return seed;
}

StepKey step_key(GraphWalk& walk, std::string options) {
  StepKey key;
  key.options = std::move(options);
  key.node_keys = std::move(walk.node_keys);
  for (const at::Tensor& t : walk.compiler.tensor_args.inputs) {
    key.input_metas.push_back(tensor_meta(t));
  }
  for (const auto& s : walk.compiler.all_size_inputs) key.sizes.push_back(s.value);
  for (const auto& lifted : walk.compiler.lifted_ivalue_args.args) {
    key.scalars.push_back(scalar_bytes(*lifted.actual_ptr));
  }
  return key;
}

size_t common_prefix(const StepKey& key, const StepKey& cached) {
  if (key.options != cached.options) return 0;
  size_t n = 1;
  const size_t nodes = std::min(key.node_keys.size(), cached.node_keys.size());
  for (size_t i = 0; i < nodes && key.node_keys[i] == cached.node_keys[i]; ++i) ++n;
  if (key.node_keys != cached.node_keys) return n;
  const size_t inputs = std::min(key.input_metas.size(), cached.input_metas.size());
  for (size_t i = 0; i < inputs && key.input_metas[i] == cached.input_metas[i]; ++i) ++n;
  return n;
}

std::string describe_difference(const StepKey& key, const StepKey& cached) {
  if (key.options != cached.options) return "the backward options differ";
  const size_t nodes = std::min(key.node_keys.size(), cached.node_keys.size());
  for (size_t i = 0; i < nodes; ++i) {
    if (key.node_keys[i] == cached.node_keys[i]) continue;
    const std::string now = type_of(key.node_keys[i]), was = type_of(cached.node_keys[i]);
    if (now != was) return "node " + std::to_string(i) + " is " + now + ", was " + was;
    return "node " + std::to_string(i) + " (" + now +
           "): its saved constants, specialized sizes or edges differ";
  }
  if (key.node_keys.size() != cached.node_keys.size()) {
    return "the graph has " + std::to_string(key.node_keys.size()) + " nodes, the closest cached " +
           "graph " + std::to_string(cached.node_keys.size());
  }
  for (size_t i = 0; i < key.input_metas.size() && i < cached.input_metas.size(); ++i) {
    if (key.input_metas[i] != cached.input_metas[i]) {
      return "input " + std::to_string(i) +
             ": its dtype, device, sizes, strides, requires_grad or .grad presence differ";
    }
  }
  if (key.input_metas.size() != cached.input_metas.size()) return "the number of inputs differs";
  for (size_t i = 0; i < key.sizes.size() && i < cached.sizes.size(); ++i) {
    if (key.sizes[i] != cached.sizes[i]) {
      return "specialized size " + std::to_string(i) + " is " + std::to_string(key.sizes[i]) +
             ", was " + std::to_string(cached.sizes[i]);
    }
  }
  for (size_t i = 0; i < key.scalars.size() && i < cached.scalars.size(); ++i) {
    if (key.scalars[i] != cached.scalars[i]) {
      return "lifted scalar " + std::to_string(i) + " is " + scalar_text(key.scalars[i]) +
             ", was " + scalar_text(cached.scalars[i]);
    }
  }
  return "the number of sizes or scalars differs";
}

}  // namespace ca::detail
