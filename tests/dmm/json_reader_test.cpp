// SPDX-License-Identifier: MIT
// The freestanding JSON reader (src/dmm/json_reader.h): every value kind,
// escapes and surrogates, integers at their limits, every error with its line
// and column, the arena running out, deep nesting, every truncation of the
// specs in share/dmm, and random mutations of spec-like documents checked
// against nlohmann::json (the reader the simulator used so far). Texts and
// arenas are exact-size heap blocks so that AddressSanitizer sees any read
// past the end.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "dmm/json_reader.h"

// tests/dmm/freestanding_check.cpp, built with libtailor's flags.
extern "C" int tailor_dmm_json_summary(const char* text, std::size_t length, char* out, std::size_t capacity);

namespace tailor::dmm {
namespace {

using namespace std::string_literals;

// A parse over exact-size copies of the text and the arena.
class Doc {
 public:
  Doc(std::string_view text, std::size_t arena)
      : text_(new char[text.size()]), arena_(new char[arena]) {
    std::memcpy(text_.get(), text.data(), text.size());
    result_ = parse_json(text_.get(), text.size(), arena_.get(), arena);
  }

  const JsonResult& result() const { return result_; }
  const JsonValue& root() const { return *result_.root(); }
  bool ok() const { return result_.ok(); }
  std::string error() const { return result_.error(); }
  char* text() { return text_.get(); }

 private:
  std::unique_ptr<char[]> text_;
  std::unique_ptr<char[]> arena_;
  JsonResult result_;
};

// With the arena json_arena_bound gives.
Doc parse(std::string_view text) { return Doc(text, json_arena_bound(text.size())); }

std::string str(const JsonValue& v) { return std::string(v.string_data(), v.string_size()); }

// --- values ----------------------------------------------------------------

TEST(JsonReader, EveryValueKind) {
  const std::string text =
      R"({"n": null, "t": true, "f": false, "i": 42, "neg": -7, "d": 1.5, "s": "hi",
          "a": [1, "x", [], {}], "o": {"k": {"deep": [null]}}})";
  Doc d = parse(text);
  ASSERT_TRUE(d.ok()) << d.error();
  EXPECT_STREQ(d.result().error(), "");
  const JsonValue& r = d.root();
  ASSERT_TRUE(r.is_object());
  EXPECT_EQ(r.size(), 9u);
  EXPECT_EQ(r.kind(), JsonKind::kObject);

  ASSERT_NE(r.find("n"), nullptr);
  EXPECT_TRUE(r.find("n")->is_null());
  EXPECT_TRUE(r.find("t")->is_bool());
  EXPECT_TRUE(r.find("t")->as_bool());
  EXPECT_TRUE(r.find("f")->is_bool());
  EXPECT_FALSE(r.find("f")->as_bool());
  EXPECT_TRUE(r.find("i")->is_uint64());
  EXPECT_EQ(r.find("i")->as_uint64(), 42u);
  EXPECT_EQ(r.find("i")->as_double(), 42.0);
  EXPECT_FALSE(r.find("neg")->is_uint64());
  EXPECT_EQ(r.find("neg")->as_uint64(), 0u);
  EXPECT_EQ(r.find("neg")->as_int64(), -7);
  EXPECT_EQ(r.find("neg")->as_double(), -7.0);
  EXPECT_TRUE(r.find("d")->is_number());
  EXPECT_FALSE(r.find("d")->is_uint64());
  EXPECT_FALSE(r.find("d")->is_int64());
  EXPECT_EQ(r.find("d")->as_double(), 1.5);
  EXPECT_TRUE(r.find("s")->string_equals("hi"));
  EXPECT_FALSE(r.find("s")->string_equals("h"));
  EXPECT_FALSE(r.find("i")->string_equals(""));
  EXPECT_EQ(r.find("missing"), nullptr);
  EXPECT_EQ(r.find("s")->find("s"), nullptr);  // not an object

  const JsonValue& a = *r.find("a");
  ASSERT_TRUE(a.is_array());
  EXPECT_EQ(a.size(), 4u);
  EXPECT_EQ(a.at(0)->as_uint64(), 1u);
  EXPECT_EQ(str(*a.at(1)), "x");
  EXPECT_TRUE(a.at(2)->is_array());
  EXPECT_EQ(a.at(2)->size(), 0u);
  EXPECT_TRUE(a.at(3)->is_object());
  EXPECT_EQ(a.at(4), nullptr);
  EXPECT_EQ(a.find("x"), nullptr);
  EXPECT_EQ(a.at(0)->key_size(), 0u);
  EXPECT_STREQ(a.at(0)->key(), "");

