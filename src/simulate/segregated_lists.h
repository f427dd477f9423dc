// SPDX-License-Identifier: MIT
// Segregated free lists as a mechanism over the Memory concept (memory.h),
// and the built-ins S10 and EXA of seed 002 made from it. Written to be
// reused by the DMM model: a size-class map (size_classes.h), one singly
// linked free list per class with a fit and a policy (free_list.h), a header
// word per block stored through the Memory, memory obtained from the system
// in chunks and carved by a bump pointer. This version neither splits nor
// coalesces, never moves a block to another class, and never returns memory.
//
// Sizes and blocks:
//  - a request of n bytes with alignment a has the size
//      s = round_up(max(n, 1) + (a > 16 ? a - 16 : 0), 8)
//    and goes to the class of s (SizeClasses: ranges of sizes);
//  - its block has b = round_up(s + 8, 16) bytes: the 8-byte header, then the
//    data, 16-aligned (kMinAlignment, what glibc guarantees); with
//    round_to_class (strict classes, as EXA) a bounded class's blocks all have
//    the bytes of its upper bound, so its list is uniform;
//  - the header (BlockHeader) holds the block's bytes and class; it is
//    written once when the block is carved: a block always returns to the
//    list of the class it was carved for;
//  - an alignment a > 16 is met inside the block (its slack a - 16 is in s):
//    the program gets the first a-aligned address d in the data; if d is not
//    the data start, the word before d holds (d - data start) | 1, which
//    release tells from a header by its bit 0.
// Allocation: take a block from the class's list by the fit; if none, carve
// one at the bump pointer. If the block does not fit in what is left of the
// current chunk, one system request obtains round_up(b + 8, chunk) bytes (the
// first block of a region starts 8 bytes in, so that its data is 16-aligned),
// the block is carved at its start, and the bump pointer goes on in whichever
// of the two regions has more room left; the rest of the other is never used
// (external fragmentation). The chunk is the traced process's page (4096)
// for S10 and EXA: the granularity at which Kingsley refills, so that memory
// usage compares with KNG's. A region never straddles two system requests,
// so this works on any Memory, contiguous or not.
//
// Time complexity, in abstract steps as seed 002 counts them (one per loop
// iteration in a search and per list operation; constant-time arithmetic such
// as finding the class is free), and memory accesses (loads and stores on the
// Memory; list heads and tails, the bump pointer and the class map are the
// allocator's static state, not counted):
//   allocate: the list search (free_list.h: 1 step per block examined, 1
//             read of its link and, on a list that is not uniform, 1 of its
//             header; 1 write to unlink a block that is not the head);
//             on a miss, carving: 1 step + 1 write (the header), and 1 step
//             more when it makes a system request; an alignment word: 1 write;
//   release:  1 read (the header; 1 more if the address has an alignment
//             word) + the push (1 step; LIFO 1 write, FIFO 2, or 1 on an empty
//             list).
//
// S10 (seed 002's "list of 10 segregated free lists"): classes (0,16],
// (16,32], (32,64], ..., (2048,4096] and (4096, inf) of request sizes: powers
// of two, as Kingsley's, so that the lists cover what programs ask for
// (mostly small) with a list per doubling, and the last one takes every large
// request. First fit, LIFO: seed 002's own example of a segregated free list
// (Table 1: "SegregatedFreeList, split = false: SLL, FIRST (LIFO)"). Lists
// keep the order of release (unordered by size): a size-ordered list would
// make first fit a best fit and every release a search, which is not what
// seed 002's free lists do (their policies are FIFO and LIFO).
//
// EXA (exact segregated fit, "a separate free list for each possible block
// size"): one class per size the trace uses (SizeClasses::exact over
// sizes_of(trace.operations)), large sizes too, strict (round_to_class), so every
// list is uniform and a freed block is reused only by a request of its own
// size; an open last class above the largest size (empty for its own trace)
// with exact fit. FIFO, as seed 002's ExactSegregatedFit example (SLL, FIRST,
// FIFO).
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "allocator.h"
#include "free_list.h"
#include "memory.h"
#include "size_classes.h"

