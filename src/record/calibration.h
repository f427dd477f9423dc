// SPDX-License-Identifier: MIT
// Maps event timestamps taken as TSC ticks (recorder.h, now_ticks) to
// CLOCK_MONOTONIC nanoseconds. One linear map serves the whole process: it is
// fixed, from a (ticks, ns) pair taken at start and another taken at least
// kMinBaselineNs later, the first time events are written, and never changes
// afterwards, so events of all threads keep the order of their ticks. Its
// error against CLOCK_MONOTONIC is that of two clock reads over the baseline
// (a few parts in 10^5).
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

#include "record/recorder.h"
#include "tailor/trace/writer.h"

namespace tailor::record {

class TickClock {
 public:
  static constexpr std::uint64_t kMinBaselineNs = 2'000'000;

  /// True if the kernel's clocksource is the TSC (so it is invariant and synchronized).
  static bool tsc_usable() noexcept {
    int fd = ::open("/sys/devices/system/clocksource/clocksource0/current_clocksource", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    char buf[16] = {};
    ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    return n >= 3 && std::strncmp(buf, "tsc", 3) == 0 && (n == 3 || buf[3] == '\n');
  }

  void start(bool ticks_are_tsc) noexcept {
    tsc_ = ticks_are_tsc;
    base_ns_ = now_ns();
    base_ticks_ = tsc_ ? read_ticks() : base_ns_;
    fixed_ = !tsc_;
    ns_per_tick_ = 1.0;
  }

  /// The map from ticks to ns, which the writer applies as it encodes
  /// (fixed on first use).
  trace::TimeMap map() noexcept {
    trace::TimeMap m;
    if (!tsc_) return m;
    if (!fixed_) fix();
    m.identity = false;
    m.base_ticks = base_ticks_;
    m.base_ns = base_ns_;
    m.ns_per_tick = ns_per_tick_;
    return m;
  }

 private:
  void fix() noexcept {
    std::uint64_t ns, ticks;
    do {
      ns = now_ns();
      ticks = read_ticks();
    } while (ns - base_ns_ < kMinBaselineNs);
    ns_per_tick_ = static_cast<double>(ns - base_ns_) / static_cast<double>(ticks - base_ticks_);
    fixed_ = true;
  }

  bool tsc_ = false;
  bool fixed_ = true;
  std::uint64_t base_ns_ = 0, base_ticks_ = 0;
  double ns_per_tick_ = 1.0;
};

}  // namespace tailor::record
