// SPDX-License-Identifier: BSD-3-Clause
// Text forms of a graph and its args, for `replay --dump`, logs and test failures.
#include "ca/graph_dump.h"

#include <c10/core/Device.h>
#include <c10/core/DeviceType.h>
#include <c10/core/Layout.h>
#include <c10/core/MemoryFormat.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>

namespace ca {
namespace {

/// Items shown per list before "...".
constexpr size_t kMaxItems = 16;
/// Characters shown per string before "...".
constexpr size_t kMaxString = 40;

std::string value(ValueId id) { return id == kNoValue ? "undef" : "%" + std::to_string(id); }

std::string values(c10::ArrayRef<ValueId> ids) {
  std::string out = "(";
  for (size_t i = 0; i < ids.size(); ++i) out += (i ? ", " : "") + value(ids[i]);
  return out + ")";
}

/// Shortest text that reads back as the same double.
std::string real(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  char buf[32];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  std::string s = buf;
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

template <typename E>
std::string enum_name(int64_t v, int64_t count, const char* what) {
  if (v < 0 || v >= count) return std::string(what) + "(" + std::to_string(v) + ")";
  std::ostringstream os;
  os << static_cast<E>(v);
  return os.str();
}

std::string scalar_type(int64_t v) {
  const auto count = static_cast<int64_t>(c10::ScalarType::Undefined);
  if (v < 0 || v >= count) return "scalar_type(" + std::to_string(v) + ")";
  return c10::toString(static_cast<c10::ScalarType>(v));
}

std::string device(int64_t type, int64_t index) {
  const auto t = static_cast<c10::DeviceType>(type);
  if (type < 0 || type > std::numeric_limits<int8_t>::max() || !c10::isValidDeviceType(t)) {
    return "device(" + std::to_string(type) + ")";
  }
  std::string s = c10::DeviceTypeName(t, /*lower_case=*/true);
  return index >= 0 ? s + ":" + std::to_string(index) : s;
}

std::string type_name(const ArgType& t) {
  static const char* const kNames[] = {"Any",      "None",   "bool",   "int",        "float",
                                       "complex",  "str",    "Tensor", "SymInt",     "SymFloat",
                                       "Scalar",   "Layout", "Device", "ScalarType", "MemoryFormat",
                                       "Optional", "List",   "Tuple",  "Dict"};
  const auto k = static_cast<size_t>(t.kind);
  std::string s = k < std::size(kNames) ? kNames[k] : "type(" + std::to_string(k) + ")";
  if (t.contained.empty()) return s;
  s += "[";
  for (size_t i = 0; i < t.contained.size(); ++i) s += (i ? ", " : "") + type_name(t.contained[i]);
  return s + "]";
}

/// "bools", "ints", ... for lists of a leaf type; "List[T]" otherwise.
std::string list_prefix(const ArgType& elem) {
  switch (elem.kind) {
    case ArgType::Kind::kBool:
      return "bools";
    case ArgType::Kind::kInt:
      return "ints";
    case ArgType::Kind::kSymInt:
      return "symints";
    case ArgType::Kind::kFloat:
      return "floats";
    case ArgType::Kind::kTensor:
      return "tensors";
    default:
      return "List[" + type_name(elem) + "]";
  }
}

std::string items(const ArgRefs& args, size_t step, const char* sep, size_t limit = kMaxItems) {
  std::string out;
  size_t i = 0;
  for (auto it = args.begin(); it != args.end(); ++it, ++i) {
    if (i % step != 0) continue;
    if (i >= limit * step) return out + ", ...(+" + std::to_string((args.size() - i) / step) + ")";
    out += i ? ", " : "";
    out += format_arg(*it);
    if (step == 2 && i + 1 < args.size()) {
      ++it;
      ++i;
      out += sep + format_arg(*it);
    }
  }
  return out;
}

/// `s` with backslash, quote and control bytes escaped (UTF-8 passes through).
std::string escaped(std::string_view s) {
  std::string out;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\\' || c == '"') {
      out += {'\\', ch};
    } else if (c < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += ch;
    }
  }
  return out;
}

std::string short_string(const std::string& s) {
  if (s.size() <= kMaxString) return "\"" + escaped(s) + "\"";
  return "\"" + escaped(s.substr(0, kMaxString)) + "...\"";
}

std::string bool_item(const ArgRef& a) {
  return a.kind() == Arg::Kind::kBool ? (a.b() ? "1" : "0") : format_arg(a);
}

std::string bool_list(const ArgRef& a) {
  std::string out = "bools[";
  size_t i = 0;
  for (ArgRef item : a.items()) {
    if (i == kMaxItems) break;
    out += (i++ ? "," : "") + bool_item(item);
  }
  if (a.items().size() > kMaxItems)
    out += ",...(+" + std::to_string(a.items().size() - kMaxItems) + ")";
  return out + "]";
}

std::string input_line(const GraphInput& in, size_t i) {
  return "  %" + std::to_string(i) + " " + (in.name.empty() ? "?" : escaped(in.name)) + ": " +
         format_input(in);
}

// A name of the table, or where it is not one ("name#999").
std::string name_text(const Graph& g, NameId id) {
  return g.has_name(id) ? escaped(g.name(id)) : "name#" + std::to_string(id);
}

// A node's ids, or where they are not a range of the graph's (a graph never validated).
std::string ids_text(const Graph& g, IdRange r) {
  return g.holds(r) ? values(g.ids(r)) : "[ids: not a range of value_ids]";
}

std::string node_line(const Graph& g, const Node& n, size_t index) {
  std::string s = "  " + std::to_string(index) + " " + node_kind_name(n.kind);
  if (n.op != 0) {
    s += " " + name_text(g, n.op) + (n.overload == 0 ? "" : "." + name_text(g, n.overload));
  }
  s += " " + ids_text(g, n.inputs) + " -> " + ids_text(g, n.outputs);
  if (!g.arg_pool.holds(n.args)) return s + " [args: not a range of the pool]";
  const ArgRefs args = g.args(n);
  if (args.empty()) return s;
  return s + " [" + items(args, 1, "", args.size()) + "]";  // every node arg
}

// "  MulBackward0(List[bool], Tensor, ScalarType, Tensor, ScalarType), 2 flags"
std::string op_schema_line(const OpSchema& o) {
  std::string s = "  " + escaped(o.op) + "(";
  for (size_t i = 0; i < o.args.size(); ++i) s += (i ? ", " : "") + type_name(o.args[i]);
  s += ")";
  if (o.needs_input_grad_count >= 0)
    s += ", " + std::to_string(o.needs_input_grad_count) + " flags";
  return o.is_custom_function ? s + ", custom function" : s;
}

}  // namespace