namespace tailor::simulate {

/// Size (the class key) of a request of `bytes` with `alignment` (0: none):
/// round_up(max(bytes, 1) + alignment slack, 8); 0 if no block can be that large.
inline std::uint64_t segregated_size(std::uint64_t bytes, std::uint64_t alignment) noexcept {
  const std::uint64_t slack = alignment > 16 ? alignment - 16 : 0;
  if (bytes > BlockHeader::kMaxBytes - 32 || slack > BlockHeader::kMaxBytes - 32 - bytes) return 0;
  const std::uint64_t s = (bytes == 0 ? 1 : bytes) + slack;
  return (s + SizeClasses::kWord - 1) & ~(SizeClasses::kWord - 1);
}

/// Bytes of a block whose data holds `size` bytes: the 8-byte header and the data, rounded to 16.
constexpr std::uint64_t segregated_block(std::uint64_t size) noexcept { return (size + 8 + 15) & ~std::uint64_t{15}; }

struct SegregatedConfig {
  Fit fit = Fit::kFirst;
  Policy policy = Policy::kLifo;
  /// Strict classes: a bounded class's blocks all have the bytes of its upper bound.
  bool round_to_class = false;
  /// Bytes per system request (at least; a power of two >= 64).
  std::uint64_t chunk = 4096;
};

template <Memory M>
class SegregatedLists {
 public:
  static constexpr std::uint64_t kHeader = 8;
  static constexpr std::uint64_t kMinAlignment = 16;

  SegregatedLists(M& memory, SizeClasses classes, SegregatedConfig config)
      : memory_(memory), classes_(std::move(classes)), config_(config), lists_(classes_.count()) {
    if (config.chunk < 64 || !std::has_single_bit(config.chunk))
      throw std::invalid_argument("SegregatedLists: chunk " + std::to_string(config.chunk) +
                                  " is not a power of two >= 64");
    if (config.fit == Fit::kFarthest)
      throw std::invalid_argument("SegregatedLists: farthest fit needs segregated_fit.h's FreeBlocks");
    if (classes_.count() > BlockHeader::kMaxClass) throw std::invalid_argument("SegregatedLists: too many classes");
    for (std::uint32_t c = 0; c < classes_.count(); ++c) {
      const std::uint64_t up = classes_.upper(c);
      lists_[c].uniform = up != SizeClasses::kOpen &&
                          (config.round_to_class || block_for(classes_.lower(c) + SizeClasses::kWord) == block_for(up));
    }
  }

  static std::uint64_t size_for(std::uint64_t bytes, std::uint64_t alignment) noexcept {
    return segregated_size(bytes, alignment);
  }
  static constexpr std::uint64_t block_for(std::uint64_t size) noexcept { return segregated_block(size); }

  /// Class serving a request (SizeClasses::kNone if none).
  std::uint32_t class_for(std::uint64_t bytes, std::uint64_t alignment = 0) const noexcept {
    const std::uint64_t s = size_for(bytes, alignment);
    return s ? classes_.class_of(s) : SizeClasses::kNone;
  }

  Block allocate(std::uint64_t bytes, std::uint64_t alignment = 0) {
    const std::uint64_t size = size_for(bytes, alignment);
    const std::uint32_t c = size ? classes_.class_of(size) : SizeClasses::kNone;
    if (c == SizeClasses::kNone) [[unlikely]]
      throw std::length_error("SegregatedLists: no class holds a request of " + std::to_string(bytes) + " bytes");
    const std::uint64_t up = classes_.upper(c);
    const std::uint64_t need =
        config_.round_to_class && up != SizeClasses::kOpen ? block_for(up) : block_for(size);
    FreeList& list = lists_[c];
    std::uint64_t have;
    Address block = list.take(memory_, steps_, need, config_.fit, have);
    if (block == 0) {
      block = carve(need);
      memory_.store(block, BlockHeader::make(need, c));
    }
    Address data = block + kHeader;
    if (alignment > kMinAlignment) {
      const Address aligned = (data + alignment - 1) & ~(alignment - 1);
      if (aligned != data) memory_.store(aligned - kHeader, (aligned - data) | 1);
      data = aligned;
    }
    return {data, have};
  }

