// SPDX-License-Identifier: BSD-3-Clause
// .pt tensor lists: the zip format of torch.save, through libtorch's pickler.
#include "ca/tensor_io.h"

#include <ATen/core/ivalue.h>
#include <caffe2/serialize/inline_container.h>
#include <caffe2/serialize/read_adapter_interface.h>
#include <torch/csrc/jit/serialization/pickler.h>
#include <torch/csrc/jit/serialization/unpickler.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "ca/error.h"
#include "file_bytes.h"
#include "pickle_nesting.h"
#include "tensor_bounds.h"

namespace ca {
namespace {

/// Largest .pt file load_tensors reads (8 GiB).
constexpr size_t kMaxTensorFileBytes = size_t{8} << 30;

/// What a loaded value is, for error messages: "a dict", "a single tensor", "an int", ...
std::string describe(const c10::IValue& v) {
  if (v.isTensor()) return "a single tensor";
  if (v.isGenericDict()) return "a dict";
  if (v.isList()) return "a list";
  if (v.isTuple()) return "a tuple";
  if (v.isInt()) return "an int";
  if (v.isDouble()) return "a float";
  if (v.isBool()) return "a bool";
  if (v.isString()) return "a str";
  if (v.isNone()) return "None";
  return "a " + v.type()->annotation_str();
}

std::vector<at::Tensor> tensors_of(const c10::IValue& v) {
  if (!v.isList() && !v.isTuple()) {
    throw FormatError("holds " + describe(v) + ", expected a list or tuple of tensors");
  }
  const std::vector<c10::IValue> items =
      v.isList() ? v.toListRef().vec() : v.toTupleRef().elements().vec();
  std::vector<at::Tensor> out;
  out.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    if (!items[i].isTensor()) {
      throw FormatError("holds a " + std::string(v.isList() ? "list" : "tuple") + " whose item " +
                        std::to_string(i) + " is " + describe(items[i]) +
                        ", expected tensors only");
    }
    out.push_back(items[i].toTensor());
  }
  return out;
}

/// The archive's bytes, borrowed, as the zip reader reads them.
class BytesReader final : public caffe2::serialize::ReadAdapterInterface {
 public:
  BytesReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  size_t size() const override { return size_; }
  size_t read(uint64_t pos, void* buf, size_t n, const char* /*what*/) const override {
    if (pos >= size_) return 0;
    n = std::min<size_t>(n, size_ - pos);
    std::memcpy(buf, data_ + pos, n);
    return n;
  }

 private:
  const uint8_t* data_;
  size_t size_;
};

/// Runs `f`; a libtorch error becomes a FormatError with its first line (c10::Error messages
/// carry a C++ backtrace).
template <class F>
auto with_torch_errors(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    const std::string what = e.what();
    throw FormatError("cannot read the .pt archive: " + what.substr(0, what.find('\n')));
  }
}

/// Reads record `name`. torch.save stores records uncompressed, so one that would inflate past
/// the whole archive is refused before the reader allocates its claimed size.
std::tuple<at::DataPtr, size_t> read_record(caffe2::serialize::PyTorchStreamReader& zip,
                                            const std::string& name, size_t archive_bytes) {
  const size_t claimed = zip.getRecordSize(name);
  if (claimed > archive_bytes) {
    throw FormatError("record " + name + " claims " + std::to_string(claimed) +
                      " bytes, more than the whole archive (" + std::to_string(archive_bytes) +
                      " bytes); compressed records are not supported");
  }
  return zip.getRecord(name);
}

