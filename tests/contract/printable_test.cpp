// Another user's bytes on an admin's terminal or in slurmd's log: shown, never obeyed.
#include <gtest/gtest.h>

#include <string>

#include "printable.hpp"

using ddp::plan::printable;
using ddp::plan::valid_utf8;

TEST(Printable, ControlCharactersBecomeEscapes) {
  EXPECT_EQ(printable("plain text, 1-2 [n3]"), "plain text, 1-2 [n3]");
  // A title change, a screen clear, a carriage return that hides what came before, DEL.
  EXPECT_EQ(printable("\x1b]0;owned\x07"), "\\x1b]0;owned\\x07");
  EXPECT_EQ(printable("\x1b[2J\x1b[H"), "\\x1b[2J\\x1b[H");
  EXPECT_EQ(printable("ok\rFAILED"), "ok\\x0dFAILED");
  EXPECT_EQ(printable("a\nb\tc\x7f"), "a\\x0ab\\x09c\\x7f");
  EXPECT_EQ(printable(std::string("a\0b", 3)), "a\\x00b");
}

TEST(Printable, UnicodeStaysButItsControlsAndBidiOverridesDoNot) {
  EXPECT_EQ(printable("Fehler: Größe ≠ 3 ✓"), "Fehler: Größe ≠ 3 ✓");
  EXPECT_EQ(printable("\xc2\x9b" "2J"), "\\u{009b}2J");              // CSI as a C1 code point
  EXPECT_EQ(printable("abc\xe2\x80\xae" "fdp.exe"), "abc\\u{202e}fdp.exe");  // right-to-left override
  EXPECT_EQ(printable("a\xe2\x80\xa8" "b"), "a\\u{2028}b");          // line separator
}

TEST(Printable, BytesThatAreNotUtf8AreEscapedOneByOne) {
  EXPECT_EQ(printable("\x9b" "2J"), "\\x9b2J");         // a lone C1 byte, as 8-bit terminals read it
  EXPECT_EQ(printable("\xc0\xaf"), "\\xc0\\xaf");       // overlong '/'
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
  EXPECT_EQ(printable("ab\xe2\x82"), "ab\\xe2\\x82");   // cut short
  EXPECT_FALSE(valid_utf8("\xff"));
  EXPECT_TRUE(valid_utf8("Größe"));
}

TEST(Printable, ALongTextIsCutWithoutSplittingACharacter) {
  EXPECT_EQ(printable(std::string(100, 'x'), 10), std::string(10, 'x') + "...");
  // A sequence the cut would split is escaped byte by byte, never half shown.
  EXPECT_EQ(printable("ab\xc3\xb6", 3), "ab\\xc3...");
  EXPECT_EQ(printable("short", 10), "short");
}
