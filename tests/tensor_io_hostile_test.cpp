// SPDX-License-Identifier: BSD-3-Clause
// Hostile .pt archives, crafted at the byte level: storages checked against their data records,
// tensor geometry against its storage, and the pickle bounded before torch unpickles it.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ca/error.h"
#include "ca/tensor_io.h"
#include "pt_craft.h"
#include "tensor_bounds.h"
#include "test_util.h"

namespace ca {
namespace {

using test::PickleBytes;
using test::PtTensor;

std::vector<at::Tensor> load(const std::vector<uint8_t>& bytes) {
  return tensors_from_bytes(bytes.data(), bytes.size());
}

std::string load_error(const std::vector<uint8_t>& bytes) {
  return test::error_of<FormatError>([&] { load(bytes); }, "loading a hostile .pt");
}

/// A 2x3 float tensor over a 6-element storage, as torch.save writes it.
PtTensor two_by_three() { return PtTensor{"FloatStorage", "0", 6, 0, {2, 3}, {3, 1}}; }

std::vector<uint8_t> one_tensor(const PtTensor& t, const std::string& record) {
  return test::pt_archive(PickleBytes().list_of({t}).bytes(), {{t.key, record}});
}

TEST(TensorIoHostile, CraftedArchiveLoadsWhenConsistent) {
  // The crafting itself is sound: refusals below come from the checks, not from the builder.
  const std::vector<at::Tensor> got = load(one_tensor(two_by_three(), test::float_record(6)));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(got[0].equal(at::arange(6, at::kFloat).reshape({2, 3})));
}

TEST(TensorIoHostile, RecordCutShortIsRefused) {
  EXPECT_EQ(load_error(one_tensor(two_by_three(), test::float_record(4))),
            "tensor 0: its storage declares 6 elements of 4 bytes (24 bytes), but its data "
            "record holds only 16 bytes");
}

TEST(TensorIoHostile, DeclaredNumelPastTheRecordIsRefused) {
  PtTensor big = two_by_three();
  big.key = "1";
  big.numel = int64_t{1} << 40;
  const std::string pickle = PickleBytes().list_of({two_by_three(), big}).bytes();
  const std::string msg = load_error(
      test::pt_archive(pickle, {{"0", test::float_record(6)}, {"1", test::float_record(6)}}));
  EXPECT_TRUE(test::contains(msg, "tensor 1: its storage declares 1099511627776 elements"));
  EXPECT_TRUE(test::contains(msg, "holds only 24 bytes"));
}

/// Rewrites the central-directory entry of record `name` as deflated, inflating to `claimed` bytes.
void claim_inflated_size(std::vector<uint8_t>& zip, const std::string& name, uint32_t claimed) {
  for (size_t i = 0; i + 46 < zip.size(); ++i) {
    if (std::memcmp(&zip[i], "PK\x01\x02", 4) != 0) continue;
    const size_t name_len = zip[i + 28] | (zip[i + 29] << 8);
    const std::string entry(reinterpret_cast<const char*>(&zip[i + 46]), name_len);
    if (entry.size() < name.size() ||
        entry.compare(entry.size() - name.size(), name.size(), name)) {
      continue;
    }
    zip[i + 10] = 8;  // method: deflate
    for (int b = 0; b < 4; ++b) zip[i + 24 + b] = static_cast<uint8_t>(claimed >> (8 * b));
    return;
  }
  FAIL() << "no central-directory entry for " << name;
}

TEST(TensorIoHostile, RecordInflatingPastTheArchiveIsRefusedBeforeAllocating) {
  std::vector<uint8_t> zip = one_tensor(two_by_three(), test::float_record(6));
  claim_inflated_size(zip, "/data/0", 0xf0000000u);
  EXPECT_TRUE(test::contains(load_error(zip),
                             "record data/0 claims 4026531840 bytes, more than "
                             "the whole archive"));
}

TEST(TensorIoHostile, EmptyRecordForNonEmptyStorageIsRefused) {
  EXPECT_TRUE(test::contains(load_error(one_tensor(two_by_three(), "")), "holds only 0 bytes"));
}

/// torch 2.13's unpickler checks a tensor's geometry against the storage size the pickle declares
/// (which check_record has not compared with the record yet); check_tensor_bounds checks it again
/// after unpickling, for torch versions that do not (TensorBounds below). Either way: a
/// FormatError that names the geometry and the storage's real size.
void expect_past_storage(const std::string& msg, const std::string& geometry) {
  EXPECT_TRUE(test::contains(msg, "24 bytes"));
  const bool ours = msg.find("sizes " + geometry) != std::string::npos &&
                    msg.find("past the end of its storage of 6 elements") != std::string::npos;
  const bool torchs = msg.find("require a storage of at least") != std::string::npos;
  EXPECT_TRUE(ours || torchs) << msg;
}

TEST(TensorIoHostile, SizesPastTheStorageAreRefused) {
  PtTensor t = two_by_three();
  t.sizes = {4, 3};
  expect_past_storage(load_error(one_tensor(t, test::float_record(6))), "[4, 3]");
}

TEST(TensorIoHostile, StridesPastTheStorageAreRefused) {
  PtTensor t = two_by_three();
  t.strides = {100, 1};
  expect_past_storage(load_error(one_tensor(t, test::float_record(6))), "[2, 3]");
}

TEST(TensorIoHostile, OffsetPastTheStorageIsRefused) {
  PtTensor t = two_by_three();
  t.offset = 1;
  expect_past_storage(load_error(one_tensor(t, test::float_record(6))), "[2, 3]");
}

/// A float tensor over a 6-element storage with the given geometry, set without any check (as
/// an unpickler that trusts the file would).
at::Tensor unchecked_view(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
                          int64_t offset) {
  at::Tensor t = at::arange(6, at::kFloat);
  at::TensorImpl* impl = t.unsafeGetTensorImpl();
  impl->set_storage_offset(offset);
  impl->set_sizes_and_strides(sizes, strides);
  return t;
}

std::string bounds_error(const at::Tensor& t) {
  return test::error_of<FormatError>(
      [&] {
        detail::check_tensor_bounds(t, 3, {{t.storage().data(), 24}});
      },
      "checking bounds");
}

TEST(TensorBounds, GeometryPastTheStorageIsRefused) {
  EXPECT_EQ(bounds_error(unchecked_view({4, 3}, {3, 1}, 0)),
            "tensor 3: sizes [4, 3], strides [3, 1] and storage offset 0 reach element 11, past "
            "the end of its storage of 6 elements (24 bytes)");
  EXPECT_TRUE(test::contains(bounds_error(unchecked_view({2, 3}, {100, 1}, 0)),
                             "reach element 102, past the end of its storage of 6 elements"));
  EXPECT_TRUE(test::contains(bounds_error(unchecked_view({2, 3}, {3, 1}, 1)),
                             "storage offset 1 reach element 6, past the end"));
  EXPECT_TRUE(test::contains(bounds_error(unchecked_view({2, 2}, {INT64_MAX, 1}, 0)),
                             "negative or overflowing"));
}

TEST(TensorBounds, StorageLargerThanItsRecordIsRefused) {
  const at::Tensor t = at::arange(6, at::kFloat);
  const std::string msg = test::error_of<FormatError>(
      [&] {
        detail::check_tensor_bounds(t, 0, {{t.storage().data(), 20}});
      },
      "checking");
  EXPECT_TRUE(test::contains(msg,
                             "declares 6 elements of 4 bytes (24 bytes), but its data "
                             "record holds only 20 bytes"));
}

TEST(TensorBounds, InBoundsViewsPass) {
  const at::Tensor t = unchecked_view({3, 2}, {1, 3}, 0);  // a transpose: last element 5
  EXPECT_NO_THROW(detail::check_tensor_bounds(t, 0, {{t.storage().data(), 24}}));
}

TEST(TensorIoHostile, NegativeOrOverflowingGeometryIsRefused) {
  for (const auto& [sizes, strides] :
       std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>{
           {{2, 3}, {-3, 1}},
           {{-2, 3}, {3, 1}},
           {{int64_t{1} << 31, int64_t{1} << 31}, {int64_t{1} << 40, 1}},
           {{2, 2}, {INT64_MAX, 1}},
       }) {
    PtTensor t = two_by_three();
    t.sizes = sizes;
    t.strides = strides;
    EXPECT_THROW(load(one_tensor(t, test::float_record(6))), FormatError)
        << at::IntArrayRef(sizes) << " " << at::IntArrayRef(strides);
  }
}

TEST(TensorIoHostile, EmptyTensorNeedsNoRecord) {
  const PtTensor t{"FloatStorage", "0", 0, 0, {0, 3}, {3, 1}};
  const std::vector<at::Tensor> got =
      load(test::pt_archive(PickleBytes().list_of({t}).bytes(), {}));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].sizes(), at::IntArrayRef({0, 3}));
}

