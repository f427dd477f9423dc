// SPDX-License-Identifier: MIT
// Text: composing error messages without allocation. The DMM spec reader runs
// inside libtailor's malloc initialisation, where std::string and snprintf's
// heap use are out of bounds, yet its messages must still say things like
// "allocators[2].fit: unknown fit 'worst' (known: first, best, exact,
// farthest)". Text appends C strings, bytes and integers into a fixed buffer
// the caller owns; it always stays NUL-terminated, and what does not fit is
// cut at a UTF-8 character boundary and marked with "...".
// Header-only and freestanding (libc only): every function is inline.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tailor::dmm {

class Text {
 public:
  // `buffer` holds `capacity` bytes including the terminating NUL; with a
  // capacity of 0 nothing is ever written.
  Text(char* buffer, std::size_t capacity) noexcept : buf_(buffer), cap_(capacity) {
    if (cap_ > 0) buf_[0] = '\0';
  }
  Text(const Text&) = delete;  // two writers on one buffer would be a surprise
  Text& operator=(const Text&) = delete;

  Text& append(const char* s) noexcept { return append(s, s == nullptr ? 0 : std::strlen(s)); }

  Text& append(const char* s, std::size_t n) noexcept {
    if (truncated_ || cap_ == 0) return *this;
    const std::size_t room = cap_ - 1 - len_;
    if (n > room) {
      put(s, room);
      cut();
    } else {
      put(s, n);
    }
    return *this;
  }

  Text& append(char c) noexcept { return append(&c, 1); }

  Text& append_uint(std::uint64_t v) noexcept {
    char digits[20];
    std::size_t n = 0;
    do {
      digits[sizeof digits - 1 - n++] = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0);
    // Character by character: gcc 12's -Warray-bounds misreads a memcpy of
    // the n digits once this is inlined under ThreadSanitizer.
    for (std::size_t i = sizeof digits - n; i < sizeof digits; ++i) append(digits[i]);
    return *this;
  }

  // The same right-aligned in `width` columns (printf's "%*u").
  Text& append_uint(std::uint64_t v, std::size_t width) noexcept {
    std::size_t digits = 1;
    for (std::uint64_t t = v; t >= 10; t /= 10) ++digits;
    for (; width > digits; --width) append(' ');
    return append_uint(v);
  }

  // "0x" and the lowercase hex digits of v (printf's "%#lx", but 0x0 for 0).
  Text& append_hex(std::uint64_t v) noexcept {
    append("0x");
    int shift = 60;
    while (shift > 0 && (v >> shift) == 0) shift -= 4;
    for (; shift >= 0; shift -= 4) append("0123456789abcdef"[(v >> shift) & 15]);
    return *this;
  }

  Text& append_int(std::int64_t v) noexcept {
    if (v >= 0) return append_uint(static_cast<std::uint64_t>(v));
    append('-');
    return append_uint(~static_cast<std::uint64_t>(v) + 1);  // |INT64_MIN| without overflow
  }

  // Appends text taken from input (a key, a word) for display: control bytes
  // become '?', and more than `max_bytes` bytes are cut with "...".
  Text& append_visible(const char* s, std::size_t n, std::size_t max_bytes) noexcept {
    const bool cut_here = n > max_bytes;
    if (cut_here) n = boundary(s, max_bytes);
    for (std::size_t i = 0; i < n; ++i) {
      const auto b = static_cast<unsigned char>(s[i]);
      append(b < 0x20 || b == 0x7f ? '?' : s[i]);
    }
    if (cut_here) append("...");
    return *this;
  }

  const char* c_str() const noexcept { return cap_ == 0 ? "" : buf_; }
  std::size_t size() const noexcept { return len_; }
  bool truncated() const noexcept { return truncated_; }
  void clear() noexcept {
    len_ = 0;
    truncated_ = false;
    if (cap_ > 0) buf_[0] = '\0';
  }

 private:
  void put(const char* s, std::size_t n) noexcept {
    if (n > 0) std::memcpy(buf_ + len_, s, n);
    len_ += n;
    buf_[len_] = '\0';
  }

  // The buffer is full: end it with "..." (when there is room for it) on a
  // character boundary, and take nothing more.
  void cut() noexcept {
    truncated_ = true;
    if (cap_ < 4) return;
    len_ = boundary(buf_, len_ < cap_ - 4 ? len_ : cap_ - 4);
    std::memcpy(buf_ + len_, "...", 4);
    len_ += 3;
  }

  // The largest n' <= n that does not split a UTF-8 sequence of s.
  static std::size_t boundary(const char* s, std::size_t n) noexcept {
    std::size_t k = n;
    while (k > 0 && (static_cast<unsigned char>(s[k]) & 0xc0) == 0x80) --k;
    return k;
  }

  char* buf_;
  std::size_t cap_;
  std::size_t len_ = 0;
  bool truncated_ = false;
};

// A Text with its own buffer of N bytes (N - 1 characters).
template <std::size_t N>
class TextBuffer : public Text {
  static_assert(N > 0);

 public:
  TextBuffer() noexcept : Text(storage_, N) {}

 private:
  char storage_[N];
};

}  // namespace tailor::dmm
