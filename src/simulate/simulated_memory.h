// SPDX-License-Identifier: MIT
// SimulatedMemory: the Memory (src/dmm/memory.h) of the simulator. An
// address space starting at a page-aligned non-zero base whose addresses
// dmm::AddressSpace chooses (as libtailor's real memory does: sbrk-like,
// with reuse of released ranges); metadata words live
// in host pages allocated on first write and found through a flat page table
// (two dependent loads, no hash map: the simulator targets tens of millions
// of events per second). It counts every read and write, every system
// request, and the bytes held from the system with their high-water mark;
// it keeps the list of obtained regions for the checker.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <stdexcept>
#include <vector>

#include "dmm/address_space.h"
#include "simulate/dmm_names.h"
#include "simulate/memory_account.h"

namespace tailor::simulate {

/// The simulator's arena (dmm/memory.h): the C++ heap.
struct HeapArena {
  static void* allocate(std::size_t bytes) { return ::operator new(bytes); }
  static void release(void* p, std::size_t bytes) { ::operator delete(p, bytes); }
};

class SimulatedMemory final : public MemoryAccount {
 public:
  using Arena = HeapArena;

  /// First address handed out (page-aligned, non-zero so that 0 stays "null").
  static constexpr Address kBase = Address{1} << 32;

  /// Space of one memory when several share an address space (a DMM gives
  /// each of its allocators its own: see dmm.h).
  static constexpr std::uint64_t kSpan = std::uint64_t{1} << 40;

  /// A memory whose address space is [base, base + span); base page-aligned, non-zero.
  explicit SimulatedMemory(Address base = kBase, std::uint64_t span = std::uint64_t{1} << 47);
  ~SimulatedMemory();
  SimulatedMemory(const SimulatedMemory&) = delete;
  SimulatedMemory& operator=(const SimulatedMemory&) = delete;

  std::uint64_t load(Address address) {
    ++reads_;
    const std::uint64_t word = word_index(address);
    cache(word, true);
    const std::uint64_t* page = pages_[word >> kPageBits];
    return page ? page[word & kPageMask] : 0;
  }

  void store(Address address, std::uint64_t value) {
    ++writes_;
    const std::uint64_t word = word_index(address);
    cache(word, false);
    std::uint64_t*& page = pages_[word >> kPageBits];
    if (!page) page = new_page(word >> kPageBits);
    page[word & kPageMask] = value;
  }

  Address obtain(std::uint64_t bytes, std::uint64_t alignment);
  void release(Address address, std::uint64_t bytes);

  std::uint64_t reads() const noexcept override { return reads_; }
  std::uint64_t writes() const noexcept override { return writes_; }
  std::uint64_t system_requests() const noexcept override { return requests_; }
  std::uint64_t held() const noexcept override { return held_; }
  std::uint64_t held_high_water() const noexcept override { return high_water_; }
  /// Bytes of the 4 KiB pages held ranges touch (what a real memory costs), and their high-water mark.
  std::uint64_t page_bytes() const noexcept { return space_.os_bytes(); }
  std::uint64_t page_high_water() const noexcept { return page_high_water_; }
  /// Bytes of the memory's own state (its table of released ranges), which
  /// a real memory keeps beside the DMM's.
  std::size_t state_bytes() const noexcept { return space_.state_bytes(); }
  /// Bytes of pages that became held over the run (each is faulted in when
  /// first touched: a real memory gives released pages back to the machine).
  std::uint64_t pages_gained() const noexcept { return pages_gained_; }
  /// Releases that gave whole pages back (madvise for a real memory), and
  /// bytes of released ranges zeroed by hand (those that stay, shared with a neighbour).
  std::uint64_t purges() const noexcept { return purges_; }
  std::uint64_t zeroed_bytes() const noexcept { return zeroed_; }
  /// Takes back reads counted for bookkeeping that a real run does not do.
  void discount_reads(std::uint64_t n) noexcept { reads_ -= n; }
  /// The program's first write to a block it got (a replay writes the first
  /// byte of every block): a line the cache model sees, not a metadata access.
  void touch(Address address) {
    if (address >= base_ && address - base_ < (limit_words_ << 3)) cache((address - base_) >> 3, false);
  }
  /// Loads of metadata words in 64-byte lines the cache model did not hold
  /// (a direct-mapped cache of kCacheLines lines, the size of this
  /// machine's L2, tagged per memory), except a line just after the
  /// previous missed line's (1 or 2 lines on: a hardware prefetcher's
  /// stream). A proxy of the misses a real run waits for, for the time
  /// model (time_model.h): a store (a metadata write, the program's first
  /// write to its block) fills the model's cache but waits in the store
  /// buffer, not in the core, and is not counted.
  std::uint64_t line_misses() const noexcept { return line_misses_; }
  static constexpr std::size_t kCacheLines = 32768;  // 2 MiB
  Address base() const noexcept { return base_; }
  /// Regions currently held, in increasing address order.
  const std::vector<Region>& regions() const noexcept { return regions_; }
  std::vector<Region> held_regions() const override { return regions_; }
  /// True if [address, address + bytes) lies inside one held region.
  bool holds(Address address, std::uint64_t bytes) const noexcept override;

 private:
  static constexpr unsigned kPageBits = 9;  // 512 words = 4 KiB of simulated space per host page
  static constexpr std::uint64_t kPageMask = (std::uint64_t{1} << kPageBits) - 1;

  std::uint64_t word_index(Address address) const {
    const std::uint64_t word = (address - base_) >> 3;
    if (address < base_ || (address & 7) != 0 || word >= limit_words_) [[unlikely]]
      bad_access(address);
    return word;
  }
  [[noreturn]] void bad_access(Address address) const;
  void cache(std::uint64_t word, bool load) noexcept {
    const std::uint64_t line = word >> 3;
    std::uint32_t& tag = cache_tags_[line & (kCacheLines - 1)];
    const auto want = static_cast<std::uint32_t>(line / kCacheLines) + 1;  // 0: empty
    if (tag != want) [[unlikely]] {
      tag = want;
      if (load && line - last_miss_line_ - 1 > 1) ++line_misses_;  // not 1 or 2 lines past the last miss
      last_miss_line_ = line;
    }
  }
  std::uint64_t* new_page(std::uint64_t index);

  void zero(Address start, Address end);

  std::vector<std::uint64_t*> pages_;  // page table over [base_, break)
  std::vector<std::unique_ptr<std::uint64_t[]>> owned_;
  std::vector<Region> regions_;
  std::uint64_t limit_words_ = 0;  // words below the break
  Address base_, limit_;
  dmm::AddressSpace<HeapArena> space_;
  std::uint64_t reads_ = 0, writes_ = 0, requests_ = 0, held_ = 0, high_water_ = 0, page_high_water_ = 0;
  std::uint64_t pages_gained_ = 0, purges_ = 0, zeroed_ = 0, line_misses_ = 0;
  std::uint64_t last_miss_line_ = ~std::uint64_t{0} - 8;  // no miss yet: no line follows it
  std::unique_ptr<std::uint32_t[]> cache_tags_ = std::make_unique<std::uint32_t[]>(kCacheLines);
};

static_assert(Memory<SimulatedMemory>);

}  // namespace tailor::simulate