TEST(TensorIoHostile, CudaLocationLoadsOnTheCpu) {
  PtTensor t = two_by_three();
  t.location = "cuda";
  const std::vector<at::Tensor> got = load(one_tensor(t, test::float_record(6)));
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(got[0].device().is_cpu());
  EXPECT_TRUE(got[0].equal(at::arange(6, at::kFloat).reshape({2, 3})));
}

TEST(TensorIoHostile, MetaTensorIsRefused) {
  PtTensor t = two_by_three();
  t.location = "meta";
  EXPECT_EQ(load_error(one_tensor(t, test::float_record(6))), "tensor 0: not on the CPU");
}

/// `depth` containers nested in one another: MARK x depth, then `close` x depth.
std::vector<uint8_t> nested(int depth, char close) {
  PickleBytes p;
  p.raw(std::string(static_cast<size_t>(depth), '('));
  p.raw(std::string(static_cast<size_t>(depth), close));
  return test::pt_archive(p.bytes(), {});
}

TEST(TensorIoHostile, DeepNestingIsRefusedBeforeUnpickling) {
  for (char close : {'l', 't', 'd'}) {  // LIST, TUPLE, DICT: 2 bytes a level, 400 KB
    const std::string msg = load_error(nested(200000, close));
    EXPECT_TRUE(test::contains(msg, "nested deeper than 64 levels")) << close;
  }
}

