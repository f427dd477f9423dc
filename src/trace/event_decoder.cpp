// SPDX-License-Identifier: MIT
// Event decoding, the reader's half of the codec (layout in event_encoder.cpp
// and docs/trace-format.md). Checks every column against the event count.
// Runs on the reader's decoding threads, one chunk per call: it writes into
// the caller's buffer and allocates only to explain a failure.
//
// Two copies of the loop (event_decoder_loop.inc): a portable one, and on
// x86-64 CPUs whose PEXT is fast (BMI2, but not AMD's Zen 1 and 2, which
// microcode it at up to hundreds of cycles) one that gathers each varint's
// bits with it: about 10% less CPU for `tailor simulate` (docs/BENCHMARKS.md,
// "Traces at scale"). Chosen once, at the first chunk.
#include <cstring>

#include "trace/byte_io.h"
#include "trace/event_codec.h"
#include "trace/format.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define TAILOR_DECODE_DISPATCH 1
#endif

namespace tailor::trace::codec {

using format::kColumns;

namespace {

[[gnu::cold]] void bad_kind(std::size_t i, std::uint8_t kind, std::string& why) {
  why = "event " + std::to_string(i) + " has an unknown operation or kind bits (kind byte " + std::to_string(kind) + ")";
}

// Every column but the kinds ended exactly with the n-th event.
bool columns_consumed(const bool* ok, const std::size_t* left, std::size_t n, std::string& why) {
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

namespace portable {
#include "trace/event_decoder_loop.inc"
}  // namespace portable

#if defined(TAILOR_DECODE_DISPATCH)
#if defined(__clang__)  // the fuzzing build
#pragma clang attribute push(__attribute__((target("bmi2"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("bmi2")
#endif
#define TAILOR_DECODE_PEXT 1
namespace pext {
#include "trace/event_decoder_loop.inc"
}  // namespace pext
#undef TAILOR_DECODE_PEXT
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

bool fast_pext() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("bmi2") && !__builtin_cpu_is("znver1") && !__builtin_cpu_is("znver2");
}
#endif

}  // namespace

unsigned frames_needed(unsigned skip) noexcept {
  if ((skip & kSkipCallsite) == 0) return format::kFrames;
  return (skip & kSkipTime) ? 1 : 2;
}

bool decode(const std::uint8_t* data, std::size_t size, std::size_t n, std::uint32_t thread,
            std::uint64_t base_time_ns, Event* out, std::string& why, DecodePath path, unsigned skip, Layout layout) {
  io::Cursor header(data, data + size);
  std::uint32_t len[kColumns];
  for (unsigned c = 0; c < kColumns; ++c) len[c] = header.u32();
  // Where each column starts. In frame order the bytes may end after the
  // frames this reading needs: the first `needed` columns, the others skipped.
  const unsigned needed = layout == Layout::kFrameOrder ? format::kFrameStart[frames_needed(skip)] : kColumns;
  const std::uint8_t* at[kColumns] = {};
  std::size_t total = 4 * kColumns, total_needed = 0;
  for (unsigned k = 0; k < kColumns; ++k) {
    const unsigned c = layout == Layout::kFrameOrder ? format::kFrameOrder[k] : k;
    at[c] = data + total;
    total += len[c];
    if (k + 1 == needed) total_needed = total;
  }
  if (header.ok() && total != size && total_needed == size) {
    for (unsigned k = needed; k < kColumns; ++k) at[format::kFrameOrder[k]] = nullptr;  // not decompressed
  } else if (!header.ok() || total != size) {
    why = "column lengths do not add up to the payload size";
    return false;
  }
  if (len[format::kKinds] != 2 * n) {
    why = "kind column holds " + std::to_string(len[format::kKinds] / 2) + " events, header says " +
          std::to_string(n);
    return false;
  }
#if defined(TAILOR_DECODE_DISPATCH)
  static const bool use_pext = fast_pext();
  if (path == DecodePath::kBest && use_pext)
    return pext::decode_skipping(skip, at, len, n, thread, base_time_ns, out, why);
#endif
  (void)path;
  return portable::decode_skipping(skip, at, len, n, thread, base_time_ns, out, why);
}

}  // namespace tailor::trace::codec
