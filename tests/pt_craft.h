// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Builds .pt archives byte by byte, as a buggy or hostile writer could: pickle opcodes written by
// hand (protocol 2, as torch.save writes them) and a zip laid out by caffe2's PyTorchStreamWriter.

#include <caffe2/serialize/inline_container.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ca::test {

/// One tensor as torch.save pickles it: `_rebuild_tensor_v2(storage, offset, sizes, strides,
/// requires_grad, OrderedDict())`, its storage `(storage, <type>, key, location, numel)`.
struct PtTensor {
  std::string storage_type = "FloatStorage";
  std::string key = "0";
  int64_t numel = 0;
  int64_t offset = 0;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  std::string location = "cpu";
};

/// A protocol-2 pickle written opcode by opcode; starts with PROTO 2, bytes() appends STOP.
class PickleBytes {
 public:
  PickleBytes() { raw({'\x80', '\x02'}); }

  PickleBytes& raw(const std::string& bytes) {
    out_ += bytes;
    return *this;
  }
  PickleBytes& op(char c) { return raw(std::string(1, c)); }
  PickleBytes& integer(int64_t v) {
    if (v >= INT32_MIN && v <= INT32_MAX) return op('J').le(static_cast<uint32_t>(v), 4);
    return op('\x8a').op('\x08').le(static_cast<uint64_t>(v), 8);  // LONG1, 8 bytes
  }
  PickleBytes& str(const std::string& s) { return op('X').le(s.size(), 4).raw(s); }
  PickleBytes& global(const std::string& module, const std::string& name) {
    return op('c').raw(module + "\n" + name + "\n");
  }
  PickleBytes& int_tuple(const std::vector<int64_t>& values) {
    op('(');
    for (int64_t v : values) integer(v);
    return op('t');
  }
  PickleBytes& tensor(const PtTensor& t) {
    global("torch._utils", "_rebuild_tensor_v2").op('(');
    op('(').str("storage").global("torch", t.storage_type).str(t.key).str(t.location);
    integer(t.numel).op('t').op('Q');                                      // BINPERSID
    integer(t.offset).int_tuple(t.sizes).int_tuple(t.strides).op('\x89');  // NEWFALSE
    global("collections", "OrderedDict").op(')').op('R');
    return op('t').op('R');
  }
  PickleBytes& list_of(const std::vector<PtTensor>& tensors) {
    op(']').op('(');
    for (const PtTensor& t : tensors) tensor(t);
    return op('e');  // APPENDS
  }
  PickleBytes& le(uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out_.push_back(static_cast<char>(v >> (8 * i)));
    return *this;
  }
  std::string bytes() const { return out_ + "."; }

 private:
  std::string out_;
};

/// A zip laid out as torch.save lays it out: data.pkl, data/<key> records, version.
inline std::vector<uint8_t> pt_archive(
    const std::string& pickle, const std::vector<std::pair<std::string, std::string>>& records) {
  std::vector<uint8_t> out;
  caffe2::serialize::PyTorchStreamWriter writer([&](const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    out.insert(out.end(), b, b + n);
    return n;
  });
  for (const auto& [key, data] : records)
    writer.writeRecord("data/" + key, data.data(), data.size());
  writer.writeRecord("data.pkl", pickle.data(), pickle.size());
  writer.writeEndOfFile();
  return out;
}

/// `n` float32 values 0, 1, 2, ... as the raw bytes of a storage record.
inline std::string float_record(int n) {
  std::string bytes;
  for (int i = 0; i < n; ++i) {
    const float f = static_cast<float>(i);
    bytes.append(reinterpret_cast<const char*>(&f), sizeof f);
  }
  return bytes;
}

}  // namespace ca::test
