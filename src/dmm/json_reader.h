// SPDX-License-Identifier: MIT
// A freestanding JSON reader for DMM specs. libtailor reads TAILOR_DMM=spec.json
// inside malloc's initialisation, where only libc may be used: no allocation,
// no exceptions, no RTTI, no std containers and no libstdc++ symbol at all.
// The simulator reads specs with the same code, so both accept exactly the
// same files.
//
// parse_json() reads one complete JSON text (RFC 8259) into a small DOM whose
// nodes and strings are bump-allocated from a byte buffer the caller owns
// (json_arena_bound() sizes it). A failure leaves a message in the result
// saying what is wrong and where: "line 3, column 17 (byte 42): expected ','
// or '}' in an object". Header-only: every function is inline, so the file
// can be compiled into libtailor and the simulator alike.
//
// What is accepted and kept:
//  - Numbers: an integer literal (no fraction, no exponent) that fits keeps
//    its exact value (is_uint64 for 0..2^64-1, is_int64 for -2^63..2^63-1;
//    "-0" is both, 0). Any other number keeps a double computed here without
//    the locale: exact for up to 15 significant digits and exponents within
//    +-22, otherwise within one unit in the last place where long double has
//    a 64-bit mantissa or more (x86-64, aarch64; a few units where it is a
//    plain double). A number beyond the double range is an error.
//  - Strings: escapes are decoded into UTF-8 (\uXXXX with surrogate pairs);
//    raw control characters, bad escapes, lone surrogates and invalid UTF-8
//    are errors. Decoded strings are NUL-terminated (but may hold \u0000:
//    string_size() is their length).
//  - Objects keep their members in order; a duplicate key is an error.
//  - Containers nest at most kJsonMaxDepth deep; the parser recurses once per
//    level, so that also bounds its stack.
//  - A UTF-8 byte order mark at the start is skipped (as nlohmann::json does).
// Lookup walks linked lists: find() and at() are linear, and duplicate keys
// are found by comparing each key with those before it (quadratic in the
// size of one object, which for specs is a handful of members).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>  // placement new only: inline, no library symbol

#include "dmm/text.h"

namespace tailor::dmm {

enum class JsonKind : std::uint8_t { kNull, kBool, kNumber, kString, kArray, kObject };

// "null", "boolean", "number", "string", "array" or "object".
inline const char* json_kind_name(JsonKind k) noexcept {
  switch (k) {
    case JsonKind::kNull: return "null";
    case JsonKind::kBool: return "boolean";
    case JsonKind::kNumber: return "number";
    case JsonKind::kString: return "string";
    case JsonKind::kArray: return "array";
    case JsonKind::kObject: return "object";
  }
  return "?";
}

inline constexpr std::size_t kJsonMaxDepth = 64;           // nested arrays and objects
inline constexpr std::size_t kJsonMaxLength = 0xffffffff;  // offsets and sizes are 32-bit

namespace json_detail {
class Parser;
}

class JsonValue;

// Walks an array's elements or an object's members, in order.
class JsonIterator {
 public:
  explicit JsonIterator(const JsonValue* v) noexcept : v_(v) {}
  const JsonValue& operator*() const noexcept { return *v_; }
  const JsonValue* operator->() const noexcept { return v_; }
  inline JsonIterator& operator++() noexcept;
  bool operator==(const JsonIterator& o) const noexcept { return v_ == o.v_; }
  bool operator!=(const JsonIterator& o) const noexcept { return v_ != o.v_; }

 private:
  const JsonValue* v_;
};

struct JsonRange {
  JsonIterator first, last;
  JsonIterator begin() const noexcept { return first; }
  JsonIterator end() const noexcept { return last; }
};

// One node of the DOM. Nodes live in the arena given to parse_json and are
// only ever seen through const pointers and references.
class JsonValue {
 public:
  JsonValue(const JsonValue&) = delete;
  JsonValue& operator=(const JsonValue&) = delete;

  JsonKind kind() const noexcept { return kind_; }
  bool is_null() const noexcept { return kind_ == JsonKind::kNull; }
  bool is_bool() const noexcept { return kind_ == JsonKind::kBool; }
  bool is_number() const noexcept { return kind_ == JsonKind::kNumber; }
  bool is_string() const noexcept { return kind_ == JsonKind::kString; }
  bool is_array() const noexcept { return kind_ == JsonKind::kArray; }
  bool is_object() const noexcept { return kind_ == JsonKind::kObject; }

