// SPDX-License-Identifier: MIT
// The one lock of libtailor's shared state outside the thread heaps (region
// pools, the segments list, secure mode's heap list, spares and metadata, a
// DMM's single heap): a test-and-test-and-set spin lock held for a few dozen
// instructions, or across one mmap at most. A waiter pauses between its
// reads of the lock's line (the core's hint that it is spinning) and yields
// every 64 spins, because on a machine with fewer cores than threads the
// holder may be descheduled. BasicLockable, so std::lock_guard holds it for
// a scope; fork handlers take and release it across functions with
// lock() and unlock(), and reset() frees it in a child that has no holder.
#pragma once

#include <sched.h>

#include <atomic>

namespace tailor::alloc {

/// What a spinning core does between two reads of a lock (x86's pause,
/// Arm's yield; elsewhere nothing but a compiler barrier).
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
  asm volatile("yield" ::: "memory");
#else
  asm volatile("" ::: "memory");
#endif
}

class SpinLock {
 public:
  constexpr SpinLock() noexcept = default;
  SpinLock(const SpinLock&) = delete;
  SpinLock& operator=(const SpinLock&) = delete;

  void lock() noexcept {
    for (unsigned spins = 0; locked_.exchange(true, std::memory_order_acquire);) {
      while (locked_.load(std::memory_order_relaxed)) {
        if (++spins % 64 == 0) sched_yield();
        else cpu_relax();
      }
    }
  }

  bool try_lock() noexcept {
    return !locked_.load(std::memory_order_relaxed) && !locked_.exchange(true, std::memory_order_acquire);
  }

  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

  /// Frees the lock whoever held it: only in a fork child, where the holder
  /// (another thread of the parent) does not exist.
  void reset() noexcept { locked_.store(false, std::memory_order_relaxed); }

 private:
  std::atomic<bool> locked_{false};
};

}  // namespace tailor::alloc
