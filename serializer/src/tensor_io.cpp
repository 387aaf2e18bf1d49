// .pt tensor lists: the zip format of torch.save, through libtorch's pickler.
#include "ca/tensor_io.h"

#include <ATen/core/ivalue.h>
#include <caffe2/serialize/inline_container.h>
#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/csrc/jit/serialization/pickler.h>

#include <cstring>
#include <string>
#include <vector>

#include "ca/error.h"
#include "file_bytes.h"

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
    throw Error("holds " + describe(v) + ", expected a list or tuple of tensors");
  }
  const std::vector<c10::IValue> items =
      v.isList() ? v.toListRef().vec() : v.toTupleRef().elements().vec();
  std::vector<at::Tensor> out;
  out.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    if (!items[i].isTensor()) {
      throw Error("holds a " + std::string(v.isList() ? "list" : "tuple") + " whose item " +
                  std::to_string(i) + " is " + describe(items[i]) + ", expected tensors only");
    }
    out.push_back(items[i].toTensor());
  }
  return out;
}

}  // namespace

std::vector<at::Tensor> tensors_from_bytes(const uint8_t* data, size_t size) {
  if (size == 0) throw Error("empty (0 bytes), expected a torch.save .pt archive");
  if (size < 4 || std::memcmp(data, "PK\x03\x04", 4) != 0) {
    throw Error(
        "not a torch.save .pt archive (no zip header); legacy non-zip .pt files are "
        "not supported");
  }
  c10::IValue value;
  try {
    value = torch::jit::pickle_load(std::vector<char>(data, data + size));
  } catch (const std::exception& e) {
    // c10::Error messages carry a C++ backtrace: keep the first line only.
    const std::string what = e.what();
    throw Error("cannot read the .pt archive: " + what.substr(0, what.find('\n')));
  }
  return tensors_of(value);
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
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
}

void save_tensors(const std::vector<at::Tensor>& tensors, const std::string& path) {
  const std::vector<uint8_t> bytes = tensors_to_bytes(tensors);
  detail::write_file_bytes(path, bytes.data(), bytes.size());
}

}  // namespace ca