  bool as_bool() const noexcept { return (flags_ & kTrue) != 0; }  // false unless `true`

  // Integer literals that fit; as_* give 0 when is_* is false.
  bool is_uint64() const noexcept { return (flags_ & kUint64) != 0; }
  std::uint64_t as_uint64() const noexcept { return is_uint64() ? u_.integer : 0; }
  bool is_int64() const noexcept { return (flags_ & kInt64) != 0; }
  std::int64_t as_int64() const noexcept { return is_int64() ? static_cast<std::int64_t>(u_.integer) : 0; }
  // Any number (integers converted); 0 for other kinds.
  double as_double() const noexcept {
    if (is_uint64()) return static_cast<double>(u_.integer);
    if (is_int64()) return static_cast<double>(static_cast<std::int64_t>(u_.integer));
    return is_number() ? u_.real : 0.0;
  }

  // Decoded UTF-8, NUL-terminated; "" for other kinds.
  const char* string_data() const noexcept { return is_string() ? u_.chars : ""; }
  std::size_t string_size() const noexcept { return is_string() ? size_ : 0; }
  bool string_equals(const char* s) const noexcept {
    const std::size_t n = std::strlen(s);
    return is_string() && size_ == n && std::memcmp(u_.chars, s, n) == 0;
  }

  // Arrays and objects: number of elements or members, in-order iteration,
  // the i-th element or member, the member named `key`. Other kinds are empty.
  std::size_t size() const noexcept { return is_array() || is_object() ? size_ : 0; }
  JsonRange items() const noexcept { return {JsonIterator(first()), JsonIterator(nullptr)}; }
  const JsonValue* at(std::size_t i) const noexcept {
    const JsonValue* v = first();
    while (v != nullptr && i-- > 0) v = v->next_;
    return v;
  }
  const JsonValue* find(const char* key, std::size_t n) const noexcept {
    if (!is_object()) return nullptr;
    for (const JsonValue* v = first(); v != nullptr; v = v->next_)
      if (v->key_size_ == n && std::memcmp(v->key_, key, n) == 0) return v;
    return nullptr;
  }
  const JsonValue* find(const char* key) const noexcept { return find(key, std::strlen(key)); }

  // A member of an object: its key (decoded, NUL-terminated); "" otherwise.
  const char* key() const noexcept { return key_ != nullptr ? key_ : ""; }
  std::size_t key_size() const noexcept { return key_size_; }

  // Where the value starts in the text (json_locate gives line and column).
  std::size_t offset() const noexcept { return offset_; }

 private:
  friend class JsonIterator;
  friend class json_detail::Parser;
  enum : std::uint8_t { kTrue = 1, kUint64 = 2, kInt64 = 4 };

  JsonValue() noexcept = default;
  const JsonValue* first() const noexcept { return is_array() || is_object() ? u_.first : nullptr; }

