// SPDX-License-Identifier: MIT
// Event decoding, the reader's half of the codec (layout in event_encoder.cpp
// and docs/trace-format.md). Checks every column against the event count.
// Runs on the reader's decoding threads, one chunk per call: it writes into
// the caller's buffer and allocates only to explain a failure.
#include "event_codec.h"

#include "byte_io.h"
#include "format.h"

namespace tailor::trace::codec {

using format::kColumns;

bool decode(const std::uint8_t* data, std::size_t size, std::size_t n, std::uint32_t thread,
            std::uint64_t base_time_ns, Event* out, std::string& why) {
  io::Cursor header(data, data + size);
  std::uint32_t len[kColumns];
  std::size_t total = 4 * kColumns;
  for (unsigned c = 0; c < kColumns; ++c) {
    len[c] = header.u32();
    total += len[c];
  }
  if (!header.ok() || total != size) {
    why = "column lengths do not add up to the payload size";
    return false;
  }
  if (len[format::kKinds] != 2 * n) {
    why = "kind column holds " + std::to_string(len[format::kKinds] / 2) + " events, header says " +
          std::to_string(n);
    return false;
  }
  const std::uint8_t* p = data + 4 * kColumns;
  const std::uint8_t* kinds = p;  // exactly 2n bytes, checked above
  p += len[format::kKinds];
  io::Cursor time(p, p + len[format::kTime]);
  p += len[format::kTime];
  io::Cursor sizes(p, p + len[format::kSize]);
  p += len[format::kSize];
  io::Cursor address(p, p + len[format::kAddress]);
  p += len[format::kAddress];
  io::Cursor auxes(p, p + len[format::kAux]);
  p += len[format::kAux];
  io::Cursor sites(p, p + len[format::kCallsite]);

  std::uint64_t prev_time = base_time_ns, prev_address = 0, prev_callsite = 0;
  for (std::size_t i = 0; i < n; ++i) {
    Event& e = out[i];
    const std::uint8_t kind = kinds[2 * i];
    const unsigned op = kind & format::kOpMask;
    if (op == 0 || op > kMaxOp || (kind & format::kReservedKindBits)) {
      why = "event " + std::to_string(i) + " has an unknown operation or kind bits (kind byte " +
            std::to_string(kind) + ")";
      return false;
    }
    e.op = static_cast<Op>(op);
    e.flags = kinds[2 * i + 1];
    e.thread = thread;
    e.time_ns = prev_time + static_cast<std::uint64_t>(io::unzigzag(time.varint()));
    e.size = (kind & format::kHasSize) ? sizes.varint() : 0;
    e.address = prev_address + static_cast<std::uint64_t>(io::unzigzag(address.varint()));
    const std::uint64_t aux = (kind & format::kHasAux) ? auxes.varint() : 0;
    e.aux = e.op == Op::Realloc ? e.address + static_cast<std::uint64_t>(io::unzigzag(aux)) : aux;
    const std::uint64_t site = (kind & format::kHasCallsite) ? sites.varint() : 0;
    e.callsite = prev_callsite + static_cast<std::uint64_t>(io::unzigzag(site));
    prev_time = e.time_ns;
    prev_address = e.address;
    prev_callsite = e.callsite;
  }
  // Checked by value: cursors whose address is taken would live in memory through the loop.
  const bool ok[kColumns] = {true, time.ok(), sizes.ok(), address.ok(), auxes.ok(), sites.ok()};
  const std::size_t left[kColumns] = {0, time.remaining(), sizes.remaining(), address.remaining(), auxes.remaining(),
                                      sites.remaining()};
  for (unsigned c = 1; c < kColumns; ++c) {
    if (!ok[c] || left[c] != 0) {
      static const char* const names[kColumns] = {"kind", "time", "size", "address", "aux", "callsite"};
      why = std::string(names[c]) + " column is " + (ok[c] ? "longer" : "shorter") + " than " + std::to_string(n) +
            " events";
      return false;
    }
  }
  return true;
}

}  // namespace tailor::trace::codec
