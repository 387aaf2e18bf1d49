// SPDX-License-Identifier: BSD-3-Clause
// Text from a file is escaped before it reaches a terminal: ca::escape_text, and every ca::Error.
#include "ca/escape.h"

#include <gtest/gtest.h>

#include <string>

#include "ca/error.h"

namespace ca {
namespace {

TEST(EscapeText, PrintableAsciiNewlinesAndTabsStay) {
  EXPECT_EQ(escape_text("MulBackward0(bool[], Scalar)\n\tnext"),
            "MulBackward0(bool[], Scalar)\n\tnext");
}

TEST(EscapeText, ControlBytesAndDelAreShownAsHex) {
  EXPECT_EQ(escape_text(std::string("\x02", 1)), "\\x02");
  EXPECT_EQ(escape_text(std::string("a\x1b[31mb\x7f", 8)), "a\\x1b[31mb\\x7f");
  EXPECT_EQ(escape_text(std::string("\0z", 2)), "\\x00z");
}

TEST(EscapeText, ValidUtf8StaysAndBrokenUtf8IsHex) {
  EXPECT_EQ(escape_text("\xc3\xa9t\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80"),
            "\xc3\xa9t\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80");  // é, 日, an emoji
  EXPECT_EQ(escape_text("\xff"), "\\xff");
  EXPECT_EQ(escape_text("\xc3"), "\\xc3");             // truncated sequence
  EXPECT_EQ(escape_text("\xe6\x97z"), "\\xe6\\x97z");  // continuation missing
  EXPECT_EQ(escape_text("\xc0\xaf"), "\\xc0\\xaf");    // overlong '/'
}

TEST(EscapeText, ErrorMessagesAndContextsAreEscaped) {
  FormatError e(std::string("graph uses 1 op(s) this runtime cannot resolve: ") + '\x02');
  e.add_context(std::string("bad\xff.fb: ", 9));
  EXPECT_EQ(std::string(e.what()),
            "bad\\xff.fb: graph uses 1 op(s) this runtime cannot resolve: \\x02");
}

}  // namespace
}  // namespace ca