std::string format_input(const GraphInput& in) {
  switch (in.kind) {
    case GraphInput::Kind::kInt:
      return "int = " + std::to_string(in.int_value);
    case GraphInput::Kind::kDouble:
      return "float = " + real(in.double_value);
    case GraphInput::Kind::kTensor:
      break;
  }
  std::string s = scalar_type(static_cast<int64_t>(in.meta.dtype)) + "[";
  for (size_t k = 0; k < in.meta.sizes.size(); ++k)
    s += (k ? ", " : "") + std::to_string(in.meta.sizes[k]);
  s += "] " + device(static_cast<int64_t>(in.meta.device.type()), in.meta.device.index());
  return in.meta.requires_grad ? s + " requires_grad" : s;
}

std::string format_arg(const ArgRef& a) {
  switch (a.kind()) {
    case Arg::Kind::kNone:
      return "None";
    case Arg::Kind::kBool:
      return a.b() ? "True" : "False";
    case Arg::Kind::kInt:
      return std::to_string(a.i());
    case Arg::Kind::kDouble:
      return real(a.d());
    case Arg::Kind::kComplex:
      return "(" + real(a.c().real()) + (a.c().imag() < 0 ? "" : "+") + real(a.c().imag()) + "j)";
    case Arg::Kind::kString:
      return short_string(a.s());
    case Arg::Kind::kLayout:
      return enum_name<c10::Layout>(a.i(), static_cast<int64_t>(c10::Layout::NumOptions), "layout");
    case Arg::Kind::kScalarType:
      return scalar_type(a.i());
    case Arg::Kind::kMemoryFormat:
      return enum_name<c10::MemoryFormat>(
          a.i(), static_cast<int64_t>(c10::MemoryFormat::NumOptions), "memory_format");
    case Arg::Kind::kDevice:
      return device(a.i(), a.device_index());
    case Arg::Kind::kTensor:
      return value(a.ref());
    case Arg::Kind::kSymInt:
      return "sym" + value(a.ref());
    case Arg::Kind::kList:
      if (a.type().kind == ArgType::Kind::kBool) return bool_list(a);
      return list_prefix(a.type()) + "[" + items(a.items(), 1, "") + "]";
    case Arg::Kind::kTuple:
      return "(" + items(a.items(), 1, "") + (a.items().size() == 1 ? ",)" : ")");
    case Arg::Kind::kDict:
      return "{" + items(a.items(), 2, ": ") + "}";
  }
  return "arg(" + std::to_string(static_cast<int>(a.kind())) + ")";
}

std::string format_arg(const Arg& a) {
  ArgPool pool;
  const ArgRange r = pool.append({a});
  return format_arg(pool.ref(r.first));
}

std::string dump_graph(const Graph& g) {
  std::string out = "graph: format " + std::to_string(g.format_version) + ", torch " +
                    (g.torch_version.empty() ? "?" : g.torch_version) + ", " +
                    std::to_string(g.inputs.size()) + " inputs, " + std::to_string(g.nodes.size()) +
                    " nodes, " + std::to_string(g.num_values) + " values, " +
                    std::to_string(g.outputs.size()) + " outputs\n";
  for (size_t i = 0; i < g.inputs.size(); ++i) out += input_line(g.inputs[i], i) + "\n";
  for (size_t n = 0; n < g.nodes.size(); ++n) out += node_line(g, g.nodes[n], n) + "\n";
  out += "outputs " + values(g.outputs) + "\n";
  if (!g.op_schemas.empty()) out += "op schemas:\n";
  for (const OpSchema& o : g.op_schemas) out += op_schema_line(o) + "\n";
  return out;
}

}  // namespace ca
