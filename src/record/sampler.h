// SPDX-License-Identifier: MIT
// Byte sampling for `tailor record --sample BYTES` (TAILOR_RECORD_SAMPLE):
// the rule of tcmalloc's and jemalloc's heap profilers. Each thread counts
// down the bytes it allocates from an interval drawn from an exponential
// distribution of mean BYTES; the allocation during which the count runs out
// is sampled, and a new interval drawn. An allocation of n bytes is thereby
// sampled with probability 1 - exp(-n / BYTES), independently of every other
// (the exponential has no memory), which is what lets the analyzers weigh a
// sampled block back into an estimate (analyze/sampling.h). A sampled block
// is remembered until its release (sampled_set.h), which is recorded too;
// nothing else is. A sampled recording writes its few chunks from the
// program's own threads: a writer thread would make the process
// multithreaded, and glibc's malloc then locks its arenas on every call
// (measured: 12% on a tree benchmark).
//
// The cost of an unsampled call is its hook's filter: one thread-local
// subtraction and comparison for an allocation, one bit of a filter for a
// release, then a tail call to the real function. In an exact trace the same
// filters send every call to the recording path: the countdown stays at 0
// and every bit of the filter is set.
#pragma once

#include <cstddef>
#include <cstdint>

#include "record/recorder.h"
#include "record/sampled_set.h"

namespace tailor::record {

/// Mean bytes between samples; 0: every call is recorded.
extern std::uint64_t sample_interval;

/// Reads TAILOR_RECORD_SAMPLE and TAILOR_RECORD_SEED (at start-up) and
/// readies the sampled set. False: the variable is malformed or there is no
/// memory for the set (nothing is recorded, with a message).
bool sampler_init() noexcept;

/// A release the hook must look at: perhaps of a sampled block, or any
/// release of an exact trace. False: a block the recorder never sampled;
/// forward it.
inline bool release_needs_hook(const void* p) noexcept { return sampled_set::maybe_sampled(p); }

/// The time of a sampled event: read now (an exact trace's single thread
/// reads the clock only every kClockEvery events, which sparse samples
/// would make stale), ordered as releases need it once there are threads.
inline std::uint64_t sample_time() noexcept {
  if (__atomic_load_n(&ordered_releases, __ATOMIC_RELAXED)) return now_ticks_ordered();
  return tls.last_ticks = read_ticks();
}

/// An allocation of n bytes that is neither sampled nor recorded: n is
/// counted off the thread's interval. False when the hook must look at the
/// call: an exact trace, a thread's first call, or the interval runs out.
[[gnu::always_inline]] inline bool passes_unrecorded(std::size_t n) noexcept {
  const std::uint64_t left = tls.sample_left;
  if (__builtin_expect(n < left, 1)) {
    tls.sample_left = left - n;
    return true;
  }
  return false;
}

/// In a sampled trace, for an allocation of n bytes that passes_unrecorded()
/// refused: true if it is sampled (a new interval is then drawn); false
/// for a thread's first call whose freshly drawn interval is longer than n
/// (n is counted off it).
bool sample_this(std::size_t n) noexcept;

/// In a sampled trace, with the thread marked busy: a block that a sampled
/// call returned is remembered and its allocation recorded (`size` and
/// `aux` as the call gave them), or counted as dropped when the sampled set
/// has no room.
void keep_sample(trace::Op op, std::uint8_t flags, std::uint64_t size, const void* p, std::uint64_t aux,
                 const void* caller) noexcept;

/// In a sampled trace, before `p` is released: a sampled block is forgotten
/// and its release recorded when the thread records. Any other `p` (the
/// filter's false positives) is left alone.
void forget_sample(trace::Op op, std::uint8_t flags, std::uint64_t size, const void* p, std::uint64_t aux,
                   const void* caller) noexcept;

/// In a forked child: the sampled set's lock is free again, and the thread
/// draws intervals of its own.
void sampler_after_fork_child() noexcept;

}  // namespace tailor::record