  const JsonValue* deep = r.find("o")->find("k")->find("deep");
  ASSERT_NE(deep, nullptr);
  EXPECT_TRUE(deep->at(0)->is_null());

  // Members in order, with their keys.
  std::string keys;
  for (const JsonValue& m : r.items()) keys += std::string(m.key(), m.key_size()) + ",";
  EXPECT_EQ(keys, "n,t,f,i,neg,d,s,a,o,");
  std::size_t n = 0;
  for (const JsonValue& e : a.items()) n += e.is_array() || e.is_object() ? 10 : 1;
  EXPECT_EQ(n, 22u);
  // Scalars are empty containers and non-strings empty strings.
  EXPECT_EQ(r.find("i")->size(), 0u);
  EXPECT_EQ(r.find("i")->items().begin(), r.find("i")->items().end());
  EXPECT_STREQ(r.find("i")->string_data(), "");
  EXPECT_EQ(r.find("a")->string_size(), 0u);
  EXPECT_EQ(r.find("n")->as_double(), 0.0);
  EXPECT_STREQ(json_kind_name(r.find("o")->kind()), "object");
  EXPECT_STREQ(json_kind_name(JsonKind::kBool), "boolean");

  // Where a value starts.
  const JsonLocation at = json_locate(text.data(), text.size(), r.find("a")->offset());
  EXPECT_EQ(at.line, 2u);
  EXPECT_EQ(at.column, 16u);
  EXPECT_EQ(text[r.find("a")->offset()], '[');
}

TEST(JsonReader, ScalarsAtTheTop) {
  EXPECT_TRUE(parse("null").root().is_null());
  EXPECT_TRUE(parse(" \t\r\n true \n").root().as_bool());
  EXPECT_EQ(parse("7").root().as_uint64(), 7u);
  EXPECT_EQ(str(parse("\"\"").root()), "");
  EXPECT_TRUE(parse("\xef\xbb\xbf{}").root().is_object());  // a byte order mark is skipped
}

TEST(JsonReader, TheDomOutlivesTheText) {
  Doc d = parse(R"({"key": "value", "list": ["a\n"]})");
  ASSERT_TRUE(d.ok());
  std::memset(d.text(), '#', 30);
  EXPECT_TRUE(d.root().find("key")->string_equals("value"));
  EXPECT_EQ(str(*d.root().find("list")->at(0)), "a\n");
}

// --- strings ---------------------------------------------------------------