TEST(TensorIoHostile, NestingAtTheLimitIsUnpickledThenRefusedAsNotTensors) {
  EXPECT_TRUE(test::contains(load_error(nested(64, 'l')), "whose item 0 is a list"));
  EXPECT_TRUE(test::contains(load_error(nested(65, 'l')), "nested deeper than 64"));
}

TEST(TensorIoHostile, DeepNestingWithoutStopIsRefused) {
  PickleBytes p;
  p.raw(std::string(200000, '(')).raw(std::string(200000, 'l'));
  const std::string pickle = p.bytes();
  EXPECT_THROW(load(test::pt_archive(pickle.substr(0, pickle.size() - 1), {})), FormatError);
}

TEST(TensorIoHostile, DeepNestingThroughAppendsIsRefused) {
  PickleBytes p;  // L0 ( L1 ( L2 ... then APPENDS x n: L(n-1).append(Ln), L(n-2).append(...)
  for (int i = 0; i < 100000; ++i) p.op(']').op('(');
  p.op(']').raw(std::string(100000, 'e'));
  EXPECT_TRUE(test::contains(load_error(test::pt_archive(p.bytes(), {})), "deeper than 64"));
}

TEST(TensorIoHostile, CycleIsRefused) {
  PickleBytes p;
  p.op(']').op('q').op('\x00').op('(').op('h').op('\x00').op('e');  // L = []; L.append(L)
  EXPECT_TRUE(test::contains(load_error(test::pt_archive(p.bytes(), {})), "inside itself"));
}

TEST(TensorIoHostile, SizedAllocationsFromThePickleAreRefused) {
  PickleBytes memo;
  memo.op(']').op('r').le(0xfffffff0u, 4);  // LONG_BINPUT: a 4-billion-entry memo
  EXPECT_TRUE(test::contains(load_error(test::pt_archive(memo.bytes(), {})), "skips ahead"));
  PickleBytes text;
  text.op('X').le(0xffffffffu, 4).raw("abc");  // BINUNICODE of 4 GiB
  EXPECT_TRUE(test::contains(load_error(test::pt_archive(text.bytes(), {})), "past the end"));
}

TEST(TensorIoHostile, UnknownOpcodeIsNamed) {
  PickleBytes p;
  p.op(']').op('a');  // APPEND: not read by torch's unpickler
  EXPECT_TRUE(test::contains(load_error(test::pt_archive(p.bytes(), {})), "opcode 0x61"));
}

TEST(TensorIoHostile, RandomCorruptionsLoadInBoundsOrAreRefused) {
  const std::vector<uint8_t> valid =
      tensors_to_bytes({at::arange(12, at::kFloat).reshape({3, 4}),
                        at::ones({2, 2}, at::kDouble).t(), at::zeros({0, 3})});
  std::mt19937 rng(20261203);
  std::uniform_int_distribution<size_t> pos(0, valid.size() - 1);
  std::uniform_int_distribution<int> delta(1, 255);
  int loaded = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<uint8_t> bytes = valid;
    bytes[pos(rng)] ^= static_cast<uint8_t>(delta(rng));
    try {
      // Whatever loads must be readable end to end (ASan runs say so).
      for (const at::Tensor& t : load(bytes)) t.sum();
      ++loaded;
    } catch (const FormatError&) {
    }
  }
  std::printf("2000 corruptions of a %zu-byte .pt: %d loaded, %d refused\n", valid.size(), loaded,
              2000 - loaded);
}

}  // namespace
}  // namespace ca
