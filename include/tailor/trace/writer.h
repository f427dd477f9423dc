// SPDX-License-Identifier: MIT
// Writes a trace file chunk by chunk. Built for the recorder, which runs inside
// the traced program: the writer never calls malloc (its workspace and the
// zstd context live in memory from mmap), issues one write(2) per chunk so a
// killed process leaves whole chunks behind, and is not thread-safe (the
// recorder serializes flushes; the hot path never reaches here).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tailor/trace/event.h"
#include "tailor/trace/metadata.h"
#include "tailor/trace/stacks.h"

namespace tailor::trace {

/// Header fields without owning strings, so that the recorder can fill them
/// without allocating. command_line holds the arguments separated by NULs.
struct HeaderFields {
  std::uint32_t page_size = 0;
  std::uint32_t pid = 0;
  std::uint32_t ppid = 0;
  std::uint64_t start_realtime_ns = 0;
  std::uint64_t start_monotonic_ns = 0;
  std::string_view executable;
  std::string_view command_line;
  std::uint64_t sample_interval = 0;  ///< Header::sample_interval
};

struct ModuleFields {
  std::uint64_t load_address = 0;
  std::uint64_t start = 0;
  std::uint64_t end = 0;
  std::uint64_t time_ns = 0;
  std::string_view path;
  std::string_view build_id;
};

/// A producer's clock (for the recorder, TSC ticks) to CLOCK_MONOTONIC ns:
/// ns = base_ns + (t - base_ticks) * ns_per_tick, or t itself when identity.
/// Non-decreasing in t, so the order of times survives the mapping.
struct TimeMap {
  bool identity = true;
  std::uint64_t base_ticks = 0;
  std::uint64_t base_ns = 0;
  double ns_per_tick = 1.0;

  std::uint64_t operator()(std::uint64_t t) const noexcept { return identity ? t : linear(t); }
  /// The mapping itself, whatever `identity` says.
  std::uint64_t linear(std::uint64_t t) const noexcept {
    auto delta = static_cast<double>(static_cast<std::int64_t>(t - base_ticks));
    return base_ns + static_cast<std::uint64_t>(static_cast<std::int64_t>(delta * ns_per_tick));
  }
};

/// An event in 32 bytes, for a producer that keeps many in memory (the
/// recorder's per-thread ring): two to a cache line instead of 48-byte
/// Events' four to three. `word` holds the call site in bits 0-54, a flag in
/// bit 55, the op in bits 56-59 and the flags in bits 60-63. An event whose
/// aux is not 0 or whose call site needs more than 55 bits takes two slots:
/// the first with bit 55 set and no call site, the second holding aux and
/// the call site in its first two words.
struct PackedEvent {
  std::uint64_t time;
  std::uint64_t size;
  std::uint64_t address;
  std::uint64_t word;

  static constexpr unsigned kSiteBits = 55;
  static constexpr std::uint64_t kSiteMask = (std::uint64_t{1} << kSiteBits) - 1;
  static constexpr std::uint64_t kExtended = std::uint64_t{1} << kSiteBits;

  /// The slots an event takes: 1, or 2 with its aux and full call site.
  static bool fits_one(std::uint64_t aux, std::uint64_t callsite) noexcept {
    return aux == 0 && callsite <= kSiteMask;
  }
  static std::uint64_t tag(Op op, std::uint8_t flags) noexcept {
    return static_cast<std::uint64_t>(static_cast<unsigned>(op) | static_cast<unsigned>(flags) << 4) << 56;
  }
};
static_assert(sizeof(PackedEvent) == 32);

class Writer {
 public:
  /// Largest number of events one write_events() call may pass.
  static constexpr std::size_t kDefaultChunkEvents = 1u << 16;

  Writer() = default;
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;
  ~Writer() { release(); }

  /// Maps the workspace for chunks of up to max_events events. zstd_level is
  /// zstd's (1 = fastest). Returns false (errno set) if memory is short.
  bool init(std::size_t max_events = kDefaultChunkEvents, int zstd_level = 1) noexcept;
  void release() noexcept;

  /// Subsequent chunks go to fd (not owned, never closed here).
  void attach(int fd) noexcept { fd_ = fd; bytes_ = 0; }
  int fd() const noexcept { return fd_; }

  bool write_header(const HeaderFields& header) noexcept;
  /// `pace` 0 compresses at the configured level; each step up to kMaxPace
  /// at a faster one (zstd 1, -1, -5, -10; never slower than the
  /// configured level), for a writer falling behind its producer.
  static constexpr unsigned kMaxPace = 4;
  /// An events chunk; if any event has a stack (Event::stack), an
  /// EventStacks chunk after it. The stacks' nodes must have been written.
  bool write_events(std::uint32_t thread, const Event* events, std::size_t n, unsigned pace = 0) noexcept;
  /// The same for events whose times are on another clock: each time is
  /// mapped as it is encoded, and the events are left as they are.
  bool write_events(std::uint32_t thread, const Event* events, std::size_t n, unsigned pace, const TimeMap& time) noexcept;
  /// Packed events, `slots` slots of them (at most max_events()), times
  /// mapped by `time`; `events` receives how many events they held. An
  /// event cut by the end of the slots is an error (EINVAL). A two-slot
  /// event's stack is its second slot's `address`.
  bool write_packed(std::uint32_t thread, const PackedEvent* slots, std::size_t n, unsigned pace, const TimeMap& time,
                    std::size_t& events) noexcept;
  /// Stack nodes of `thread` (stacks.h), at most max_events() of them, ids
  /// ascending; each before the first events chunk that names it.
  bool write_stacks(std::uint32_t thread, const StackNode* nodes, std::size_t n) noexcept;
  bool write_modules(const ModuleFields* modules, std::size_t n) noexcept;
  bool write_end(const EndRecord& end) noexcept;

  /// errno of the last failed write, 0 if none.
  int last_error() const noexcept { return error_; }
  std::uint64_t bytes_written() const noexcept { return bytes_; }
  std::size_t max_events() const noexcept { return max_events_; }

 private:
  bool emit_chunk(std::uint8_t type, std::uint8_t codec, std::uint32_t thread, std::uint32_t count,
                  std::uint32_t raw_size, std::uint32_t stored_size, std::uint64_t first_ns,
                  std::uint64_t last_ns) noexcept;
  bool write_all(const std::uint8_t* data, std::size_t size) noexcept;
  bool compress_and_emit(std::uint32_t thread, std::size_t n, std::size_t raw, unsigned pace, std::uint64_t first,
                         std::uint64_t last) noexcept;
  // encoded_[0..raw) as one zstd frame in a chunk of `type`.
  bool emit_compressed(std::uint8_t type, std::uint32_t thread, std::size_t count, std::size_t raw,
                       std::uint64_t first, std::uint64_t last) noexcept;

  int fd_ = -1;
  int error_ = 0;
  int level_ = 1;
  int current_level_ = 1;
  std::uint64_t bytes_ = 0;
  std::size_t max_events_ = 0;
  void* cctx_ = nullptr;
  std::uint8_t* memory_ = nullptr;  // one mapping: codec workspace | encoded | chunk (header + payload) | cctx
  std::size_t memory_size_ = 0;
  std::uint8_t* workspace_ = nullptr;
  std::uint8_t* encoded_ = nullptr;
  std::uint8_t* chunk_ = nullptr;
  std::size_t chunk_capacity_ = 0;
};

}  // namespace tailor::trace
