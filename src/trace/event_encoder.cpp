// SPDX-License-Identifier: MIT
// Event encoding, the half of the codec that runs inside traced programs: it
// never allocates and is built without exceptions.
//
// Column layout of an Events payload (see docs/trace-format.md):
//   u32 length of each of the six columns, then the columns in order:
//   kinds     2 bytes per event: op, flags
//   time      zigzag varint of the difference to the previous event's time
//   size      varint
//   address   zigzag varint of the difference to the previous event's address
//   aux       realloc: zigzag varint of (old address - new address); else varint
//   callsite  zigzag varint of the difference to the previous call site
#include "event_codec.h"

#include <cstring>

#include "byte_io.h"
#include "format.h"

namespace tailor::trace::codec {


using format::kColumns;

namespace {
constexpr std::size_t kColumnCapacityPerEvent = io::kMaxVarint;

std::int64_t diff(std::uint64_t a, std::uint64_t b) noexcept {
  return static_cast<std::int64_t>(a - b);
}
}  // namespace

std::size_t workspace_size(std::size_t n) noexcept { return kColumns * n * kColumnCapacityPerEvent; }

std::size_t max_encoded_size(std::size_t n) noexcept { return 4 * kColumns + n * format::kMaxEncodedEvent; }

std::size_t encode(const Event* events, std::size_t n, std::uint64_t base_time_ns, std::uint8_t* workspace,
                   std::uint8_t* out) noexcept {
  std::uint8_t* begin[kColumns];
  std::uint8_t* col[kColumns];
  for (unsigned c = 0; c < kColumns; ++c) begin[c] = col[c] = workspace + c * n * kColumnCapacityPerEvent;

  std::uint64_t prev_time = base_time_ns, prev_address = 0, prev_callsite = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Event& e = events[i];
    col[format::kKinds] = io::put_u8(col[format::kKinds], static_cast<std::uint8_t>(e.op));
    col[format::kKinds] = io::put_u8(col[format::kKinds], e.flags);
    col[format::kTime] = io::put_varint(col[format::kTime], io::zigzag(diff(e.time_ns, prev_time)));
    col[format::kSize] = io::put_varint(col[format::kSize], e.size);
    col[format::kAddress] = io::put_varint(col[format::kAddress], io::zigzag(diff(e.address, prev_address)));
    std::uint64_t aux = e.op == Op::Realloc ? io::zigzag(diff(e.aux, e.address)) : e.aux;
    col[format::kAux] = io::put_varint(col[format::kAux], aux);
    col[format::kCallsite] = io::put_varint(col[format::kCallsite], io::zigzag(diff(e.callsite, prev_callsite)));
    prev_time = e.time_ns;
    prev_address = e.address;
    prev_callsite = e.callsite;
  }

  std::uint8_t* p = out;
  for (unsigned c = 0; c < kColumns; ++c) p = io::put_u32(p, static_cast<std::uint32_t>(col[c] - begin[c]));
  for (unsigned c = 0; c < kColumns; ++c) {
    std::size_t len = static_cast<std::size_t>(col[c] - begin[c]);
    std::memcpy(p, begin[c], len);
    p += len;
  }
  return static_cast<std::size_t>(p - out);
}

}  // namespace tailor::trace::codec
