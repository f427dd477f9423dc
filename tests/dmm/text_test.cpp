// SPDX-License-Identifier: MIT
// Text, the allocation-free message builder of src/dmm: appends, integers at
// their limits, and safe truncation (always NUL-terminated, cut on a UTF-8
// boundary, marked with "...").
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "dmm/text.h"

namespace tailor::dmm {
namespace {

TEST(Text, ComposesASpecMessage) {
  TextBuffer<128> t;
  t.append("allocators[").append_uint(2).append("].fit: unknown fit '").append("worst")
      .append("' (known: first, best, exact, farthest)");
  EXPECT_STREQ(t.c_str(), "allocators[2].fit: unknown fit 'worst' (known: first, best, exact, farthest)");
  EXPECT_EQ(t.size(), std::strlen(t.c_str()));
  EXPECT_FALSE(t.truncated());
}

TEST(Text, Integers) {
  TextBuffer<64> t;
  t.append_uint(0).append(' ').append_uint(std::numeric_limits<std::uint64_t>::max());
  EXPECT_STREQ(t.c_str(), "0 18446744073709551615");
  t.clear();
  t.append_int(std::numeric_limits<std::int64_t>::min()).append(' ').append_int(-1).append(' ')
      .append_int(std::numeric_limits<std::int64_t>::max());
  EXPECT_STREQ(t.c_str(), "-9223372036854775808 -1 9223372036854775807");
}

TEST(Text, CallerBufferAndNull) {
  char buf[16];
  Text t(buf, sizeof buf);
  t.append(static_cast<const char*>(nullptr)).append("ab", 1).append('c');
  EXPECT_STREQ(buf, "ac");
  EXPECT_EQ(t.c_str(), buf);
}

TEST(Text, TruncatesWithAnEllipsis) {
  TextBuffer<8> t;
  t.append("abcdef").append("ghij");  // 7 characters fit
  EXPECT_TRUE(t.truncated());
  EXPECT_STREQ(t.c_str(), "abcd...");
  EXPECT_EQ(t.size(), 7u);
  t.append("more").append_uint(12345);  // nothing more after a cut
  EXPECT_STREQ(t.c_str(), "abcd...");
  t.clear();
  EXPECT_FALSE(t.truncated());
  t.append("1234567");  // exactly full: not truncated
  EXPECT_FALSE(t.truncated());
  EXPECT_STREQ(t.c_str(), "1234567");
  t.append('8');
  EXPECT_STREQ(t.c_str(), "1234...");
}

TEST(Text, TruncatesOnACharacterBoundary) {
  TextBuffer<9> t;
  t.append("ab\xc3\xa9\xc3\xa9xyz");  // "abéé" then more: the cut must not split an é
  EXPECT_TRUE(t.truncated());
  EXPECT_STREQ(t.c_str(), "ab\xc3\xa9...");
}

TEST(Text, TinyCapacities) {
  char none[1] = {'x'};
  Text zero(none, 0);
  zero.append("abc").append_uint(7);
  EXPECT_STREQ(zero.c_str(), "");
  EXPECT_EQ(none[0], 'x');  // never written
  for (std::size_t cap = 1; cap < 6; ++cap) {
    char buf[8];
    std::memset(buf, '#', sizeof buf);
    Text t(buf, cap);
    t.append("abcdefgh");
    EXPECT_TRUE(t.truncated());
    EXPECT_LT(t.size(), cap);
    EXPECT_EQ(buf[t.size()], '\0');
    for (std::size_t i = cap; i < sizeof buf; ++i) EXPECT_EQ(buf[i], '#') << cap;  // nothing past the buffer
  }
}

TEST(Text, AppendVisible) {
  TextBuffer<64> t;
  t.append_visible("a\nb\x7f\tc", 6, 10);
  EXPECT_STREQ(t.c_str(), "a?b??c");
  t.clear();
  t.append_visible("abcdefgh", 8, 3);
  EXPECT_STREQ(t.c_str(), "abc...");
  t.clear();
  t.append_visible("\xc3\xa9\xc3\xa9", 4, 3);  // never half a character
  EXPECT_STREQ(t.c_str(), "\xc3\xa9...");
}

TEST(Text, HexAndRightAlignedNumbers) {
  TextBuffer<64> t;
  t.append_hex(0).append(' ').append_hex(0xabc).append(' ').append_hex(~std::uint64_t{0});
  EXPECT_STREQ(t.c_str(), "0x0 0xabc 0xffffffffffffffff");
  t.clear();
  t.append('[').append_uint(42, 5).append("][").append_uint(123456, 3).append("][").append_uint(0, 1).append(']');
  EXPECT_STREQ(t.c_str(), "[   42][123456][0]");  // as printf's %5u, %3u, %1u
}

}  // namespace
}  // namespace tailor::dmm