  const JsonValue* next_ = nullptr;  // next element or member of the parent
  const char* key_ = nullptr;        // set on members of objects
  union {
    std::uint64_t integer;  // two's complement when only kInt64
    double real;
    const char* chars;
    const JsonValue* first;  // first element or member
  } u_ = {0};
  std::uint32_t size_ = 0;  // string bytes, elements or members
  std::uint32_t key_size_ = 0;
  std::uint32_t offset_ = 0;
  JsonKind kind_ = JsonKind::kNull;
  std::uint8_t flags_ = 0;
};

inline JsonIterator& JsonIterator::operator++() noexcept {
  v_ = v_->next_;
  return *this;
}

// Arena bytes that always suffice for a text of `length` bytes, valid or not.
// A value takes at least two bytes of text but for the last element of a
// container and the brackets of those still open when an error is found, so
// nodes are at most length/2 + kJsonMaxDepth + 2; decoded strings with their
// NULs are never longer than their literals. For a spec of 2 KiB: about 45 KiB.
inline constexpr std::size_t json_arena_bound(std::size_t length) noexcept {
  constexpr std::size_t kFixed = (kJsonMaxDepth + 2) * sizeof(JsonValue) + alignof(JsonValue);
  constexpr std::size_t kPerByte = sizeof(JsonValue) / 2 + 1 + 1;
  if (length > (std::numeric_limits<std::size_t>::max() - kFixed) / kPerByte)
    return std::numeric_limits<std::size_t>::max();
  return (length / 2 + kJsonMaxDepth + 2) * sizeof(JsonValue) + length + alignof(JsonValue);
}

struct JsonLocation {
  std::size_t offset = 0;  // bytes from the start of the text
  std::size_t line = 1;    // 1-based
  std::size_t column = 1;  // 1-based, in characters (UTF-8 sequences count once)
};

// Line and column of byte `offset` (clamped to `length`) in the text. A byte
// order mark at the start is not counted.
inline JsonLocation json_locate(const char* text, std::size_t length, std::size_t offset) noexcept {
  JsonLocation at;
  at.offset = offset;
  if (offset > length) offset = length;
  std::size_t i = 0;
  if (offset >= 3 && std::memcmp(text, "\xef\xbb\xbf", 3) == 0) i = 3;
  for (; i < offset; ++i) {
    const auto b = static_cast<unsigned char>(text[i]);
    if (b == '\n') {
      ++at.line;
      at.column = 1;
    } else if ((b & 0xc0) != 0x80) {
      ++at.column;
    }
  }
  return at;
}

inline constexpr std::size_t kJsonErrorCapacity = 256;

class JsonResult {
 public:
  bool ok() const noexcept { return root_ != nullptr; }
  bool failed() const noexcept { return root_ == nullptr; }
  const JsonValue* root() const noexcept { return root_; }  // nullptr on failure
  // "line L, column C (byte B): what is wrong"; "" on success.
  const char* error() const noexcept { return message_; }
  const JsonLocation& error_location() const noexcept { return where_; }
  std::size_t arena_used() const noexcept { return used_; }  // bytes taken from the arena

 private:
  friend class json_detail::Parser;
  const JsonValue* root_ = nullptr;
  JsonLocation where_;
  std::size_t used_ = 0;
  char message_[kJsonErrorCapacity] = {};
};

namespace json_detail {

// Recursive descent over the text; every function returns false on the
// first error, after writing the message.
class Parser {
 public:
  Parser(const char* text, std::size_t length, void* memory, std::size_t bytes, JsonResult& out) noexcept
      : text_(text), len_(length), out_(out), msg_(out.message_, sizeof out.message_), bytes_(bytes) {
    if (memory == nullptr) bytes_ = 0;
    base_ = lo_ = static_cast<char*>(memory);
    char* top = base_ + bytes_;  // nodes grow down from the aligned top, strings up from the base
    const std::size_t misaligned = reinterpret_cast<std::uintptr_t>(top) % alignof(JsonValue);
    top_ = misaligned <= bytes_ ? top - misaligned : base_;
  }

  void run() noexcept {
    if (len_ > kJsonMaxLength) {
      msg_.append("line 1, column 1 (byte 0): text longer than ").append_uint(kJsonMaxLength).append(" bytes");
      return;
    }
    if (text_ == nullptr) len_ = 0;
    if (len_ >= 3 && std::memcmp(text_, "\xef\xbb\xbf", 3) == 0) pos_ = 3;
    JsonValue* root = nullptr;
    const bool ok = value(0, root) && end();
    out_.used_ = static_cast<std::size_t>(lo_ - base_) + static_cast<std::size_t>(base_ + bytes_ - top_);
    if (ok) out_.root_ = root;
  }

 private:
  // --- reading -------------------------------------------------------------
  int peek() const noexcept { return pos_ < len_ ? static_cast<unsigned char>(text_[pos_]) : -1; }
  int byte_at(std::size_t i) const noexcept { return i < len_ ? static_cast<unsigned char>(text_[i]) : -1; }
  static bool is_digit(int c) noexcept { return c >= '0' && c <= '9'; }
  void skip_space() noexcept {
    for (int c = peek(); c == ' ' || c == '\t' || c == '\n' || c == '\r'; c = peek()) ++pos_;
  }

