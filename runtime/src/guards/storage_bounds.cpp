// SPDX-License-Identifier: BSD-3-Clause
#include "guards/storage_bounds.h"

#include <vector>

namespace ca::detail {
namespace {

// Lowest and highest element offsets of a geometry, or false on overflow / malformed input.
bool span(c10::IntArrayRef sizes, c10::IntArrayRef strides, int64_t offset, int64_t* lo,
          int64_t* hi) {
  if (sizes.size() != strides.size()) return false;
  *lo = *hi = offset;
  if (element_count(sizes) < 0) return false;  // TensorGeometry and numel() multiply unchecked
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 0) {
      *lo = 0;
      *hi = -1;  // empty: reads nothing
      return true;
    }
  }
  for (size_t d = 0; d < sizes.size(); ++d) {
    int64_t step = 0;
    if (__builtin_mul_overflow(sizes[d] - 1, strides[d], &step)) return false;
    if (__builtin_add_overflow(step < 0 ? *lo : *hi, step, step < 0 ? lo : hi)) return false;
  }
  return true;
}

}  // namespace

int64_t element_count(c10::IntArrayRef sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) {
    if (s < 0 || __builtin_mul_overflow(n, s, &n)) return -1;
  }
  return n;
}

std::string geometry_outside(c10::IntArrayRef sizes, c10::IntArrayRef strides, int64_t offset,
                             int64_t extent) {
  int64_t lo = 0, hi = 0;
  if (!span(sizes, strides, offset, &lo, &hi)) {
    return "malformed geometry (sizes " + c10::str(sizes) + ", strides " + c10::str(strides) +
           "): negative size, rank mismatch or overflow";
  }
  if (hi < lo) return "";
  if (lo >= 0 && hi < extent) return "";
  return "sizes " + c10::str(sizes) + ", strides " + c10::str(strides) + ", offset " +
         std::to_string(offset) + " read elements [" + std::to_string(lo) + ", " +
         std::to_string(hi) + "] outside the storage's [0, " + std::to_string(extent) + ")";
}

int64_t geometry_extent(c10::IntArrayRef sizes, c10::IntArrayRef strides) {
  int64_t lo = 0, hi = 0;
  if (!span(sizes, strides, 0, &lo, &hi) || lo < 0) return -1;
  return hi + 1;
}

std::string packed_geometry_problem(const c10::IValue& packed) {
  auto ints = [](const c10::IValue& v, std::vector<int64_t>& out) {
    if (!v.isList()) return false;
    for (const c10::IValue& i : v.toListRef()) {
      if (!i.isInt()) return false;
      out.push_back(i.toInt());
    }
    return true;
  };
  std::vector<int64_t> sizes, strides;
  const bool shaped = packed.isTuple() && packed.toTupleRef().elements().size() == 3 &&
                      ints(packed.toTupleRef().elements()[0], sizes) &&
                      ints(packed.toTupleRef().elements()[1], strides) &&
                      packed.toTupleRef().elements()[2].isInt();
  if (!shaped) return "expected (sizes, strides, offset)";
  const int64_t offset = packed.toTupleRef().elements()[2].toInt();
  if (geometry_extent(sizes, strides) >= 0 && offset >= 0) return "";
  return "sizes " + c10::str(c10::IntArrayRef(sizes)) + ", strides " +
         c10::str(c10::IntArrayRef(strides)) + ", offset " + std::to_string(offset) +
         " are not a geometry";
}

std::string tensor_outside_storage(const at::Tensor& t) {
  if (!t.defined() || t.layout() != c10::kStrided || !t.has_storage() || t.is_meta()) return "";
  const int64_t itemsize = static_cast<int64_t>(t.dtype().itemsize());
  if (itemsize == 0) return "";
  const int64_t extent = static_cast<int64_t>(t.storage().nbytes()) / itemsize;
  return geometry_outside(t.sizes(), t.strides(), t.storage_offset(), extent);
}

}  // namespace ca::detail
