// SPDX-License-Identifier: BSD-3-Clause
#include "graph_reader.h"

#include <c10/core/DeviceType.h>

#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "ca/error.h"
#include "ca/field_path.h"
#include "fb_enums.h"

namespace ca::detail {
namespace {

using flatbuffers::Vector;

/// Casts a FlatBuffers enum to its IR mirror after checking it against the enum's MAX.
template <typename To, typename From>
To checked(From raw, const FieldPath& path) {
  using U = std::underlying_type_t<From>;
  const U v = static_cast<U>(raw);
  const U max = static_cast<U>(From::MAX);
  if (v > max) {
    throw FormatError(path.str() + ": " + std::to_string(v) + " out of range [0, " +
                      std::to_string(max + 1) + ")");
  }
  return static_cast<To>(v);
}

class Reader {
 public:
  explicit Reader(size_t budget) : budget_(budget) {}
  Graph graph(const fb::Graph& g);

 private:
  void charge(size_t units, const FieldPath& path) {
    if (units > budget_) {
      throw FormatError(path.str() +
                        ": buffer expands past its own size (shared or overlapping "
                        "offsets); refusing to load it");
    }
    budget_ -= units;
  }
  std::string_view view(const flatbuffers::String* s, const FieldPath& path) {
    if (s == nullptr) return {};
    charge(s->size(), path);
    return std::string_view(s->c_str(), s->size());
  }
  std::string str(const flatbuffers::String* s, const FieldPath& path) {
    return std::string(view(s, path));
  }
  /// The graph's output ids, sized exactly.
  std::vector<ValueId> ids(const Vector<int32_t>* v, const FieldPath& path) {
    if (v == nullptr) return {};
    charge(size_t{4} * v->size(), path);
    return {v->begin(), v->end()};
  }
  /// A node's ids, appended to the graph's value_ids.
  IdRange ids(const Vector<int32_t>* v, const FieldPath& path, Graph& g) {
    if (v == nullptr) return {};
    charge(size_t{4} * v->size(), path);
    if (g.value_ids.size() + v->size() > UINT32_MAX) {
      throw FormatError(path + ": more than 2^32 - 1 value ids in the graph");
    }
    const IdRange r{static_cast<uint32_t>(g.value_ids.size()), v->size()};
    g.value_ids.insert(g.value_ids.end(), v->begin(), v->end());
    return r;
  }
  ArgType type(const fb::ArgType* t, const FieldPath& path);
  Arg arg(const fb::Arg& a, const FieldPath& path);
  TensorMeta meta(const fb::TensorMeta& m, const FieldPath& path);
  GraphInput input(const fb::GraphInput& in, const FieldPath& path);
  Node node(const fb::Node& n, const FieldPath& path, Graph& g);
  size_t count_records(const fb::Arg& a, size_t cap);
  OpSchema op_schema(const fb::OpSchema& o, const FieldPath& path);

