// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Compile-time proof that the FlatBuffers enums mirror the IR enums value for value, so that
// the writer and reader can cast between them (the reader range-checks first).

#include <type_traits>

#include "ca/graph.h"
#include "ca_graph_generated.h"

namespace ca::detail {

template <typename A, typename B>
constexpr bool same_value(A a, B b) {
  return static_cast<std::underlying_type_t<A>>(a) == static_cast<std::underlying_type_t<B>>(b);
}

static_assert(same_value(GraphInput::Kind::kTensor, fb::InputKind::Tensor) &&
              same_value(GraphInput::Kind::kInt, fb::InputKind::Int) &&
              same_value(GraphInput::Kind::kDouble, fb::InputKind::Double) &&
              same_value(GraphInput::Kind::kDouble, fb::InputKind::MAX));

static_assert(same_value(NodeKind::kFunctional, fb::NodeKind::Functional) &&
              same_value(NodeKind::kValidateOutputs, fb::NodeKind::ValidateOutputs) &&
              same_value(NodeKind::kAccumulate, fb::NodeKind::Accumulate) &&
              same_value(NodeKind::kAccumulateGrad, fb::NodeKind::AccumulateGrad) &&
              same_value(NodeKind::kCopySlicesPrologue, fb::NodeKind::CopySlicesPrologue) &&
              same_value(NodeKind::kCopySlicesEpilogue, fb::NodeKind::CopySlicesEpilogue) &&
              same_value(NodeKind::kAten, fb::NodeKind::Aten) &&
              same_value(NodeKind::kAten, fb::NodeKind::MAX));  // kOpaque: in process only

static_assert(same_value(Arg::Kind::kNone, fb::ArgKind::None) &&
              same_value(Arg::Kind::kBool, fb::ArgKind::Bool) &&
              same_value(Arg::Kind::kInt, fb::ArgKind::Int) &&
              same_value(Arg::Kind::kDouble, fb::ArgKind::Double) &&
              same_value(Arg::Kind::kComplex, fb::ArgKind::Complex) &&
              same_value(Arg::Kind::kString, fb::ArgKind::String) &&
              same_value(Arg::Kind::kLayout, fb::ArgKind::Layout) &&
              same_value(Arg::Kind::kScalarType, fb::ArgKind::ScalarType) &&
              same_value(Arg::Kind::kMemoryFormat, fb::ArgKind::MemoryFormat) &&
              same_value(Arg::Kind::kDevice, fb::ArgKind::Device) &&
              same_value(Arg::Kind::kTensor, fb::ArgKind::Tensor) &&
              same_value(Arg::Kind::kSymInt, fb::ArgKind::SymInt) &&
              same_value(Arg::Kind::kList, fb::ArgKind::List) &&
              same_value(Arg::Kind::kTuple, fb::ArgKind::Tuple) &&
              same_value(Arg::Kind::kDict, fb::ArgKind::Dict) &&
              same_value(Arg::Kind::kDict, fb::ArgKind::MAX));

static_assert(same_value(ArgType::Kind::kAny, fb::ArgTypeKind::Any) &&
              same_value(ArgType::Kind::kNone, fb::ArgTypeKind::None) &&
              same_value(ArgType::Kind::kBool, fb::ArgTypeKind::Bool) &&
              same_value(ArgType::Kind::kInt, fb::ArgTypeKind::Int) &&
              same_value(ArgType::Kind::kFloat, fb::ArgTypeKind::Float) &&
              same_value(ArgType::Kind::kComplex, fb::ArgTypeKind::Complex) &&
              same_value(ArgType::Kind::kString, fb::ArgTypeKind::String) &&
              same_value(ArgType::Kind::kTensor, fb::ArgTypeKind::Tensor) &&
              same_value(ArgType::Kind::kSymInt, fb::ArgTypeKind::SymInt) &&
              same_value(ArgType::Kind::kSymFloat, fb::ArgTypeKind::SymFloat) &&
              same_value(ArgType::Kind::kNumber, fb::ArgTypeKind::Number) &&
              same_value(ArgType::Kind::kLayout, fb::ArgTypeKind::Layout) &&
              same_value(ArgType::Kind::kDevice, fb::ArgTypeKind::Device) &&
              same_value(ArgType::Kind::kScalarType, fb::ArgTypeKind::ScalarType) &&
              same_value(ArgType::Kind::kMemoryFormat, fb::ArgTypeKind::MemoryFormat) &&
              same_value(ArgType::Kind::kOptional, fb::ArgTypeKind::Optional) &&
              same_value(ArgType::Kind::kList, fb::ArgTypeKind::List) &&
              same_value(ArgType::Kind::kTuple, fb::ArgTypeKind::Tuple) &&
              same_value(ArgType::Kind::kDict, fb::ArgTypeKind::Dict) &&
              same_value(ArgType::Kind::kDict, fb::ArgTypeKind::MAX));

}  // namespace ca::detail