TEST(JsonReader, Escapes) {
  Doc d = parse(R"(["\"\\\/\b\f\n\r\t", "\u0041\u00e9\u20AC\uD83D\uDE00", "a\u0000b", "é€😀"])");
  ASSERT_TRUE(d.ok()) << d.error();
  EXPECT_EQ(str(*d.root().at(0)), "\"\\/\b\f\n\r\t");
  EXPECT_EQ(str(*d.root().at(1)), "A\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
  EXPECT_EQ(d.root().at(2)->string_size(), 3u);
  EXPECT_EQ(str(*d.root().at(2)), "a\0b"s);
  EXPECT_EQ(str(*d.root().at(3)), "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
  for (const JsonValue& s : d.root().items()) EXPECT_EQ(s.string_data()[s.string_size()], '\0');
  // The extremes of the surrogate ranges, and keys decoded the same way.
  Doc e = parse(R"({"\ud800\udc00": "\uDBFF\uDFFF", "k\u00e9y": 1})");
  ASSERT_TRUE(e.ok()) << e.error();
  EXPECT_EQ(str(*e.root().find("\xf0\x90\x80\x80")), "\xf4\x8f\xbf\xbf");
  EXPECT_EQ(e.root().find("k\xc3\xa9y")->as_uint64(), 1u);
  EXPECT_EQ(e.root().at(1)->key_size(), 4u);
}

// --- numbers ---------------------------------------------------------------

struct Int {
  const char* text;
  bool is_uint;
  std::uint64_t u;
  bool is_int;
  std::int64_t i;
};

TEST(JsonReader, IntegersAtTheLimits) {
  const Int cases[] = {
      {"0", true, 0, true, 0},
      {"-0", true, 0, true, 0},
      {"-1", false, 0, true, -1},
      {"9223372036854775807", true, 9223372036854775807u, true, 9223372036854775807},
      {"9223372036854775808", true, 9223372036854775808u, false, 0},
      {"18446744073709551615", true, 18446744073709551615u, false, 0},
      {"-9223372036854775808", false, 0, true, std::numeric_limits<std::int64_t>::min()},
  };
  for (const Int& c : cases) {
    Doc d = parse(c.text);
    ASSERT_TRUE(d.ok()) << c.text << ": " << d.error();
    EXPECT_TRUE(d.root().is_number()) << c.text;
    EXPECT_EQ(d.root().is_uint64(), c.is_uint) << c.text;
    EXPECT_EQ(d.root().as_uint64(), c.u) << c.text;
    EXPECT_EQ(d.root().is_int64(), c.is_int) << c.text;
    EXPECT_EQ(d.root().as_int64(), c.i) << c.text;
  }
  // One past the limits, and non-integer literals of integer values: doubles.
  const std::pair<const char*, double> doubles[] = {{"18446744073709551616", 18446744073709551616.0},
                                                    {"-9223372036854775809", -9223372036854775808.0},
                                                    {"1.0", 1.0},
                                                    {"1e2", 100.0},
                                                    {"-0.0", -0.0},
                                                    {"100000000000000000000000000000", 1e29}};
  for (const auto& [text, value] : doubles) {
    Doc d = parse(text);
    ASSERT_TRUE(d.ok()) << text << ": " << d.error();
    EXPECT_FALSE(d.root().is_uint64()) << text;
    EXPECT_FALSE(d.root().is_int64()) << text;
    EXPECT_EQ(d.root().as_double(), value) << text;
  }
  EXPECT_TRUE(std::signbit(parse("-0.0").root().as_double()));
}

bool within_one_ulp(double got, double want) {
  return got == want || got == std::nextafter(want, HUGE_VAL) || got == std::nextafter(want, -HUGE_VAL);
}

double parsed_double(const std::string& text) {
  Doc d = parse(text);
  EXPECT_TRUE(d.ok()) << text << ": " << d.error();
  return d.ok() ? d.root().as_double() : std::nan("");
}

TEST(JsonReader, DoublesWithoutTheLocale) {
  // Exact (correctly rounded) on the fast path.
  for (const char* t : {"0.1", "3.14159", "-2.5e-3", "1e22", "1E+2", "123456.789e3", "0.000001", "9007199254740992"})
    EXPECT_EQ(parsed_double(t), std::strtod(t, nullptr)) << t;
  // Elsewhere within a few units in the last place.
  for (const char* t : {"1e308", "1.7976931348623157e308", "2.2250738585072014e-308", "4.9e-324", "1e-320",
                        "12345678901234567890123e-30", "0.30000000000000004", "6.02214076e23", "1.602176634e-19",
                        "123456789012345678901234567890.5", "0.00000000000000000000000000000000000001"}) {
    const double want = std::strtod(t, nullptr), got = parsed_double(t);
    EXPECT_TRUE(within_one_ulp(got, want)) << t << ": " << got << " for " << want;
  }
  EXPECT_EQ(parsed_double("1e-400"), 0.0);
  EXPECT_EQ(parsed_double("0e99999999999999999999"), 0.0);
  EXPECT_EQ(parsed_double("1e-99999999999999999999"), 0.0);
  EXPECT_EQ(parsed_double("0.0000000000000000000000000000000000000000000000000000001e60"), 1e5);
}

TEST(JsonReader, RandomDoublesAgreeWithStrtod) {
  std::mt19937_64 rng(7);
  int tried = 0, exact = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string digits(1 + rng() % 25, '0');
    for (char& c : digits) c = static_cast<char>('0' + rng() % 10);
    if (digits.size() > 1 && rng() % 2) digits.insert(1 + rng() % (digits.size() - 1), ".");
    std::string t = (rng() % 2 ? "-" : "") + digits + "e" + std::to_string(static_cast<int>(rng() % 660) - 340);
    if (digits.size() > 1 && digits[0] == '0' && digits[1] != '.') continue;  // a leading zero: not JSON
    const double want = std::strtod(t.c_str(), nullptr);
    if (!std::isfinite(want)) continue;
    Doc d = parse(t);
    ASSERT_TRUE(d.ok()) << t << ": " << d.error();
    const double got = d.root().as_double();
    ASSERT_TRUE(within_one_ulp(got, want)) << t << ": " << got << " for " << want;
    ++tried;
    exact += got == want;
  }
  std::printf("%d of %d correctly rounded\n", exact, tried);
  EXPECT_GE(exact, tried * 99 / 100);
}

// --- errors ----------------------------------------------------------------

struct Bad {
  std::string text;
  std::size_t line, column;
  const char* message;
};