  // --- errors --------------------------------------------------------------
  Text& error(std::size_t at) noexcept {
    out_.where_ = json_locate(text_, len_, at);
    msg_.clear();
    return msg_.append("line ").append_uint(out_.where_.line).append(", column ").append_uint(out_.where_.column)
        .append(" (byte ").append_uint(at).append("): ");
  }
  bool fail(std::size_t at, const char* what) noexcept {
    error(at).append(what);
    return false;
  }
  // "<what>, found 'x'" (or "byte 0xC3", or "the end of the text").
  bool fail_found(std::size_t at, const char* what) noexcept {
    Text& t = error(at).append(what).append(", found ");
    const int c = byte_at(at);
    if (c < 0) {
      t.append("the end of the text");
    } else if (c > ' ' && c < 0x7f) {
      t.append('\'').append(static_cast<char>(c)).append('\'');
    } else {
      append_byte(t.append("byte "), c);
    }
    return false;
  }
  static void append_byte(Text& t, int c) noexcept {
    const char* hex = "0123456789ABCDEF";
    t.append("0x").append(hex[(c >> 4) & 15]).append(hex[c & 15]);
  }
  bool too_large(std::size_t at) noexcept {
    error(at).append("document too large for ").append_uint(bytes_).append(" bytes of arena");
    return false;
  }

  // --- arena ---------------------------------------------------------------
  JsonValue* node(JsonKind kind, std::size_t at) noexcept {
    if (static_cast<std::size_t>(top_ - lo_) < sizeof(JsonValue)) {
      too_large(at);
      return nullptr;
    }
    top_ -= sizeof(JsonValue);
    auto* v = new (top_) JsonValue();
    v->kind_ = kind;
    v->offset_ = static_cast<std::uint32_t>(at);
    return v;
  }
  bool put(char c) noexcept {
    if (lo_ == top_) return too_large(pos_);
    *lo_++ = c;
    return true;
  }

  // --- values --------------------------------------------------------------
  bool value(std::size_t depth, JsonValue*& out) noexcept {
    skip_space();
    const std::size_t at = pos_;
    const int c = peek();
    switch (c) {
      case '{': return object(depth, out);
      case '[': return array(depth, out);
      case '"': {
        if ((out = node(JsonKind::kString, at)) == nullptr) return false;
        return string(out->u_.chars, out->size_);
      }
      case 't': return literal("true", JsonKind::kBool, out);
      case 'f': return literal("false", JsonKind::kBool, out);
      case 'n': return literal("null", JsonKind::kNull, out);
      default:
        if (c == '-' || is_digit(c)) return number(out);
        return fail_found(at, "expected a value");
    }
  }

  // The text after the value: whitespace only.
  bool end() noexcept {
    skip_space();
    return pos_ == len_ || fail_found(pos_, "expected the end of the text after the value");
  }

  bool literal(const char* word, JsonKind kind, JsonValue*& out) noexcept {
    const std::size_t at = pos_, n = std::strlen(word);
    if (len_ - pos_ < n || std::memcmp(text_ + pos_, word, n) != 0) {
      error(at).append("invalid literal: expected ").append(word);
      return false;
    }
    pos_ += n;
    if ((out = node(kind, at)) == nullptr) return false;
    if (word[0] == 't') out->flags_ = JsonValue::kTrue;
    return true;
  }

  bool array(std::size_t depth, JsonValue*& out) noexcept {
    const std::size_t at = pos_;
    if (!enter(depth, at) || (out = node(JsonKind::kArray, at)) == nullptr) return false;
    ++pos_;
    skip_space();
    if (peek() == ']') {
      ++pos_;
      return true;
    }
    for (JsonValue* tail = nullptr;;) {
      JsonValue* v = nullptr;
      if (!value(depth + 1, v)) return false;
      link(out, tail, v);
      skip_space();
      const int c = peek();
      if (c == ']') {
        ++pos_;
        return true;
      }
      if (c != ',') return fail_found(pos_, "expected ',' or ']' in an array");
      ++pos_;
    }
  }

