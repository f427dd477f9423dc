// SPDX-License-Identifier: MIT
// RealMemory: the dmm layer's Memory (src/dmm/memory.h) over real pages, so
// that libtailor runs the very mechanism templates the simulator measures
// (docs/deploy.md). Loads and stores are plain word accesses; system
// requests take addresses from dmm::AddressSpace inside a range reserved
// once (MAP_NORESERVE: pages are committed when first touched), exactly as
// SimulatedMemory does, so a DMM sees the same addresses relative to its
// base in both. A release gives whole free pages back with MADV_DONTNEED
// and zeroes the rest of the range, so that memory obtained again reads as
// zero, as the mechanisms expect of fresh memory.
//
// Counters (MemoryTotals, summed over a DMM's memories): bytes held as the
// simulator counts them (obtained minus released), with their high-water
// mark, and the pages those ranges touch (what the machine gives; the DMM
// front end adds its state: dmm_front.cpp). OsArena holds the mechanisms' private state:
// a bump allocator over a reserved range, whose bytes are the DMM's
// metadata. Everything here runs under the DMM front end's lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "dmm/address_space.h"
#include "dmm/memory.h"
#include "alloc/os.h"

namespace tailor::alloc {

/// The mechanisms' private state: bump-allocated from one reserved range,
/// never reused (a DMM lives as long as the process; its tables are sized
/// once, and what grows, grows by doubling).
struct OsArena {
  static void* allocate(std::size_t bytes) noexcept;
  static void release(void* p, std::size_t bytes) noexcept;
  /// Bytes handed out so far (16-byte granules).
  static std::size_t used() noexcept;
};

/// The sums over a DMM's memories (one per allocator of its spec), with the
/// high-water marks of the sums, as the simulator's DmmMemory keeps them.
struct MemoryTotals {
  std::uint64_t held = 0, held_high = 0, os = 0;

  void change(std::int64_t held_delta, std::int64_t os_delta) noexcept {
    held += static_cast<std::uint64_t>(held_delta);
    os += static_cast<std::uint64_t>(os_delta);
    if (held > held_high) held_high = held;
  }
  void reset_peak() noexcept { held_high = held; }
};

class RealMemory {
 public:
  using Arena = OsArena;
  static constexpr std::uint64_t kPage = 4096;

  RealMemory(dmm::Address base, std::uint64_t span, MemoryTotals& totals) : space_(base, span, kPage), totals_(totals) {}

  std::uint64_t load(dmm::Address address) { return *reinterpret_cast<const Word*>(address); }
  void store(dmm::Address address, std::uint64_t value) { *reinterpret_cast<Word*>(address) = value; }

  dmm::Address obtain(std::uint64_t bytes, std::uint64_t alignment) {
    if (bytes == 0) bytes = 1;
    const std::uint64_t os_before = space_.os_bytes();
    const dmm::Address a = space_.obtain(bytes, alignment);
    if (a == 0) return 0;
    totals_.change(static_cast<std::int64_t>(bytes), static_cast<std::int64_t>(space_.os_bytes() - os_before));
    return a;
  }

  void release(dmm::Address address, std::uint64_t bytes) {
    const std::uint64_t os_before = space_.os_bytes();
    const dmm::PageRange back = space_.release(address, bytes);
    const dmm::Address end = address + bytes;
    if (back.start < back.end) {
      os::purge(reinterpret_cast<void*>(back.start), back.end - back.start);
      if (address < back.start) std::memset(reinterpret_cast<void*>(address), 0, back.start - address);
      if (back.end < end) std::memset(reinterpret_cast<void*>(back.end), 0, end - back.end);
    } else {
      std::memset(reinterpret_cast<void*>(address), 0, bytes);
    }
    totals_.change(-static_cast<std::int64_t>(bytes),
                   static_cast<std::int64_t>(space_.os_bytes()) - static_cast<std::int64_t>(os_before));
  }

  std::size_t state_bytes() const noexcept { return space_.state_bytes(); }

 private:
  using Word = std::uint64_t __attribute__((may_alias));

  dmm::AddressSpace<OsArena> space_;
  MemoryTotals& totals_;
};

static_assert(dmm::Memory<RealMemory>);

}  // namespace tailor::alloc
