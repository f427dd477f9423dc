// SPDX-License-Identifier: MIT
// Event encoding, the half of the codec that runs inside traced programs: it
// never allocates and is built without exceptions.
//
// Column layout of an Events payload (see docs/trace-format.md):
//   u32 length of each of the six columns in the order below, then the
//   columns in format::kFrameOrder (kinds, size, address, aux, time,
//   callsite: what a replay reads first, so that the writer can compress it
//   as a frame of its own):
//   kinds     2 bytes per event: op in bits 0-3 with presence bits for size,
//             aux and callsite (format.h), then flags
//   time      zigzag varint of the difference to the previous event's time
//   size      varint, only if not 0
//   address   zigzag varint of the difference to the previous event's address
//   aux       realloc: zigzag varint of (old address - new address); else
//             varint; only if not 0
//   callsite  zigzag varint of the difference to the previous call site, only
//             if not 0 (a loop calling from one site writes nothing here)
#include "trace/event_codec.h"

#include <cstring>

#include "trace/byte_io.h"
#include "trace/format.h"

namespace tailor::trace::codec {


using format::kColumns;

namespace {
constexpr std::size_t kColumnCapacityPerEvent = io::kMaxVarint;

std::int64_t diff(std::uint64_t a, std::uint64_t b) noexcept {
  return static_cast<std::int64_t>(a - b);
}
}  // namespace

void frame_bytes(const std::uint8_t* encoded, std::size_t bytes[]) noexcept {
  for (unsigned f = 0; f < format::kFrames; ++f) {
    bytes[f] = f == 0 ? 4 * kColumns : 0;
    for (unsigned k = format::kFrameStart[f]; k < format::kFrameStart[f + 1]; ++k)
      bytes[f] += io::Cursor(encoded + 4 * format::kFrameOrder[k], encoded + 4 * kColumns).u32();
  }
}

std::size_t workspace_size(std::size_t n) noexcept { return kColumns * n * kColumnCapacityPerEvent; }

std::size_t max_encoded_size(std::size_t n) noexcept { return 4 * kColumns + n * format::kMaxEncodedEvent; }

namespace {

struct Identity {
  std::uint64_t operator()(std::uint64_t t) const noexcept { return t; }
};

// TimeMap without its identity case, taken by value so that its fields stay
// in registers (the loop's byte stores could alias a referenced map).
struct Linear {
  TimeMap map;
  std::uint64_t operator()(std::uint64_t t) const noexcept { return map.linear(t); }
};

// One event's fields, as a source hands them to the loop.
struct Fields {
  std::uint64_t time, size, address, aux, callsite;
  Op op;
  std::uint8_t flags;
};

// Sources are copied into the loop's frame for the same reason as Linear.

// Event arrays: one event per element.
struct EventSource {
  const Event* events;
  std::size_t n;
  template <class Visit>
  [[gnu::always_inline]] bool each(Visit&& visit) const noexcept {
    const Event* const e = events;
    const std::size_t count = n;
    for (std::size_t i = 0; i < count; ++i)
      visit(Fields{e[i].time_ns, e[i].size, e[i].address, e[i].aux, e[i].callsite, e[i].op, e[i].flags});
    return true;
  }
  std::uint64_t first_time() const noexcept { return events[0].time_ns; }
};

// Packed slots (writer.h): one or two per event. False if the last event's
// second slot is missing.
struct PackedSource {
  const PackedEvent* slots;
  std::size_t n;
  template <class Visit>
  [[gnu::always_inline]] bool each(Visit&& visit) const noexcept {
    const PackedEvent* const p = slots;
    const std::size_t count = n;
    for (std::size_t i = 0; i < count; ++i) {
      const PackedEvent s = p[i];
      const auto op = static_cast<Op>((s.word >> 56) & 0xf);
      const auto flags = static_cast<std::uint8_t>(s.word >> 60);
      if (__builtin_expect(s.word & PackedEvent::kExtended, 0)) {
        if (++i == count) return false;
        visit(Fields{s.time, s.size, s.address, p[i].time, p[i].size, op, flags});
      } else {
        visit(Fields{s.time, s.size, s.address, 0, s.word & PackedEvent::kSiteMask, op, flags});
      }
    }
    return true;
  }
  std::uint64_t first_time() const noexcept { return slots[0].time; }
};

// The loop, for a time map known at compile time (Identity) or not
// (Linear). Reports the number of events and the smallest and largest
// mapped time; 0 if the source is cut. Times that never decrease (the
// common case) give their first and last as smallest and largest without a
// comparison per event; otherwise a second pass finds them.
template <class Source, class Map>
std::size_t encode_mapped(const Source source, const Map map, std::uint64_t base_time_ns, std::size_t capacity,
                          std::uint8_t* workspace, std::uint8_t* out, std::size_t& events, std::uint64_t& min_ns,
                          std::uint64_t& max_ns) noexcept {
  std::uint8_t* begin[kColumns];
  std::uint8_t* col[kColumns];
  for (unsigned c = 0; c < kColumns; ++c) begin[c] = col[c] = workspace + c * capacity * kColumnCapacityPerEvent;

  std::uint64_t prev_time = base_time_ns, prev_address = 0, prev_callsite = 0;
  std::uint64_t falls = 0;  // the OR of every time step: its top bit is set if a time decreased
  const bool whole = source.each([&](const Fields e) __attribute__((always_inline)) {
    const std::uint64_t time = map(e.time);
    falls |= time - prev_time;
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
  });
  events = static_cast<std::size_t>(col[format::kKinds] - begin[format::kKinds]) / 2;
  if (!whole) return 0;
  if (events == 0) {
    min_ns = max_ns = 0;
  } else if (!(falls >> 63)) {  // no step fell, the first from base_time_ns included
    min_ns = map(source.first_time());
    max_ns = prev_time;
  } else {
    std::uint64_t lo = UINT64_MAX, hi = 0;
    source.each([&](const Fields e) {
      const std::uint64_t time = map(e.time);
      lo = time < lo ? time : lo;
      hi = time > hi ? time : hi;
    });
    min_ns = lo;
    max_ns = hi;
  }

  std::uint8_t* p = out;
  for (unsigned c = 0; c < kColumns; ++c) p = io::put_u32(p, static_cast<std::uint32_t>(col[c] - begin[c]));
  for (const unsigned c : format::kFrameOrder) {
    std::size_t len = static_cast<std::size_t>(col[c] - begin[c]);
    std::memcpy(p, begin[c], len);
    p += len;
  }
  return static_cast<std::size_t>(p - out);
}

// Times are measured from the smallest: guess the first event's, which it
// is unless some time decreases, and encode again from the true smallest.
template <class Source>
std::size_t encode_from_smallest(const Source& source, std::size_t capacity, const TimeMap& time,
                                 std::uint8_t* workspace, std::uint8_t* out, std::size_t& events,
                                 std::uint64_t& first_ns, std::uint64_t& last_ns) noexcept {
  const Linear linear{time};
  auto run = [&](std::uint64_t base) {
    return time.identity ? encode_mapped(source, Identity{}, base, capacity, workspace, out, events, first_ns, last_ns)
                         : encode_mapped(source, linear, base, capacity, workspace, out, events, first_ns, last_ns);
  };
  const std::uint64_t guess = time(source.first_time());
  std::size_t size = run(guess);
  if (size == 0 || first_ns == guess) return size;
  return run(first_ns);
}

}  // namespace

std::size_t max_stacks_size(std::size_t n) noexcept { return n * io::kMaxVarint; }
std::size_t max_stack_nodes_size(std::size_t n) noexcept { return n * 3 * io::kMaxVarint; }

std::size_t encode_stacks(const Event* events, std::size_t n, std::uint8_t* out) noexcept {
  std::uint8_t* p = out;
  std::uint64_t prev = 0, any = 0;
  for (std::size_t i = 0; i < n; ++i) {
    any |= events[i].stack;
    p = io::put_varint(p, io::zigzag(diff(events[i].stack, prev)));
    prev = events[i].stack;
  }
  return any ? static_cast<std::size_t>(p - out) : 0;
}

std::size_t encode_stacks(const PackedEvent* slots, std::size_t n, std::uint8_t* out) noexcept {
  std::uint8_t* p = out;
  std::uint64_t prev = 0, any = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t stack = 0;
    if (slots[i].word & PackedEvent::kExtended) {
      if (++i == n) return 0;  // cut: encode() refuses it too
      stack = slots[i].address;
    }
    any |= stack;
    p = io::put_varint(p, io::zigzag(diff(stack, prev)));
    prev = stack;
  }
  return any ? static_cast<std::size_t>(p - out) : 0;
}