  bool object(std::size_t depth, JsonValue*& out) noexcept {
    const std::size_t at = pos_;
    if (!enter(depth, at) || (out = node(JsonKind::kObject, at)) == nullptr) return false;
    ++pos_;
    skip_space();
    if (peek() == '}') {
      ++pos_;
      return true;
    }
    for (JsonValue* tail = nullptr;;) {
      skip_space();
      const std::size_t key_at = pos_;
      if (peek() != '"') return fail_found(key_at, "expected a key (a string) in an object");
      const char* key = nullptr;
      std::uint32_t key_size = 0;
      if (!string(key, key_size)) return false;
      if (out->find(key, key_size) != nullptr) {
        error(key_at).append("duplicate key '").append_visible(key, key_size, 64).append("'");
        return false;
      }
      skip_space();
      if (peek() != ':') return fail_found(pos_, "expected ':' after the key in an object");
      ++pos_;
      JsonValue* v = nullptr;
      if (!value(depth + 1, v)) return false;
      v->key_ = key;
      v->key_size_ = key_size;
      link(out, tail, v);
      skip_space();
      const int c = peek();
      if (c == '}') {
        ++pos_;
        return true;
      }
      if (c != ',') return fail_found(pos_, "expected ',' or '}' in an object");
      ++pos_;
    }
  }

  bool enter(std::size_t depth, std::size_t at) noexcept {
    if (depth < kJsonMaxDepth) return true;
    error(at).append("nesting deeper than ").append_uint(kJsonMaxDepth).append(" levels");
    return false;
  }

  static void link(JsonValue* parent, JsonValue*& tail, JsonValue* v) noexcept {
    if (tail == nullptr)
      parent->u_.first = v;
    else
      tail->next_ = v;
    tail = v;
    ++parent->size_;
  }

  // --- strings -------------------------------------------------------------
  // A string literal at pos_, decoded into the arena.
  bool string(const char*& data, std::uint32_t& size) noexcept {
    const std::size_t at = pos_++;
    char* start = lo_;
    for (;;) {
      const int c = peek();
      if (c < 0) return fail(at, "unterminated string (the text ends inside it)");
      if (c == '"') break;
      if (c == '\\') {
        if (!escape(at)) return false;
      } else if (c < 0x20) {
        if (c == '\n') return fail(pos_, "line break in a string (escape it as \\n, or is a '\"' missing?)");
        append_byte(error(pos_).append("control character "), c);
        msg_.append(" in a string (escape it)");
        return false;
      } else if (c < 0x80) {
        if (!put(static_cast<char>(c))) return false;
        ++pos_;
      } else {
        const std::size_t n = utf8_length();
        if (n == 0) return fail(pos_, "invalid UTF-8 in a string");
        for (std::size_t i = 0; i < n; ++i)
          if (!put(text_[pos_ + i])) return false;
        pos_ += n;
      }
    }
    ++pos_;  // the closing quote
    if (!put('\0')) return false;
    data = start;
    size = static_cast<std::uint32_t>(lo_ - start - 1);
    return true;
  }

  // The length of the valid UTF-8 sequence at pos_ (RFC 3629: no overlong
  // forms, no surrogates, nothing above U+10FFFF), or 0.
  std::size_t utf8_length() const noexcept {
    const int b = peek();
    std::size_t n = 0;
    int lo = 0x80, hi = 0xbf;  // bounds of the second byte
    if (b >= 0xc2 && b <= 0xdf) {
      n = 2;
    } else if (b >= 0xe0 && b <= 0xef) {
      n = 3;
      if (b == 0xe0) lo = 0xa0;
      if (b == 0xed) hi = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      n = 4;
      if (b == 0xf0) lo = 0x90;
      if (b == 0xf4) hi = 0x8f;
    } else {
      return 0;
    }
    const int b1 = byte_at(pos_ + 1);
    if (b1 < lo || b1 > hi) return 0;
    for (std::size_t i = 2; i < n; ++i) {
      const int bi = byte_at(pos_ + i);
      if (bi < 0x80 || bi > 0xbf) return 0;
    }
    return n;
  }