  size_t budget_;
};

ArgType Reader::type(const fb::ArgType* t, const FieldPath& path) {
  ArgType out;
  if (t == nullptr) return out;
  charge(4, path);
  out.kind = checked<ArgType::Kind>(t->kind(), path(".kind"));
  if (const auto* contained = t->contained()) {
    charge(size_t{4} * contained->size(), path(".contained"));
    out.contained.reserve(contained->size());
    for (size_t i = 0; i < contained->size(); ++i) {
      out.contained.push_back(type(contained->Get(i), path(".contained", i)));
    }
  }
  return out;
}

Arg Reader::arg(const fb::Arg& a, const FieldPath& path) {
  charge(4, path);
  Arg out;
  out.kind = checked<Arg::Kind>(a.kind(), path(".kind"));
  out.b = a.b();
  out.i = a.i();
  out.d = a.d();
  if (const fb::Complex* c = a.c()) out.c = c10::complex<double>(c->re(), c->im());
  out.s = view(a.s(), path(".s"));
  out.device_index = a.device_index();
  out.ref = a.ref();
  out.type = type(a.type(), path(".type"));
  out.value_type = type(a.value_type(), path(".value_type"));
  if (const auto* items = a.items();
      items != nullptr && items->size() > 0 && !is_container(out.kind)) {
    throw FormatError(path(".items").str() + ": " + std::to_string(items->size()) +
                      " items on an arg that is not a list, tuple or dict");
  }
  if (const auto* items = a.items()) {
    charge(size_t{4} * items->size(), path(".items"));
    out.items.reserve(items->size());
    for (size_t i = 0; i < items->size(); ++i) {
      out.items.push_back(arg(*items->Get(i), path(".items", i)));
    }
  }
  return out;
}

// Records `a` will take, stopping past `cap` (shared offsets could make the count explode).
size_t Reader::count_records(const fb::Arg& a, size_t cap) {
  size_t n = 1;
  if (const auto* items = a.items()) {
    for (size_t i = 0; i < items->size() && n <= cap; ++i) {
      n += count_records(*items->Get(i), cap - n);
    }
  }
  return n;
}

TensorMeta Reader::meta(const fb::TensorMeta& m, const FieldPath& path) {
  charge(4, path);
  TensorMeta out;
  const int dtype = m.dtype();
  const int num_dtypes = static_cast<int>(c10::ScalarType::Undefined);
  if (dtype < 0 || dtype >= num_dtypes) {
    throw FormatError(path(".dtype").str() + ": " + std::to_string(dtype) + " out of range [0, " +
                      std::to_string(num_dtypes) + ")");
  }
  out.dtype = static_cast<c10::ScalarType>(dtype);
  if (const auto* sizes = m.sizes()) {
    // flatbuffers 2.0's Verifier checks a vector's length field, not its 8-byte elements: a
    // builder aligns them, a crafted file may not. (An empty one has no element to misalign,
    // and FlatBuffers' JSON parser leaves it 4-aligned.)
    if (sizes->size() > 0 && reinterpret_cast<uintptr_t>(sizes->Data()) % alignof(int64_t) != 0) {
      throw FormatError(path(".sizes").str() + ": int64 elements not 8-byte aligned");
    }
    charge(size_t{8} * sizes->size(), path(".sizes"));
    out.sizes.assign(sizes->begin(), sizes->end());
  }
  const auto type = static_cast<c10::DeviceType>(m.device_type());
  if (m.device_type() < 0 || !c10::isValidDeviceType(type)) {
    throw FormatError(path(".device_type").str() + ": " + std::to_string(m.device_type()) +
                      " is not a device type");
  }
  const int index = m.device_index();
  if (index < -1 || (type == c10::DeviceType::CPU && index > 0)) {
    throw FormatError(path(".device_index").str() + ": " + std::to_string(index) +
                      " is not valid for " + c10::DeviceTypeName(type, /*lower_case=*/true));
  }
  out.device = c10::Device(type, static_cast<c10::DeviceIndex>(index));
  out.requires_grad = m.requires_grad();
  return out;
}

GraphInput Reader::input(const fb::GraphInput& in, const FieldPath& path) {
  charge(4, path);
  GraphInput out;
  out.kind = checked<GraphInput::Kind>(in.kind(), path(".kind"));
  out.name = str(in.name(), path(".name"));
  if (const fb::TensorMeta* m = in.meta()) out.meta = meta(*m, path(".meta"));
  out.int_value = in.int_value();
  out.double_value = in.double_value();
  return out;
}

Node Reader::node(const fb::Node& n, const FieldPath& path, Graph& g) {
  charge(4, path);
  Node out;
  out.kind = checked<NodeKind>(n.kind(), path(".kind"));
  out.op = g.intern(view(n.op(), path(".op")));
  out.overload = g.intern(view(n.overload(), path(".overload")));
  out.inputs = ids(n.inputs(), path(".inputs"), g);
  if (const auto* args = n.args()) {
    charge(size_t{4} * args->size(), path(".args"));
    out.args = g.arg_pool.next_range();
    for (size_t i = 0; i < args->size(); ++i) {
      g.arg_pool.append_to(out.args, arg(*args->Get(i), path(".args", i)));
    }
  }
  out.outputs = ids(n.outputs(), path(".outputs"), g);
  return out;
}

OpSchema Reader::op_schema(const fb::OpSchema& o, const FieldPath& path) {
  charge(4, path);
  OpSchema out;
  out.op = str(o.op(), path(".op"));
  out.needs_input_grad_count = o.needs_input_grad_count();
  out.is_custom_function = o.custom_function();
  if (const auto* args = o.args()) {
    charge(size_t{4} * args->size(), path(".args"));
    out.args.reserve(args->size());
    for (size_t i = 0; i < args->size(); ++i) {
      out.args.push_back(type(args->Get(i), path(".args", i)));
    }
  }
  return out;
}

Graph Reader::graph(const fb::Graph& g) {
  charge(4, FieldPath("graph"));
  Graph out;
  out.format_version = g.format_version();
  out.torch_version = str(g.torch_version(), FieldPath("torch_version"));
  out.writer_version = str(g.writer_version(), FieldPath("writer_version"));
  out.num_values = g.num_values();
  if (const auto* inputs = g.inputs()) {
    charge(size_t{4} * inputs->size(), FieldPath("inputs"));
    out.inputs.reserve(inputs->size());
    for (size_t i = 0; i < inputs->size(); ++i) {
      out.inputs.push_back(input(*inputs->Get(i), FieldPath("inputs", i)));
    }
  }
  if (const auto* nodes = g.nodes()) {
    charge(size_t{4} * nodes->size(), FieldPath("nodes"));
    out.nodes.reserve(nodes->size());
    // Sized once: a growing pool would hold its old and new arrays at the load's peak.
    size_t records = 0;
    size_t value_ids = 0;
    const size_t cap = budget_ / 4;  // each record and id charges at least 4
    for (size_t i = 0; i < nodes->size() && records <= cap; ++i) {
      const fb::Node& n = *nodes->Get(i);
      for (const auto* v : {n.inputs(), n.outputs()}) value_ids += v == nullptr ? 0 : v->size();
      if (const auto* args = n.args()) {
        for (size_t k = 0; k < args->size() && records <= cap; ++k) {
          records += count_records(*args->Get(k), cap - records + 1);
        }
      }
    }
    if (records <= cap) out.arg_pool.reserve(records);
    if (value_ids <= cap) out.value_ids.reserve(value_ids);
    for (size_t i = 0; i < nodes->size(); ++i) {
      out.nodes.push_back(node(*nodes->Get(i), FieldPath("nodes", i), out));
    }
  }
  out.outputs = ids(g.outputs(), FieldPath("outputs"));
  if (const auto* schemas = g.op_schemas()) {
    charge(size_t{4} * schemas->size(), FieldPath("op_schemas"));
    out.op_schemas.reserve(schemas->size());
    for (size_t i = 0; i < schemas->size(); ++i) {
      out.op_schemas.push_back(op_schema(*schemas->Get(i), FieldPath("op_schemas", i)));
    }
  }
  return out;
}

}  // namespace

Graph read_graph(const fb::Graph& root, size_t budget) { return Reader(budget).graph(root); }

}  // namespace ca::detail
