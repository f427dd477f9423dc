// SPDX-License-Identifier: MIT
// Front: a small cache of free blocks in front of a DMM's allocators, as
// glibc's tcache is in front of its arenas. A freed block of at most
// kMaxUsable usable bytes is kept in a bin by its usable size (8-byte
// steps) instead of going back to its allocator; the next request of that
// bin's sizes takes it back in a few instructions, without the mechanism
// (a list pop, no header to write, no class to find). A bin keeps at most
// `limit` blocks before an allocator that may split, coalesce or give back
// its free blocks (a block the front keeps is one it cannot). Before one
// that never does (Kingsley, segregated lists, simple segregated storage: a
// block kept in the front is one its own free list would hold, at no cost
// in memory) it keeps every block while one thread runs (the simulator's
// one front for the trace; a process before its second thread), so that a
// program that frees a whole structure and builds it again never reaches
// the mechanism, and kThreadsUnmergedLimit blocks per thread once several
// run (a thread's front holds blocks no other thread can take: a consumer
// thread must not keep all it frees). Beyond, the block goes back to its
// allocator as before.
//
// Why: a DMM found by the search is a composition of generic mechanisms
// reached through one indirect call per operation; run for real they cost
// up to twice libtailor's fast paths. Most programs free a block and soon
// ask again for one of its size, and the front serves exactly those.
//
// The rules, which keep a DMM the allocator the simulator measured:
//  - A block goes into bin floor(usable / 8): it holds any request of up to
//    8b bytes. Aligned calls always reach the allocators.
//  - Requests of (8b - 8, 8b] bytes take their blocks from the bin where the
//    allocator's blocks for them go back to, learned from the first block
//    it gave such a request (at least bin b): a mechanism whose smallest
//    block has 24 usable bytes serves a 12-byte request from bin 3, not from
//    an empty bin 2 (`learn`, `target`).
//  - A bin belongs to one allocator of the composition: the one every
//    request of its sizes is routed to (`owner`); a block of another
//    allocator is not kept there. So each allocator's front sees only that
//    allocator's requests, and the search may still simulate a DMM's
//    allocators one by one (src/simulate/part_simulation.h).
//  - A bin of a size that is a multiple of 16 keeps only 16-aligned blocks
//    (the composition gives such requests 16-byte alignment: composite.h).
//  - The link of a cached block is its first word, written through the
//    DMM's memory: counted as a metadata access by the simulator.
// The bins are plain data: the simulator keeps one set for a trace, libtailor
// one per thread (src/alloc/dmm_front.cpp), which takes the DMM's lock only
// when it passes a request or a block on.
//
// Freestanding (the dmm layer's rules): no allocation, no exceptions.
#pragma once

#include <cstddef>
#include <cstdint>

#include "dmm/allocator.h"
#include "dmm/memory.h"

namespace tailor::dmm {

struct FrontCounters {
  std::uint64_t hits = 0;     ///< requests served from a bin
  std::uint64_t misses = 0;   ///< requests passed to an allocator (aligned ones included)
  std::uint64_t kept = 0;     ///< releases kept in a bin
  std::uint64_t passed = 0;   ///< releases passed to an allocator
};

class Front {
 public:
  static constexpr unsigned kBins = 128;
  static constexpr std::uint64_t kMaxUsable = std::uint64_t{kBins} * 8;
  static constexpr unsigned kDefaultLimit = 16;
  static constexpr unsigned kMaxLimit = 1024;
  static constexpr std::uint32_t kUnmergedLimit = UINT32_MAX;   ///< one thread: every block
  static constexpr std::uint32_t kThreadsUnmergedLimit = 1024;  ///< each thread's, with several
  static constexpr std::uint8_t kNoOwner = 0xff;

  /// Which allocator owns each bin: part_for(bytes) gives the allocator a
  /// request of `bytes` goes to; a bin whose sizes go to several has none.
  template <class PartFor>
  static void owners(std::uint8_t (&owner)[kBins + 1], PartFor part_for) noexcept {
    owner[0] = kNoOwner;
    for (unsigned b = 1; b <= kBins; ++b) {
      const std::size_t lo = part_for(std::uint64_t{8} * b - 7), hi = part_for(std::uint64_t{8} * b);
      owner[b] = lo == hi && lo < kNoOwner ? static_cast<std::uint8_t>(lo) : kNoOwner;
    }
  }

