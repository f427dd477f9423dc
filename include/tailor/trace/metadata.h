// SPDX-License-Identifier: MIT
// Everything a trace says about the process besides its events: who it was
// (header), what code it had mapped (modules, for symbolizing call sites later)
// and how it ended (end record). Kept apart from event.h because analyzers that
// only count events never need it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tailor::trace {

/// The version this library writes; it reads every version up to it. 4: the
/// header says whether the trace is sampled; 3: whole call stacks; 2: the
/// events of a chunk in three zstd frames (docs/trace-format.md); 1: in one.
inline constexpr std::uint16_t kFormatVersion = 4;

/// The process a trace was recorded from.
struct Header {
  std::uint16_t version = kFormatVersion;
  std::uint8_t pointer_bytes = sizeof(void*);
  std::uint32_t page_size = 0;
  std::uint32_t pid = 0;
  std::uint32_t ppid = 0;
  std::uint64_t start_realtime_ns = 0;   ///< CLOCK_REALTIME when recording began
  std::uint64_t start_monotonic_ns = 0;  ///< CLOCK_MONOTONIC at the same instant (events use this clock)
  std::string executable;                ///< /proc/self/exe at start
  std::vector<std::string> command_line;
  /// 0: every call is in the trace. Otherwise the trace is sampled
  /// (`tailor record --sample`): an allocation of n bytes is in it with
  /// probability 1 - exp(-n / sample_interval), independently of the others
  /// (a mean of one sampled allocation per sample_interval bytes
  /// allocated), together with the release of each sampled block; nothing
  /// else is. analyze/sampling.h turns such a trace into estimates.
  std::uint64_t sample_interval = 0;
};

/// A loaded ELF object (the executable, a shared library, a dlopen'ed module).
struct Module {
  std::uint64_t load_address = 0;  ///< dlpi_addr: add to an ELF virtual address to get a runtime address
  std::uint64_t start = 0;         ///< lowest mapped address of its loadable segments
  std::uint64_t end = 0;           ///< one past the highest
  std::uint64_t time_ns = 0;       ///< when the recorder first saw it mapped
  std::string path;                ///< as the dynamic loader knows it ("" for the main program is replaced by the executable)
  std::string build_id;            ///< GNU build-id, hex, or empty

  friend bool operator==(const Module&, const Module&) = default;
};

/// How the recorded process stopped recording. Absent when the process was
/// killed (SIGKILL, a crash): the reader then reports the trace as cut.
enum class EndReason : std::uint8_t {
  Exit = 1,    ///< exit() or return from main: status is the exit status
  FastExit = 2,///< _exit() / _Exit(): status is the exit status
  Abort = 3,   ///< abort()
  Exec = 4,    ///< the process image was replaced by exec*()
};

struct EndRecord {
  EndReason reason = EndReason::Exit;
  std::int32_t status = 0;
  std::uint64_t events = 0;        ///< events the recorder wrote in this file
  std::uint64_t dropped = 0;       ///< events it could not record (out of memory for buffers)
  std::uint64_t time_ns = 0;

  friend bool operator==(const EndRecord&, const EndRecord&) = default;
};

}  // namespace tailor::trace
