// SPDX-License-Identifier: BSD-3-Clause
#pragma once
/// @file
/// Escaping of text that came from a file, before it reaches a terminal or a log.

#include <string>
#include <string_view>

namespace ca {

/// `text` with every byte that is not printable shown as `\xNN`: control characters other than
/// newline and tab, DEL, and every byte that is not part of a well-formed UTF-8 sequence. Valid
/// UTF-8 (names in any script) stays as it is. Every ca::Error message passes through it, so a
/// crafted op name cannot write control sequences to the terminal of whoever loads the file.
std::string escape_text(std::string_view text);

}  // namespace ca
