// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Conversions between c10 IValues/types and the IR's Arg/ArgType. Capture turns packed IValues
// into Args (tensors become value references); the executor turns Args back into IValues once,
// at load, leaving tensor slots to fill on each run.

#include <ATen/core/ivalue.h>
#include <ATen/core/jit_type.h>

#include <functional>
#include <string>

#include "ca/graph.h"

namespace ca::detail {

/// ArgType of a c10 type. Throws CaptureError naming `where` for types the IR cannot hold.
ArgType arg_type_of(const c10::TypePtr& type, const std::string& where);

/// The c10 type an ArgType stands for.
c10::TypePtr type_ptr_of(const ArgType& type);

/// Maps a tensor met inside a packed IValue to its value id (kNoValue when undefined).
using TensorToValue = std::function<ValueId(const at::Tensor&)>;

/// Arg of a packed IValue. `declared` is the schema type when known (may be null): it tells
/// apart ints that stand for a Layout, ScalarType or MemoryFormat. Throws CaptureError naming
/// `where` for IValues the IR cannot hold (objects, futures, generators, symbolic floats...).
Arg arg_from_ivalue(const c10::IValue& value, const c10::TypePtr& declared,
                    const TensorToValue& tensor_id, const std::string& where);

/// Arg of a packed IValue that must hold no tensors (edge metadata, view geometry). Throws
/// CaptureError naming `where` if a defined tensor is inside, rather than dropping it.
Arg constant_arg_from_ivalue(const c10::IValue& value, const c10::TypePtr& declared,
                             const std::string& where);

/// Maps a value id inside an Arg to the tensor it stands for at this point.
using ValueToTensor = std::function<at::Tensor(ValueId)>;
/// Maps a kSymInt reference to its int value.
using ValueToInt = std::function<int64_t(ValueId)>;

/// IValue of an Arg: the exact IValue (types included) that upstream's packer produced.
c10::IValue ivalue_from_arg(const ArgRef& arg, const ValueToTensor& tensor_of,
                            const ValueToInt& int_of);

/// IValue of an Arg before any run: tensor references read as undefined tensors and symbolic
/// sizes as 0, for a run to fill.
c10::IValue ivalue_from_constant_arg(const ArgRef& arg);

}  // namespace ca::detail