  // An escape at pos_ (the backslash) inside the string starting at `at`.
  bool escape(std::size_t at) noexcept {
    const int e = byte_at(pos_ + 1);
    char c = 0;
    switch (e) {
      case '"': c = '"'; break;
      case '\\': c = '\\'; break;
      case '/': c = '/'; break;
      case 'b': c = '\b'; break;
      case 'f': c = '\f'; break;
      case 'n': c = '\n'; break;
      case 'r': c = '\r'; break;
      case 't': c = '\t'; break;
      case 'u': return unicode_escape();
      case -1: return fail(at, "unterminated string (the text ends inside it)");
      default: {
        Text& t = error(pos_).append("invalid escape ");
        if (e > ' ' && e < 0x7f)
          t.append('\\').append(static_cast<char>(e));
        else
          append_byte(t.append("\\ and byte "), e);
        t.append(" in a string (valid: \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)");
        return false;
      }
    }
    pos_ += 2;
    return put(c);
  }

  // Four hex digits at i, or -1.
  long hex4(std::size_t i) const noexcept {
    long v = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      const int c = byte_at(i + k);
      int d = -1;
      if (c >= '0' && c <= '9') d = c - '0';
      else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
      else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
      if (d < 0) return -1;
      v = v * 16 + d;
    }
    return v;
  }

  bool unicode_escape() noexcept {
    const std::size_t at = pos_;
    long cp = hex4(pos_ + 2);
    if (cp < 0) return fail(at, "invalid \\u escape: expected 4 hex digits");
    pos_ += 6;
    if (cp >= 0xdc00 && cp <= 0xdfff) {
      error(at).append("lone low surrogate \\").append(text_ + at + 1, 5).append(" (it must follow a \\uD800-\\uDBFF)");
      return false;
    }
    if (cp >= 0xd800 && cp <= 0xdbff) {
      const long low = byte_at(pos_) == '\\' && byte_at(pos_ + 1) == 'u' ? hex4(pos_ + 2) : -1;
      if (low < 0xdc00 || low > 0xdfff) {
        error(at).append("lone high surrogate \\").append(text_ + at + 1, 5)
            .append(" (it must be followed by a \\uDC00-\\uDFFF)");
        return false;
      }
      pos_ += 6;
      cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
    }
    return put_utf8(static_cast<std::uint32_t>(cp));
  }

  bool put_utf8(std::uint32_t cp) noexcept {
    if (cp < 0x80) return put(static_cast<char>(cp));
    if (cp < 0x800) return put(static_cast<char>(0xc0 | (cp >> 6))) && put(static_cast<char>(0x80 | (cp & 0x3f)));
    if (cp < 0x10000)
      return put(static_cast<char>(0xe0 | (cp >> 12))) && put(static_cast<char>(0x80 | ((cp >> 6) & 0x3f))) &&
             put(static_cast<char>(0x80 | (cp & 0x3f)));
    return put(static_cast<char>(0xf0 | (cp >> 18))) && put(static_cast<char>(0x80 | ((cp >> 12) & 0x3f))) &&
           put(static_cast<char>(0x80 | ((cp >> 6) & 0x3f))) && put(static_cast<char>(0x80 | (cp & 0x3f)));
  }