TEST(JsonReader, EveryErrorWithItsLineAndColumn) {
  const Bad cases[] = {
      {"", 1, 1, "expected a value, found the end of the text"},
      {"  \n   ", 2, 4, "expected a value, found the end of the text"},
      {"{\n  \"a\": 1\n  \"b\": 2\n}", 3, 3, "expected ',' or '}' in an object, found '\"'"},
      {"[1 2]", 1, 4, "expected ',' or ']' in an array, found '2'"},
      {"[1,]", 1, 4, "expected a value, found ']'"},
      {"[1", 1, 3, "expected ',' or ']' in an array, found the end of the text"},
      {"{\"a\":1,}", 1, 8, "expected a key (a string) in an object, found '}'"},
      {"{a:1}", 1, 2, "expected a key (a string) in an object, found 'a'"},
      {"{\"a\" 1}", 1, 6, "expected ':' after the key in an object, found '1'"},
      {"{\"a\":1", 1, 7, "expected ',' or '}' in an object, found the end of the text"},
      {"{\"x\": 1,\n \"name\": 2, \"name\": 3}", 2, 13, "duplicate key 'name'"},
      {"{\"a\\nb\":1,\"a\\u000ab\":2}", 1, 11, "duplicate key 'a?b'"},
      {"tru", 1, 1, "invalid literal: expected true"},
      {"[nul]", 1, 2, "invalid literal: expected null"},
      {"fals", 1, 1, "invalid literal: expected false"},
      {"True", 1, 1, "expected a value, found 'T'"},
      {"-", 1, 2, "invalid number: expected a digit after '-', found the end of the text"},
      {"-a", 1, 2, "invalid number: expected a digit after '-', found 'a'"},
      {"[01]", 1, 2, "invalid number: a leading zero must not be followed by digits"},
      {"-00", 1, 2, "invalid number: a leading zero must not be followed by digits"},
      {"1.", 1, 3, "invalid number: expected a digit after '.', found the end of the text"},
      {"1.e3", 1, 3, "invalid number: expected a digit after '.', found 'e'"},
      {"1e", 1, 3, "invalid number: expected a digit in the exponent, found the end of the text"},
      {"1e+", 1, 4, "invalid number: expected a digit in the exponent, found the end of the text"},
      {".5", 1, 1, "expected a value, found '.'"},
      {"+1", 1, 1, "expected a value, found '+'"},
      {"[1, 1e309]", 1, 5, "number out of range"},
      {"-1e400", 1, 1, "number out of range"},
      {"\"abc", 1, 1, "unterminated string (the text ends inside it)"},
      {"\"abc\\", 1, 1, "unterminated string (the text ends inside it)"},
      {"[\"a\nb\"]", 1, 4, "line break in a string"},
      {"\"a\tb\"", 1, 3, "control character 0x09 in a string (escape it)"},
      {"\"\x7f\x1f\"", 1, 3, "control character 0x1F in a string"},
      {"\"\\x\"", 1, 2, "invalid escape \\x in a string (valid: \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)"},
      {"\"\\\x01\"", 1, 2, "invalid escape \\ and byte 0x01 in a string"},
      {"\"\\u12G4\"", 1, 2, "invalid \\u escape: expected 4 hex digits"},
      {"\"\\u12\"", 1, 2, "invalid \\u escape: expected 4 hex digits"},
      {"\"\\u12", 1, 2, "invalid \\u escape: expected 4 hex digits"},
      {"\"\\ud800\"", 1, 2, "lone high surrogate \\ud800 (it must be followed by a \\uDC00-\\uDFFF)"},
      {"\"x\\uD800\\u0041\"", 1, 3, "lone high surrogate \\uD800"},
      {"\"\\uD800\\uD800\"", 1, 2, "lone high surrogate \\uD800"},
      {"\"\\uD800\\n\"", 1, 2, "lone high surrogate \\uD800"},
      {"\"\\udc00\"", 1, 2, "lone low surrogate \\udc00 (it must follow a \\uD800-\\uDBFF)"},
      {"\"\xc3\"", 1, 2, "invalid UTF-8 in a string"},
      {"\"\xc3", 1, 2, "invalid UTF-8 in a string"},
      {"\"\xc0\xaf\"", 1, 2, "invalid UTF-8 in a string"},          // overlong '/'
      {"\"\xe0\x80\xaf\"", 1, 2, "invalid UTF-8 in a string"},      // overlong, 3 bytes
      {"\"\xf0\x80\x80\xaf\"", 1, 2, "invalid UTF-8 in a string"},  // overlong, 4 bytes
      {"\"\xed\xa0\x80\"", 1, 2, "invalid UTF-8 in a string"},      // a surrogate in UTF-8
      {"\"\xf4\x90\x80\x80\"", 1, 2, "invalid UTF-8 in a string"},  // above U+10FFFF
      {"\"\xe2\x82\"", 1, 2, "invalid UTF-8 in a string"},          // cut short
      {"\"\xff\"", 1, 2, "invalid UTF-8 in a string"},
      {"\"\x80\"", 1, 2, "invalid UTF-8 in a string"},
      {"\"\xc3\xa9\xc3\"", 1, 3, "invalid UTF-8 in a string"},  // columns count characters
      {"1 2", 1, 3, "expected the end of the text after the value, found '2'"},
      {"{}\n\n  }", 3, 3, "expected the end of the text after the value, found '}'"},
      {"\xc3\xa9", 1, 1, "expected a value, found byte 0xC3"},
      {"[\"\xc3\xa9\", x]", 1, 7, "expected a value, found 'x'"},
      {"\xef\xbb\xbf x", 1, 2, "expected a value, found 'x'"},
      {"{\r\n\"a\" 1}", 2, 5, "expected ':' after the key in an object, found '1'"},
      {"[1]\0"s, 1, 4, "expected the end of the text after the value, found byte 0x00"},
      {"\0"s, 1, 1, "expected a value, found byte 0x00"},
  };
  for (const Bad& c : cases) {
    Doc d = parse(c.text);
    ASSERT_TRUE(d.result().failed()) << c.text;
    EXPECT_EQ(d.result().root(), nullptr);
    const JsonLocation& at = d.result().error_location();
    EXPECT_EQ(at.line, c.line) << c.text << " -> " << d.error();
    EXPECT_EQ(at.column, c.column) << c.text << " -> " << d.error();
    const std::string prefix = "line " + std::to_string(c.line) + ", column " + std::to_string(c.column) +
                               " (byte " + std::to_string(at.offset) + "): ";
    EXPECT_EQ(d.error().substr(0, prefix.size()), prefix) << c.text;
    EXPECT_NE(d.error().find(c.message), std::string::npos) << c.text << " -> " << d.error();
  }
}

