// SPDX-License-Identifier: MIT
// The spin lock of the parts that share state between threads outside the
// thread heaps (region pools, call-site pools' idle list, secure mode's
// heap list, spares and metadata): held for a few dozen instructions, never across a system call
// that can block for long. A waiter yields every 64 spins, because on a
// machine with fewer cores than threads the holder may be descheduled.
#pragma once

#include <sched.h>

#include <atomic>

namespace tailor::alloc {

inline void spin_lock(std::atomic<bool>& l) noexcept {
  for (unsigned spins = 0; l.exchange(true, std::memory_order_acquire); ++spins) {
    while (l.load(std::memory_order_relaxed)) {
      if (++spins % 64 == 0) sched_yield();
      __builtin_ia32_pause();
    }
  }
}

inline void spin_unlock(std::atomic<bool>& l) noexcept { l.store(false, std::memory_order_release); }

}  // namespace tailor::alloc
