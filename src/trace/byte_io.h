// SPDX-License-Identifier: MIT
// Little-endian fixed-width and LEB128 variable-width integers, the only two
// ways the trace format stores numbers. Writers never allocate (the recorder
// calls them inside the traced process); readers check every bound so that a
// damaged file yields an error, never an out-of-bounds read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace tailor::trace::io {

inline std::uint8_t* put_u8(std::uint8_t* p, std::uint8_t v) noexcept { *p = v; return p + 1; }
inline std::uint8_t* put_u16(std::uint8_t* p, std::uint16_t v) noexcept { std::memcpy(p, &v, 2); return p + 2; }
inline std::uint8_t* put_u32(std::uint8_t* p, std::uint32_t v) noexcept { std::memcpy(p, &v, 4); return p + 4; }
inline std::uint8_t* put_u64(std::uint8_t* p, std::uint64_t v) noexcept { std::memcpy(p, &v, 8); return p + 8; }

inline std::uint8_t* put_varint(std::uint8_t* p, std::uint64_t v) noexcept {
  while (v >= 0x80) {
    *p++ = static_cast<std::uint8_t>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<std::uint8_t>(v);
  return p;
}

constexpr std::uint64_t zigzag(std::int64_t v) noexcept {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}
constexpr std::int64_t unzigzag(std::uint64_t v) noexcept {
  return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1);
}

inline constexpr std::size_t kMaxVarint = 10;

/// A bounds-checked cursor over a byte range. After any read past the end,
/// `ok()` is false and every further read returns 0: callers check once.
class Cursor {
 public:
  Cursor(const std::uint8_t* begin, const std::uint8_t* end) noexcept : p_(begin), end_(end) {}

  bool ok() const noexcept { return ok_; }
  std::size_t remaining() const noexcept { return static_cast<std::size_t>(end_ - p_); }
  const std::uint8_t* position() const noexcept { return p_; }

  std::uint8_t u8() noexcept { return fixed<std::uint8_t>(); }
  std::uint16_t u16() noexcept { return fixed<std::uint16_t>(); }
  std::uint32_t u32() noexcept { return fixed<std::uint32_t>(); }
  std::uint64_t u64() noexcept { return fixed<std::uint64_t>(); }

  std::uint64_t varint() noexcept {
    if (remaining() >= kMaxVarint) {  // the common case: no bound to check per byte
      std::uint64_t v = 0;
      for (unsigned shift = 0; shift < 64; shift += 7) {
        std::uint8_t b = *p_++;
        v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
        if (!(b & 0x80)) return v;
      }
      return fail();  // more than ten bytes: not a varint we wrote
    }
    std::uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
      if (p_ == end_) return fail();
      std::uint8_t b = *p_++;
      v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    return fail();  // more than ten bytes: not a varint we wrote
  }

  /// A string stored as its u32 length then its bytes; empty (and fails) if they overrun.
  std::string_view sized_string() noexcept {
    const std::uint32_t n = u32();
    const std::uint8_t* s = bytes(n);
    return s ? std::string_view(reinterpret_cast<const char*>(s), n) : std::string_view();
  }

  /// Takes n bytes; returns nullptr (and fails) if fewer remain.
  const std::uint8_t* bytes(std::size_t n) noexcept {
    if (remaining() < n) { fail(); return nullptr; }
    const std::uint8_t* at = p_;
    p_ += n;
    return at;
  }

 private:
  template <class T>
  T fixed() noexcept {
    if (remaining() < sizeof(T)) return static_cast<T>(fail());
    T v;
    std::memcpy(&v, p_, sizeof(T));
    p_ += sizeof(T);
    return v;
  }
  std::uint64_t fail() noexcept {
    ok_ = false;
    p_ = end_;
    return 0;
  }

  const std::uint8_t* p_;
  const std::uint8_t* end_;
  bool ok_ = true;
};

}  // namespace tailor::trace::io
