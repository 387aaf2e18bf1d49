// SPDX-License-Identifier: BSD-3-Clause
// Bounds of tensors loaded from .pt archives: storage vs record, geometry vs storage.
#include "tensor_bounds.h"

#include <c10/util/irange.h>

#include <cstdint>
#include <sstream>
#include <string>

#include "ca/error.h"

namespace ca::detail {
namespace {

[[noreturn]] void fail(size_t index, const std::string& why) {
  throw FormatError("tensor " + std::to_string(index) + ": " + why);
}

std::string geometry(const at::Tensor& t) {
  std::ostringstream s;
  s << "sizes " << t.sizes() << ", strides " << t.strides() << " and storage offset "
    << t.storage_offset();
  return s.str();
}

/// Index of the last element `t` reaches (0 for a single element at offset 0), or -1 when the
/// geometry is negative somewhere or overflows int64.
int64_t last_element(const at::Tensor& t) {
  int64_t last = t.storage_offset();
  if (last < 0) return -1;
  for (const auto d : c10::irange(t.dim())) {
    const int64_t size = t.sizes()[d];
    const int64_t stride = t.strides()[d];
    if (size < 0 || stride < 0) return -1;
    int64_t reach = 0;
    if (__builtin_mul_overflow(size - 1, stride, &reach) ||
        __builtin_add_overflow(last, reach, &last)) {
      return -1;
    }
  }
  return last;
}

void check_record(const at::Tensor& t, size_t index, const RecordSizes& records) {
  const at::Storage& storage = t.storage();
  const size_t declared = storage.nbytes();
  if (declared == 0) return;  // torch reads no record for an empty storage
  const auto found = records.find(storage.data());
  const size_t held = found == records.end() ? 0 : found->second;
  if (declared > held) {
    fail(index, "its storage declares " + std::to_string(declared / t.itemsize()) +
                    " elements of " + std::to_string(t.itemsize()) + " bytes (" +
                    std::to_string(declared) + " bytes), but its data record holds only " +
                    std::to_string(held) + " bytes");
  }
}

void check_geometry(const at::Tensor& t, size_t index) {
  for (const auto d : c10::irange(t.dim())) {
    if (t.sizes()[d] < 0) fail(index, geometry(t) + ": a size is negative");
  }
  if (t.numel() == 0) return;  // reads nothing
  const int64_t last = last_element(t);
  if (last < 0) fail(index, geometry(t) + ": negative or overflowing");
  const size_t elements = t.storage().nbytes() / t.itemsize();
  if (static_cast<uint64_t>(last) >= elements) {
    fail(index, geometry(t) + " reach element " + std::to_string(last) +
                    ", past the end of its storage of " + std::to_string(elements) + " elements (" +
                    std::to_string(t.storage().nbytes()) + " bytes)");
  }
}

}  // namespace

void check_tensor_bounds(const at::Tensor& tensor, size_t index, const RecordSizes& records) {
  if (!tensor.defined()) fail(index, "undefined tensor");
  if (tensor.layout() != at::kStrided) fail(index, "not a dense (strided) tensor");
  if (!tensor.device().is_cpu()) fail(index, "not on the CPU");
  if (!tensor.has_storage()) fail(index, "has no storage");
  check_record(tensor, index, records);
  check_geometry(tensor, index);
}

}  // namespace ca::detail