  /// The blocks each bin keeps at most: `limit` (0: the front is off)
  /// where its owner merges blocks (merges(part)), else `unmerged`
  /// (kUnmergedLimit; kThreadsUnmergedLimit for a thread's front among
  /// several), or `limit` if that is more.
  template <class Merges>
  static void limits(std::uint32_t (&out)[kBins + 1], const std::uint8_t (&owner)[kBins + 1], unsigned limit,
                     Merges merges, std::uint32_t unmerged = kUnmergedLimit) noexcept {
    for (unsigned b = 0; b <= kBins; ++b) {
      std::uint32_t n = 0;
      if (owner[b] != kNoOwner && limit != 0) n = merges(owner[b]) || limit > unmerged ? limit : unmerged;
      out[b] = n;
    }
  }

  /// The bin of a request, or 0 when no bin serves it.
  static unsigned bin_of_request(std::uint64_t bytes, std::uint64_t alignment) noexcept {
    if (alignment != 0 || bytes > kMaxUsable) return 0;
    return bytes == 0 ? 1u : static_cast<unsigned>((bytes + 7) >> 3);
  }

  /// The bin a free block of `usable` bytes at `address` may go to, or 0.
  static unsigned bin_of_block(Address address, std::uint64_t usable) noexcept {
    if (usable < 8 || usable >= kMaxUsable + 8) return 0;
    const auto b = static_cast<unsigned>(usable >> 3);
    if ((b & 1) == 0 && (address & 15) != 0) return 0;  // a multiple of 16 bytes: 16-aligned blocks only
    return b;
  }

  /// The bin requests of bin b take their blocks from.
  unsigned target(unsigned b) const noexcept { return target_[b] == 0 ? b : target_[b]; }
  /// Whether bin b's target was learned (the first request the allocator served).
  bool learned(unsigned b) const noexcept { return target_[b] != 0; }
  /// The allocator gave a request of bin b a block that goes back to bin t
  /// (bin_of_block; 0: none): requests of bin b take from bin t from now on
  /// (from b itself if t is not a bin that holds them).
  void learn(unsigned b, unsigned t) noexcept { target_[b] = static_cast<std::uint8_t>(t >= b ? t : b); }

  /// A block for a request of `bytes` (of bin b), or 0 when its target bin
  /// has none fit: a request of a multiple of 16 bytes takes only a
  /// 16-aligned block.
  template <class Load>
  Address take(unsigned b, std::uint64_t bytes, Load&& load) noexcept {
    const unsigned t = target(b);
    const Address a = head_[t];
    if (a == 0 || ((bytes & 15) == 0 && bytes != 0 && (a & 15) != 0)) return 0;
    head_[t] = load(a);
    --count_[t];
    return a;
  }

  /// A block of bin b, or 0 when it is empty. `load` reads a block's link.
  template <class Load>
  Address pop(unsigned b, Load&& load) noexcept {
    const Address a = head_[b];
    if (a == 0) return 0;
    head_[b] = load(a);
    --count_[b];
    return a;
  }

  /// Keeps a block in bin b unless it is full; false if it is.
  template <class Store>
  bool push(unsigned b, Address a, std::uint32_t limit, Store&& store) noexcept {
    if (count_[b] >= limit) return false;
    store(a, head_[b]);
    head_[b] = a;
    ++count_[b];
    return true;
  }

  /// Gives every kept block to `release` (a thread that ends, a front turned off).
  template <class Load, class Release>
  void drain(Load&& load, Release&& release) noexcept {
    for (unsigned b = 1; b <= kBins; ++b)
      while (Address a = pop(b, load)) release(a);
  }

  std::uint64_t blocks() const noexcept {
    std::uint64_t n = 0;
    for (unsigned b = 1; b <= kBins; ++b) n += count_[b];
    return n;
  }

 private:
  Address head_[kBins + 1] = {};
  std::uint32_t count_[kBins + 1] = {};
  std::uint8_t target_[kBins + 1] = {};  // 0: the bin itself
};

}  // namespace tailor::dmm