  // --- numbers -------------------------------------------------------------
  bool number(JsonValue*& out) noexcept {
    const std::size_t at = pos_;
    const bool negative = peek() == '-';
    if (negative) ++pos_;
    if (!is_digit(peek())) return fail_found(pos_, "invalid number: expected a digit after '-'");
    if (peek() == '0' && is_digit(byte_at(pos_ + 1)))
      return fail(pos_, "invalid number: a leading zero must not be followed by digits");

    std::uint64_t integer = 0;  // the exact value while it fits
    bool overflow = false;
    std::uint64_t mantissa = 0;  // the first 19 significant digits
    int digits = 0;
    std::int64_t exponent = 0;  // value = mantissa * 10^exponent
    auto digit = [&](int d, bool fraction) {
      if (digits == 0 && d == 0) {  // a leading zero
        if (fraction) --exponent;
      } else if (digits < 19) {
        mantissa = mantissa * 10 + static_cast<std::uint64_t>(d);
        ++digits;
        if (fraction) --exponent;
      } else if (!fraction) {
        ++exponent;  // a dropped integer digit; dropped fraction digits change nothing
      }
    };
    for (int c = peek(); is_digit(c); c = peek()) {
      const auto d = static_cast<std::uint64_t>(c - '0');
      if (integer > (std::numeric_limits<std::uint64_t>::max() - d) / 10) overflow = true;
      if (!overflow) integer = integer * 10 + d;
      digit(c - '0', false);
      ++pos_;
    }
    bool is_integer = true;
    if (peek() == '.') {
      is_integer = false;
      ++pos_;
      if (!is_digit(peek())) return fail_found(pos_, "invalid number: expected a digit after '.'");
      for (int c = peek(); is_digit(c); ++pos_, c = peek()) digit(c - '0', true);
    }
    if (peek() == 'e' || peek() == 'E') {
      is_integer = false;
      ++pos_;
      bool minus = false;
      if (peek() == '+' || peek() == '-') minus = text_[pos_++] == '-';
      if (!is_digit(peek())) return fail_found(pos_, "invalid number: expected a digit in the exponent");
      std::int64_t e = 0;
      for (int c = peek(); is_digit(c); ++pos_, c = peek())
        if (e < 100000) e = e * 10 + (c - '0');  // beyond, the value is 0 or out of range anyway
      exponent += minus ? -e : e;
    }

    if ((out = node(JsonKind::kNumber, at)) == nullptr) return false;
    constexpr std::uint64_t kInt64Max = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    if (is_integer && !overflow && !negative) {
      out->u_.integer = integer;
      out->flags_ = integer <= kInt64Max ? JsonValue::kUint64 | JsonValue::kInt64 : JsonValue::kUint64;
      return true;
    }
    if (is_integer && !overflow && integer <= kInt64Max + 1) {
      out->u_.integer = 0 - integer;  // two's complement of the magnitude
      out->flags_ = integer == 0 ? JsonValue::kUint64 | JsonValue::kInt64 : JsonValue::kInt64;
      return true;
    }
    double real = 0;
    if (!decimal_to_double(mantissa, exponent, real))
      return fail(at, "number out of range (beyond +-1.8e308)");
    out->u_.real = negative ? -real : real;
    return true;
  }

  // mantissa * 10^exponent, with no locale. Exact (correctly rounded) when
  // the mantissa has at most 53 bits and |exponent| <= 22 (Clinger's fast
  // path: both factors are exact doubles). Otherwise scaled by binary powers
  // of ten in long double (x87: 64-bit mantissa, in registers) and rounded
  // once to double: within one unit in the last place.
  static bool decimal_to_double(std::uint64_t mantissa, std::int64_t exponent, double& out) noexcept {
    constexpr double kExact[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    constexpr long double kBinary[] = {1e1L, 1e2L, 1e4L, 1e8L, 1e16L, 1e32L, 1e64L, 1e128L, 1e256L};  // 10^(2^i)
    out = 0;
    if (mantissa == 0 || exponent < -400) return true;  // mantissa < 1e19: below the smallest subnormal
    if (exponent > 310) return false;
    if (mantissa <= (std::uint64_t{1} << 53) && exponent >= -22 && exponent <= 22) {
      const auto d = static_cast<double>(mantissa);
      out = exponent >= 0 ? d * kExact[exponent] : d / kExact[-exponent];
      return true;
    }
    auto d = static_cast<long double>(mantissa);
    const auto k = static_cast<std::uint64_t>(exponent < 0 ? -exponent : exponent);
    for (std::size_t i = 0; i < sizeof kBinary / sizeof kBinary[0]; ++i)
      if ((k >> i) & 1) d = exponent < 0 ? d / kBinary[i] : d * kBinary[i];
    out = static_cast<double>(d);
    return out <= std::numeric_limits<double>::max();
  }

  const char* text_;
  std::size_t len_;
  std::size_t pos_ = 0;
  JsonResult& out_;
  Text msg_;
  std::size_t bytes_;
  char* base_;
  char* lo_;   // next string byte
  char* top_;  // lowest node
};

}  // namespace json_detail

// Parses the JSON text text[0, length) into nodes taken from memory[0, bytes)
// (json_arena_bound(length) bytes always suffice). The result's root and
// everything under it live in `memory`, not in the text: the text may go
// once this returns.
inline JsonResult parse_json(const char* text, std::size_t length, void* memory, std::size_t bytes) noexcept {
  JsonResult result;
  json_detail::Parser(text, length, memory, bytes, result).run();
  return result;
}

}  // namespace tailor::dmm