TEST(JsonReader, ALongDuplicateKeyIsShortened) {
  const std::string key(300, 'k');
  Doc d = parse("{\"" + key + "\": 1, \"" + key + "\": 2}");
  ASSERT_TRUE(d.result().failed());
  EXPECT_NE(d.error().find("duplicate key '" + std::string(64, 'k') + "...'"), std::string::npos) << d.error();
  EXPECT_LT(d.error().size(), kJsonErrorCapacity);
}

TEST(JsonReader, NoTextAndTooLongATextAreErrors) {
  char arena[4096];
  JsonResult r = parse_json(nullptr, 0, arena, sizeof arena);
  EXPECT_TRUE(r.failed());
  EXPECT_STREQ(r.error(), "line 1, column 1 (byte 0): expected a value, found the end of the text");
  if constexpr (sizeof(std::size_t) > 4) {
    const std::unique_ptr<char[]> one(new char[1]{'['});
    r = parse_json(one.get(), std::size_t{1} << 32, arena, sizeof arena);  // never read: refused first
    EXPECT_TRUE(r.failed());
    EXPECT_STREQ(r.error(), "line 1, column 1 (byte 0): text longer than 4294967295 bytes");
  }
}

// --- the arena -------------------------------------------------------------

const char* const kSpec = R"({
  "name": "lea-like",
  "allocators": [
    {"sizes": {"min": 0, "max": 248}, "mechanism": "exact_segregated_fit", "structure": "dll", "policy": "lifo",
     "system": {"granularity": 65536, "chunk": 65536}},
    {"sizes": {"min": 248, "max": null}, "mechanism": "segregated_fit", "classes": [256, 512, 1024],
     "structure": "btree", "fit": "best", "policy": "fifo", "split": true, "coalesce": true,
     "system": {"granularity": 65536, "chunk": 65536, "returns": true}}
  ]
})";

