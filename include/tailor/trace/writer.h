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

  std::uint64_t operator()(std::uint64_t t) const noexcept {
    if (identity) return t;
    auto delta = static_cast<double>(static_cast<std::int64_t>(t - base_ticks));
    return base_ns + static_cast<std::uint64_t>(static_cast<std::int64_t>(delta * ns_per_tick));
  }
};

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
  /// `hurry`: compress at zstd's fastest level instead of the configured
  /// one (for a writer that is falling behind its producer).
  bool write_events(std::uint32_t thread, const Event* events, std::size_t n, bool hurry = false) noexcept;
  /// The same for events whose times are on another clock: each time is
  /// mapped as it is encoded, and the events are left as they are.
  bool write_events(std::uint32_t thread, const Event* events, std::size_t n, bool hurry, const TimeMap& time) noexcept;
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