std::size_t encode_stack_nodes(const StackNode* nodes, std::size_t n, std::uint8_t* out) noexcept {
  std::uint8_t* p = out;
  std::uint64_t prev_id = 0, prev_address = 0;
  for (std::size_t i = 0; i < n; ++i) {
    p = io::put_varint(p, nodes[i].id - prev_id);
    p = io::put_varint(p, nodes[i].parent);
    p = io::put_varint(p, io::zigzag(diff(nodes[i].address, prev_address)));
    prev_id = nodes[i].id;
    prev_address = nodes[i].address;
  }
  return static_cast<std::size_t>(p - out);
}

std::size_t encode(const Event* events, std::size_t n, std::uint64_t base_time_ns, std::uint8_t* workspace,
                   std::uint8_t* out) noexcept {
  std::size_t count;
  std::uint64_t lo, hi;
  return encode_mapped(EventSource{events, n}, Identity{}, base_time_ns, n, workspace, out, count, lo, hi);
}

std::size_t encode(const Event* events, std::size_t n, const TimeMap& time, std::uint8_t* workspace,
                   std::uint8_t* out, std::uint64_t& first_ns, std::uint64_t& last_ns) noexcept {
  std::size_t count;
  if (n == 0) {
    first_ns = last_ns = 0;
    return encode_mapped(EventSource{events, 0}, Identity{}, 0, 0, workspace, out, count, first_ns, last_ns);
  }
  return encode_from_smallest(EventSource{events, n}, n, time, workspace, out, count, first_ns, last_ns);
}

std::size_t encode(const PackedEvent* slots, std::size_t n, const TimeMap& time, std::uint8_t* workspace,
                   std::uint8_t* out, std::size_t& events, std::uint64_t& first_ns, std::uint64_t& last_ns) noexcept {
  events = 0;
  first_ns = last_ns = 0;
  if (n == 0) return 0;
  return encode_from_smallest(PackedSource{slots, n}, n, time, workspace, out, events, first_ns, last_ns);
}

}  // namespace tailor::trace::codec