// A text rendering of the DOM, to compare parses.
std::string dump(const JsonValue& v) {
  std::ostringstream out;
  switch (v.kind()) {
    case JsonKind::kNull: return "null";
    case JsonKind::kBool: return v.as_bool() ? "true" : "false";
    case JsonKind::kNumber:
      if (v.is_uint64()) return std::to_string(v.as_uint64());
      if (v.is_int64()) return std::to_string(v.as_int64());
      out.precision(17);
      out << v.as_double();
      return out.str();
    case JsonKind::kString: return "\"" + str(v) + "\"";
    case JsonKind::kArray:
    case JsonKind::kObject: {
      out << (v.is_array() ? "[" : "{");
      for (const JsonValue& e : v.items()) {
        if (v.is_object()) out << std::string(e.key(), e.key_size()) << ":";
        out << dump(e) << ",";
      }
      out << (v.is_array() ? "]" : "}");
      return out.str();
    }
  }
  return "?";
}

TEST(JsonReader, TheArenaRunsOut) {
  const std::string_view spec(kSpec);
  Doc full = parse(spec);
  ASSERT_TRUE(full.ok()) << full.error();
  const std::string want = dump(full.root());
  const std::size_t used = full.result().arena_used();
  EXPECT_GT(used, 0u);
  EXPECT_LE(used, json_arena_bound(spec.size()));

  Doc small(spec, 100);
  ASSERT_TRUE(small.result().failed());
  EXPECT_NE(small.error().find("document too large for 100 bytes"), std::string::npos) << small.error();
  JsonResult none = parse_json(spec.data(), spec.size(), nullptr, 0);
  EXPECT_NE(std::string(none.error()).find("document too large for 0 bytes"), std::string::npos) << none.error();
  EXPECT_EQ(none.error_location().line, 1u);
  EXPECT_EQ(none.error_location().column, 1u);

  // Every size: either the same DOM or "too large"; and once big enough, always.
  bool fitted = false;
  for (std::size_t bytes = 0; bytes <= used + 64; ++bytes) {
    Doc d(spec, bytes);
    if (d.ok()) {
      fitted = true;
      EXPECT_EQ(dump(d.root()), want) << bytes;
      EXPECT_LE(d.result().arena_used(), bytes);
    } else {
      EXPECT_FALSE(fitted) << "fails at " << bytes << " after fitting in fewer bytes";
      EXPECT_NE(d.error().find("document too large for " + std::to_string(bytes) + " bytes"), std::string::npos)
          << d.error();
    }
  }
  EXPECT_TRUE(fitted);
}

TEST(JsonReader, NodeSize) {
  // json_arena_bound's comment (2 KiB of spec: about 45 KiB of arena) assumes it.
  if constexpr (sizeof(void*) == 8) {
    EXPECT_EQ(sizeof(JsonValue), 40u);
  }
  EXPECT_LT(json_arena_bound(2048), 46u * 1024);
  EXPECT_EQ(json_arena_bound(std::numeric_limits<std::size_t>::max()), std::numeric_limits<std::size_t>::max());
}

TEST(JsonReader, AnUnalignedArena) {
  std::unique_ptr<char[]> buf(new char[json_arena_bound(std::strlen(kSpec)) + 16]);
  for (std::size_t shift = 0; shift < 8; ++shift) {
    JsonResult r = parse_json(kSpec, std::strlen(kSpec), buf.get() + shift, json_arena_bound(std::strlen(kSpec)));
    ASSERT_TRUE(r.ok()) << r.error();
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(r.root()) % alignof(JsonValue), 0u);
    EXPECT_EQ(r.root()->find("allocators")->at(1)->find("classes")->at(2)->as_uint64(), 1024u);
  }
}

// --- nesting ---------------------------------------------------------------

TEST(JsonReader, DeepNesting) {
  const std::string ok64 = std::string(kJsonMaxDepth, '[') + std::string(kJsonMaxDepth, ']');
  Doc d = parse(ok64);
  ASSERT_TRUE(d.ok()) << d.error();
  const JsonValue* v = &d.root();
  for (std::size_t i = 1; i < kJsonMaxDepth; ++i) v = v->at(0);
  EXPECT_EQ(v->size(), 0u);

  const std::string deep65 = std::string(kJsonMaxDepth + 1, '[') + std::string(kJsonMaxDepth + 1, ']');
  Doc e = parse(deep65);
  ASSERT_TRUE(e.result().failed());
  EXPECT_EQ(e.error(), "line 1, column 65 (byte 64): nesting deeper than 64 levels");

  std::string objects;  // {"a":{"a":...}} mixed with arrays
  for (std::size_t i = 0; i < kJsonMaxDepth; ++i) objects += i % 2 ? "[" : "{\"a\":";
  objects += "1";
  for (std::size_t i = kJsonMaxDepth; i-- > 0;) objects += i % 2 ? "]" : "}";
  EXPECT_TRUE(parse(objects).ok()) << parse(objects).error();
  EXPECT_FALSE(parse("[" + objects + "]").ok());

  // Far deeper than any stack would take: refused at level 65, no recursion beyond.
  Doc huge = parse(std::string(1000000, '['));
  EXPECT_NE(huge.error().find("nesting deeper than 64 levels"), std::string::npos);
}

