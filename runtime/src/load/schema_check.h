// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// Load-time type check of packed args against an op's schema, so that a corrupt or foreign
// graph is refused with a clear message instead of reaching unchecked unpacking code.

#include <ATen/core/ivalue.h>
#include <ATen/core/jit_type.h>

#include <string>

namespace ca::detail {

/// Empty when `value` fits `schema` the way upstream's packers produce it (ints stand for
/// SymInt, Layout, ScalarType and MemoryFormat); else what does not fit.
std::string schema_mismatch(const c10::IValue& value, const c10::TypePtr& schema);

}  // namespace ca::detail