  /// Releases the block at `address` (as allocate returned it); returns its bytes.
  std::uint64_t release(Address address) {
    std::uint64_t h = memory_.load(address - kHeader);
    Address block = address - kHeader;
    if (h & 1) {
      block -= h & ~std::uint64_t{1};
      h = memory_.load(block);
    }
    lists_[BlockHeader::cls(h)].put(memory_, steps_, block, config_.policy);
    return BlockHeader::bytes(h);
  }

  std::uint64_t steps() const noexcept { return steps_; }
  const SizeClasses& classes() const noexcept { return classes_; }
  const SegregatedConfig& config() const noexcept { return config_; }
  const FreeList& list(std::uint32_t c) const noexcept { return lists_[c]; }
  M& memory() noexcept { return memory_; }
  const M& memory() const noexcept { return memory_; }

 private:
  Address carve(std::uint64_t bytes) {
    ++steps_;
    if (end_ - bump_ < bytes) [[unlikely]] {
      ++steps_;
      const std::uint64_t amount = (bytes + kHeader + config_.chunk - 1) & ~(config_.chunk - 1);
      const Address region = memory_.obtain(amount, kMinAlignment);
      const Address block = region + kHeader;
      if (region + amount - (block + bytes) >= end_ - bump_) {
        bump_ = block + bytes;
        end_ = region + amount;
      }
      return block;
    }
    const Address block = bump_;
    bump_ += bytes;
    return block;
  }

  M& memory_;
  SizeClasses classes_;
  SegregatedConfig config_;
  std::vector<FreeList> lists_;
  std::uint64_t steps_ = 0;
  Address bump_ = 0, end_ = 0;
};

/// S10: seed 002's ten segregated free lists (see the top of this file).
inline SizeClasses s10_classes() { return SizeClasses::powers_of_two(4, 12, true); }
inline SegregatedConfig s10_config(std::uint64_t page_size = 4096) {
  return {Fit::kFirst, Policy::kLifo, false, page_size};
}

/// EXA: one strict class per size in `sizes` (as segregated_size computes them), FIFO.
inline SizeClasses exa_classes(std::vector<std::uint64_t> sizes) { return SizeClasses::exact(std::move(sizes)); }
inline SegregatedConfig exa_config(std::uint64_t page_size = 4096) {
  return {Fit::kExact, Policy::kFifo, true, page_size};
}

/// The sizes (segregated_size) of every allocation in a sequence of
/// operations with `kind`, `bytes` and `alignment()` (a ReplayTrace's
/// operations), without repeats, in increasing order: EXA's classes.
template <class Operations>
std::vector<std::uint64_t> sizes_of(const Operations& operations) {
  constexpr std::uint64_t kDirect = 1 << 16;  // sizes below are marked in a bitmap, the rest collected
  std::vector<bool> small(kDirect / SizeClasses::kWord);
  std::vector<std::uint64_t> sizes;
  for (const auto& op : operations) {
    using Op = std::remove_cvref_t<decltype(op)>;
    if (op.kind != Op::kAllocate) continue;
    const std::uint64_t s = segregated_size(op.bytes, op.alignment());
    if (s == 0) continue;  // no block can serve it: allocate will say so
    if (s < kDirect)
      small[s / SizeClasses::kWord] = true;
    else
      sizes.push_back(s);
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  std::vector<std::uint64_t> all;
  for (std::uint64_t k = 1; k < small.size(); ++k)
    if (small[k]) all.push_back(k * SizeClasses::kWord);
  all.insert(all.end(), sizes.begin(), sizes.end());
  return all;
}

}  // namespace tailor::simulate