/// What torch::jit::pickle_load does, with guards: records are bounded by the archive, the
/// pickle is bounded before it is unpickled, and the size of every data record read is kept for
/// check_tensor_bounds. Every storage is placed on the CPU, whatever device the file names.
c10::IValue unpickle(caffe2::serialize::PyTorchStreamReader& zip, size_t archive_bytes,
                     detail::RecordSizes& records) {
  at::DataPtr pickle;
  size_t pickle_size = 0;
  std::tie(pickle, pickle_size) = read_record(zip, "data.pkl", archive_bytes);
  const auto* bytes = static_cast<const uint8_t*>(pickle.get());
  detail::check_pickle_nesting(bytes, pickle_size);
  size_t read = 0;
  auto reader = [&](char* buf, size_t n) {
    n = std::min(n, pickle_size - read);
    std::memcpy(buf, bytes + read, n);
    read += n;
    return n;
  };
  auto read_storage = [&](const std::string& key) -> at::DataPtr {
    auto [record, record_size] = read_record(zip, "data/" + key, archive_bytes);
    records[record.get()] = record_size;
    return std::move(record);
  };
  torch::jit::Unpickler unpickler(reader, /*type_resolver=*/nullptr, /*obj_loader=*/nullptr,
                                  read_storage, at::Device(at::kCPU));
  unpickler.set_version(zip.version());
  return unpickler.parse_ivalue();
}

}  // namespace

std::vector<at::Tensor> tensors_from_bytes(const uint8_t* data, size_t size) {
  if (size == 0) throw FormatError("empty (0 bytes), expected a torch.save .pt archive");
  if (size < 4 || std::memcmp(data, "PK\x03\x04", 4) != 0) {
    throw FormatError(
        "not a torch.save .pt archive (no zip header); legacy non-zip .pt files are "
        "not supported");
  }
  detail::RecordSizes records;
  const c10::IValue value = with_torch_errors([&] {
    caffe2::serialize::PyTorchStreamReader zip(std::make_shared<BytesReader>(data, size));
    return unpickle(zip, size, records);
  });
  std::vector<at::Tensor> tensors = tensors_of(value);
  for (size_t i = 0; i < tensors.size(); ++i) detail::check_tensor_bounds(tensors[i], i, records);
  return tensors;
}

std::vector<uint8_t> tensors_to_bytes(const std::vector<at::Tensor>& tensors) {
  // A generic list pickles as a plain Python list. torch::pickle_save would tag it (and a
  // c10::List<Tensor> would need build_tensorlist), which torch.load(weights_only=True)
  // refuses; so pickle untagged and lay out the zip as torch.save and pickle_save do.
  c10::impl::GenericList list(c10::AnyType::get());
  list.reserve(tensors.size());
  for (const at::Tensor& t : tensors) list.push_back(t);
  std::vector<char> pickle;
  torch::jit::Pickler pickler(
      [&](const char* p, size_t n) { pickle.insert(pickle.end(), p, p + n); },
      /*tensor_table=*/nullptr, /*type_renamer=*/nullptr, /*memoized_class_types=*/nullptr,
      /*get_tensor_id=*/nullptr, /*tag_aggregates=*/false);
  pickler.protocol();
  pickler.pushIValue(c10::IValue(list));
  pickler.stop();
  std::vector<uint8_t> out;
  caffe2::serialize::PyTorchStreamWriter writer([&](const void* p, size_t n) {
    const auto* bytes = static_cast<const uint8_t*>(p);
    out.insert(out.end(), bytes, bytes + n);
    return n;
  });
  const std::vector<at::Tensor>& storages = pickler.tensorData();
  for (size_t i = 0; i < storages.size(); ++i) {
    const torch::jit::WriteableTensorData data = torch::jit::getWriteableTensorData(storages[i]);
    writer.writeRecord("data/" + std::to_string(i), data.data(), data.sizeInBytes());
  }
  writer.writeRecord("data.pkl", pickle.data(), pickle.size());
  writer.writeEndOfFile();
  return out;
}

std::vector<at::Tensor> load_tensors(const std::string& path) {
  const std::vector<uint8_t> bytes = detail::read_file_bytes(path, kMaxTensorFileBytes);
  try {
    return tensors_from_bytes(bytes.data(), bytes.size());
  } catch (Error& e) {
    e.add_context(path + ": ");
    throw;
  }
}

void save_tensors(const std::vector<at::Tensor>& tensors, const std::string& path) {
  const std::vector<uint8_t> bytes = tensors_to_bytes(tensors);
  detail::write_file_bytes(path, bytes.data(), bytes.size());
}

}  // namespace ca
