// SPDX-License-Identifier: BSD-3-Clause
#pragma once
// The text of schema/ca_graph.fbs, compiled in (generated schema_text.cpp) for FlatBuffers' JSON
// parser.

namespace ca::detail {

extern const char* const kGraphSchemaText;

}  // namespace ca::detail
