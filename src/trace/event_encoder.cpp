// SPDX-License-Identifier: MIT
// Event encoding, the half of the codec that runs inside traced programs: it
// never allocates and is built without exceptions.
//
// Column layout of an Events payload (see docs/trace-format.md):
//   u32 length of each of the six columns, then the columns in order:
//   kinds     2 bytes per event: op in bits 0-3 with presence bits for size,
//             aux and callsite (format.h), then flags
//   time      zigzag varint of the difference to the previous event's time
//   size      varint, only if not 0
//   address   zigzag varint of the difference to the previous event's address
//   aux       realloc: zigzag varint of (old address - new address); else
//             varint; only if not 0
//   callsite  zigzag varint of the difference to the previous call site, only
//             if not 0 (a loop calling from one site writes nothing here)
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

namespace {

struct Identity {
  std::uint64_t operator()(std::uint64_t t) const noexcept { return t; }
};

// The loop, for a time map known at compile time (Identity) or not
// (TimeMap). Also reports the smallest and largest mapped time.
template <class Map>
std::size_t encode_mapped(const Event* events, std::size_t n, const Map& map, std::uint64_t base_time_ns,
                          std::uint8_t* workspace, std::uint8_t* out, std::uint64_t& min_ns,
                          std::uint64_t& max_ns) noexcept {
  std::uint8_t* begin[kColumns];
  std::uint8_t* col[kColumns];
  for (unsigned c = 0; c < kColumns; ++c) begin[c] = col[c] = workspace + c * n * kColumnCapacityPerEvent;

  std::uint64_t prev_time = base_time_ns, prev_address = 0, prev_callsite = 0;
  std::uint64_t lo = UINT64_MAX, hi = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Event& e = events[i];
    const std::uint64_t time = map(e.time_ns);
    lo = time < lo ? time : lo;
    hi = time > hi ? time : hi;
    std::uint64_t aux = e.op == Op::Realloc ? io::zigzag(diff(e.aux, e.address)) : e.aux;
    std::uint64_t site = io::zigzag(diff(e.callsite, prev_callsite));
    std::uint8_t kind = static_cast<std::uint8_t>(static_cast<unsigned>(e.op) | (e.size ? format::kHasSize : 0u) |
                                                  (aux ? format::kHasAux : 0u) | (site ? format::kHasCallsite : 0u));
    col[format::kKinds] = io::put_u8(col[format::kKinds], kind);
    col[format::kKinds] = io::put_u8(col[format::kKinds], e.flags);
    col[format::kTime] = io::put_varint(col[format::kTime], io::zigzag(diff(time, prev_time)));
    if (e.size) col[format::kSize] = io::put_varint(col[format::kSize], e.size);
    col[format::kAddress] = io::put_varint(col[format::kAddress], io::zigzag(diff(e.address, prev_address)));
    if (aux) col[format::kAux] = io::put_varint(col[format::kAux], aux);
    if (site) col[format::kCallsite] = io::put_varint(col[format::kCallsite], site);
    prev_time = time;
    prev_address = e.address;
    prev_callsite = e.callsite;
  }
  min_ns = lo;
  max_ns = hi;

  std::uint8_t* p = out;
  for (unsigned c = 0; c < kColumns; ++c) p = io::put_u32(p, static_cast<std::uint32_t>(col[c] - begin[c]));
  for (unsigned c = 0; c < kColumns; ++c) {
    std::size_t len = static_cast<std::size_t>(col[c] - begin[c]);
    std::memcpy(p, begin[c], len);
    p += len;
  }
  return static_cast<std::size_t>(p - out);
}

}  // namespace

std::size_t encode(const Event* events, std::size_t n, std::uint64_t base_time_ns, std::uint8_t* workspace,
                   std::uint8_t* out) noexcept {
  std::uint64_t lo, hi;
  return encode_mapped(events, n, Identity{}, base_time_ns, workspace, out, lo, hi);
}

std::size_t encode(const Event* events, std::size_t n, const TimeMap& time, std::uint8_t* workspace,
                   std::uint8_t* out, std::uint64_t& first_ns, std::uint64_t& last_ns) noexcept {
  if (n == 0) {
    first_ns = last_ns = 0;
    return encode_mapped(events, n, Identity{}, 0, workspace, out, first_ns, last_ns);
  }
  // Times are measured from the smallest; guess the first event's, which it
  // is unless some time decreases, and encode again from the true smallest.
  const std::uint64_t guess = time(events[0].time_ns);
  std::size_t size = time.identity ? encode_mapped(events, n, Identity{}, guess, workspace, out, first_ns, last_ns)
                                   : encode_mapped(events, n, time, guess, workspace, out, first_ns, last_ns);
  if (first_ns == guess) return size;
  const std::uint64_t base = first_ns;
  return time.identity ? encode_mapped(events, n, Identity{}, base, workspace, out, first_ns, last_ns)
                       : encode_mapped(events, n, time, base, workspace, out, first_ns, last_ns);
}

}  // namespace tailor::trace::codec