// --- truncations and random mutations --------------------------------------

std::vector<std::string> share_specs() {
  std::vector<std::string> out;
  for (const auto& entry : std::filesystem::directory_iterator(TAILOR_SHARE_DIR "/dmm")) {
    std::ifstream in(entry.path());
    std::stringstream s;
    s << in.rdbuf();
    out.push_back(s.str());
  }
  return out;
}

// Invariants of any result: a failure says where, within the text, and is
// never "too large" with json_arena_bound bytes; a success is a sound DOM.
void check_result(const std::string& text, const JsonResult& r) {
  if (r.failed()) {
    const std::string e = r.error();
    ASSERT_EQ(e.rfind("line ", 0), 0u) << e;
    ASSERT_LE(r.error_location().offset, text.size());
    const JsonLocation at = json_locate(text.data(), text.size(), r.error_location().offset);
    ASSERT_EQ(at.line, r.error_location().line);
    ASSERT_EQ(at.column, r.error_location().column);
    ASSERT_EQ(e.find("too large"), std::string::npos) << "json_arena_bound was not enough: " << e;
    return;
  }
  ASSERT_EQ(r.error()[0], '\0');
  ASSERT_LE(r.arena_used(), json_arena_bound(text.size()));
}

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

TEST(JsonReader, EveryTruncationOfTheSpecsFailsCleanly) {
  std::vector<std::string> docs = share_specs();
  ASSERT_GE(docs.size(), 5u);
  docs.emplace_back(kSpec);
  for (std::string doc : docs) {
    while (!doc.empty() && is_space(doc.back())) doc.pop_back();  // else a shorter prefix is still valid
    ASSERT_TRUE(parse(doc).ok()) << parse(doc).error();
    for (std::size_t n = 0; n < doc.size(); ++n) {
      Doc d = parse(std::string_view(doc).substr(0, n));
      ASSERT_TRUE(d.result().failed()) << n;
      check_result(doc.substr(0, n), d.result());
      // At the end, or at the start of the string or literal the end cuts.
      const std::size_t at = d.result().error_location().offset;
      ASSERT_TRUE(at == n || (at < n && std::strchr("\"tfn", doc[at]) != nullptr))
          << doc.substr(0, n) << " -> " << d.error();
    }
  }
}

// The same value in nlohmann::json and here.
::testing::AssertionResult same(const nlohmann::json& j, const JsonValue& v) {
  using T = nlohmann::json::value_t;
  auto differ = [&](const char* what) { return ::testing::AssertionFailure() << what << ": " << j.dump(); };
  switch (j.type()) {
    case T::null: return v.is_null() ? ::testing::AssertionSuccess() : differ("null");
    case T::boolean: return v.is_bool() && v.as_bool() == j.get<bool>() ? ::testing::AssertionSuccess() : differ("bool");
    case T::number_unsigned:
      return v.is_uint64() && v.as_uint64() == j.get<std::uint64_t>() ? ::testing::AssertionSuccess()
                                                                        : differ("unsigned");
    case T::number_integer:
      return v.is_int64() && v.as_int64() == j.get<std::int64_t>() ? ::testing::AssertionSuccess() : differ("integer");
    case T::number_float: {
      const double want = j.get<double>();
      return v.is_number() && !v.is_int64() && !v.is_uint64() &&
                     within_one_ulp(v.as_double(), want)
                 ? ::testing::AssertionSuccess()
                 : differ("float");
    }
    case T::string: return j.get<std::string>() == str(v) ? ::testing::AssertionSuccess() : differ("string");
    case T::array:
    case T::object: {
      if (j.is_array() != v.is_array() || j.is_object() != v.is_object() || j.size() != v.size())
        return differ("container");
      std::size_t i = 0;
      for (const JsonValue& e : v.items()) {
        const std::string key(e.key(), e.key_size());
        if (j.is_object() && !j.contains(key)) return differ("missing key");
        auto r = same(j.is_object() ? j[key] : j[i], e);
        if (!r) return r;
        ++i;
      }
      return ::testing::AssertionSuccess();
    }
    default: return differ("kind");
  }
}

// What nlohmann::json accepts and this reader refuses on purpose.
bool refused_on_purpose(const std::string& error) {
  return error.find("duplicate key") != std::string::npos || error.find("number out of range") != std::string::npos ||
         error.find("nesting deeper") != std::string::npos;
}

