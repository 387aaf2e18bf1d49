// SPDX-License-Identifier: BSD-3-Clause
// IValues that upstream's packers produce survive IValue -> Arg -> IValue with their exact
// types (a bool list stays List[bool], an empty int list stays List[int]).
#include "arg_convert.h"

#include <gtest/gtest.h>
#include <torch/csrc/dynamo/compiled_autograd.h>
#include <torch/torch.h>

#include "ca/error.h"

namespace ca::detail {
namespace {

namespace dyn = torch::dynamo::autograd;

c10::IValue round_trip(const c10::IValue& v, const c10::TypePtr& declared = nullptr) {
  std::vector<at::Tensor> tensors;
  auto id = [&](const at::Tensor& t) -> ValueId {
    if (!t.defined()) return kNoValue;
    tensors.push_back(t);
    return static_cast<ValueId>(tensors.size() - 1);
  };
  ArgPool pool;
  const ArgRange a = pool.append({arg_from_ivalue(v, declared, id, "test")});
  auto tensor_of = [&](ValueId i) { return tensors.at(static_cast<size_t>(i)); };
  return ivalue_from_arg(pool.ref(a.first), tensor_of, [](ValueId) -> int64_t { return 0; });
}

void expect_same(const c10::IValue& a, const c10::IValue& b) {
  EXPECT_EQ(a.type()->str(), b.type()->str());
  EXPECT_EQ(a.tagKind(), b.tagKind());
  if (!a.isTensor()) {
    EXPECT_TRUE(a == b) << a << " vs " << b;
  }
}

TEST(ArgConvert, ScalarsAndStrings) {
  for (const c10::IValue& v :
       {c10::IValue(), c10::IValue(true), c10::IValue(int64_t{-7}), c10::IValue(2.5),
        c10::IValue(c10::complex<double>(1, -2)), c10::IValue(std::string("saved_key")),
        c10::IValue(c10::Device(c10::kCUDA, 1))}) {
    expect_same(round_trip(v), v);
  }
}

TEST(ArgConvert, TypedListsKeepTheirElementType) {
  expect_same(round_trip(c10::IValue(std::vector<bool>{true, false})),
              c10::IValue(std::vector<bool>{true, false}));
  const c10::IValue empty_ints(std::vector<int64_t>{});
  const c10::IValue back = round_trip(empty_ints);
  EXPECT_EQ(back.type()->str(), "int[]");
  EXPECT_TRUE(back.isIntList());
  expect_same(round_trip(c10::IValue(std::vector<double>{1.5, -2})),
              c10::IValue(std::vector<double>{1.5, -2}));
  const c10::IValue any_empty = dyn::IValuePacker<std::vector<at::TensorOptions>>::pack({});
  expect_same(round_trip(any_empty), any_empty);
}

TEST(ArgConvert, TensorsBecomeReferences) {
  auto t = torch::randn({2});
  const c10::IValue list(std::vector<at::Tensor>{t, at::Tensor()});
  const c10::IValue back = round_trip(list);
  ASSERT_TRUE(back.isTensorList());
  EXPECT_TRUE(back.toTensorList().get(0).is_same(t));
  EXPECT_FALSE(back.toTensorList().get(1).defined());
}

TEST(ArgConvert, PackedStructuresRoundTrip) {
  const auto options = torch::TensorOptions().dtype(torch::kDouble).device(torch::kCPU);
  expect_same(round_trip(dyn::IValuePacker<at::TensorOptions>::pack(options)),
              dyn::IValuePacker<at::TensorOptions>::pack(options));
  const at::TensorGeometry geometry(torch::randn({3, 4}).t());
  const c10::IValue g = dyn::IValuePacker<at::TensorGeometry>::pack(geometry);
  expect_same(round_trip(g, dyn::IValuePacker<at::TensorGeometry>::packed_type()), g);
  c10::impl::GenericDict dict(c10::StringType::get(), c10::AnyType::get());
  dict.insert(std::string("scale"), 1.5);
  dict.insert(std::string("n"), int64_t{3});
  expect_same(round_trip(c10::IValue(dict)), c10::IValue(dict));
}

TEST(ArgConvert, SchemaTellsEnumsFromInts) {
  std::vector<at::Tensor> none;
  auto id = [](const at::Tensor&) { return kNoValue; };
  const Arg a = arg_from_ivalue(c10::IValue(at::kFloat), c10::ScalarTypeType::get(), id, "t");
  EXPECT_EQ(a.kind, Arg::Kind::kScalarType);
  EXPECT_EQ(a.i, static_cast<int64_t>(at::kFloat));
}

TEST(ArgConvert, UnsupportedValuesNameThePlace) {
  auto id = [](const at::Tensor&) { return kNoValue; };
  const c10::IValue gen(at::detail::getDefaultCPUGenerator());
  try {
    arg_from_ivalue(gen, nullptr, id, "MyOp.args[3]");
    FAIL() << "expected CaptureError";
  } catch (const CaptureError& e) {
    EXPECT_NE(std::string(e.what()).find("MyOp.args[3]"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ca::detail