TEST(JsonReader, RandomMutationsNeverCrashAndAgreeWithNlohmann) {
  std::vector<std::string> docs = share_specs();
  docs.emplace_back(kSpec);
  docs.emplace_back(
      R"({"name": "mix\u00e9\ud83d\ude00 \"q\" \\ \/ \b\f\n\r\t é€", "allocators": [{"sizes": {"min": 0,)"
      R"( "max": 18446744073709551615}, "mechanism": "segregated_fit", "classes": [8, 16, 32, 0, -0],)"
      R"( "split": true, "coalesce": false, "system": {"granularity": 4096, "chunk": 1e6, "returns": null},)"
      R"( "weights": [-1, -9223372036854775808, 0.5, -2.5E-3, 1e+2, 123456789012345678901234567890, 1e-7]}]})");
  const std::string alphabet = "{}[]:,\"\\/0123456789-+.eEtrufalsnu \n\t\x7f\xc3\xa9\xed\xf4";
  std::mt19937_64 rng(20240611);
  int accepted = 0, agreed = 0, on_purpose = 0;
  for (int round = 0; round < 10000; ++round) {
    std::string t = docs[rng() % docs.size()];
    const int mutations = 1 + static_cast<int>(rng() % 4);
    for (int m = 0; m < mutations && !t.empty(); ++m) {
      const std::size_t at = rng() % t.size();
      const char c = (rng() % 4 == 0) ? static_cast<char>(rng() & 0xff) : alphabet[rng() % alphabet.size()];
      switch (rng() % 6) {
        case 0: t[at] = c; break;                                                     // replace
        case 1: t.insert(at, 1, c); break;                                            // insert
        case 2: t.erase(at, 1 + rng() % 8); break;                                    // delete a run
        case 3: t.insert(at, t.substr(rng() % t.size(), rng() % 40)); break;          // duplicate a run
        case 4: t.resize(at); break;                                                  // truncate
        case 5: t.insert(at, std::string(rng() % 80, "[{"[rng() % 2])); break;         // nest
      }
    }
    Doc d = parse(t);
    check_result(t, d.result());
    if (HasFatalFailure()) return;

    const nlohmann::json j = nlohmann::json::parse(t.begin(), t.end(), nullptr, false);
    if (d.ok()) {
      ++accepted;
      ASSERT_FALSE(j.is_discarded()) << "accepted what nlohmann refuses: " << t;
      ASSERT_TRUE(same(j, d.root())) << t;
      ++agreed;
    } else if (!j.is_discarded()) {
      ASSERT_TRUE(refused_on_purpose(d.error())) << d.error() << "\nnlohmann accepts: " << t;
      ++on_purpose;
    }

    // Small arenas: failures, never a crash or a write outside them.
    Doc tight(t, rng() % (json_arena_bound(t.size()) / 4 + 1));
    if (tight.result().failed() && d.ok()) {
      ASSERT_NE(tight.error().find("too large"), std::string::npos) << tight.error();
    }
  }
  std::printf("%d mutants valid and equal to nlohmann's DOM, %d refused on purpose\n", accepted, on_purpose);
  EXPECT_GT(accepted, 100);  // the mutations leave some documents valid
  EXPECT_EQ(agreed, accepted);
}

// --- under libtailor's flags ----------------------------------------------

std::string summary(std::string_view text, int& status, std::size_t capacity = 512) {
  std::vector<char> out(capacity);
  status = tailor_dmm_json_summary(text.data(), text.size(), out.data(), out.size());
  return out.data();
}

TEST(JsonReader, FreestandingBuildReadsASpec) {
  int status = -1;
  EXPECT_EQ(summary(kSpec, status), "lea-like: 2 allocators: [0, 248] exact_segregated_fit; [248, -] segregated_fit;");
  EXPECT_EQ(status, 1);
  std::string bad(kSpec);
  bad.replace(bad.find("\"best\""), 6, "\"worst\"");
  EXPECT_EQ(summary(bad, status), "allocators[1].fit: unknown fit 'worst' (known: first, best, exact, farthest)");
  EXPECT_EQ(status, 0);
  EXPECT_EQ(summary(bad, status, 20), "allocators[1].fi...");
  EXPECT_EQ(summary("{\"allocators\": [}", status), "line 1, column 17 (byte 16): expected a value, found '}'");
  EXPECT_EQ(status, 0);
}

}  // namespace
}  // namespace tailor::dmm
