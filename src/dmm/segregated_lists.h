// SPDX-License-Identifier: MIT
// Segregated free lists as a mechanism over the Memory concept (memory.h),
// and the built-ins S10 and EXA of the DMM simulator paper made from it. Written to be
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
// Time complexity, in abstract steps as the DMM simulator paper counts them (one per loop
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
// S10 (the DMM simulator paper's "list of 10 segregated free lists"): classes (0,16],
// (16,32], (32,64], ..., (2048,4096] and (4096, inf) of request sizes: powers
// of two, as Kingsley's, so that the lists cover what programs ask for
// (mostly small) with a list per doubling, and the last one takes every large
// request. First fit, LIFO: the DMM simulator paper's own example of a segregated free list
// (Table 1: "SegregatedFreeList, split = false: SLL, FIRST (LIFO)"). Lists
// keep the order of release (unordered by size): a size-ordered list would
// make first fit a best fit and every release a search, which is not what
// the DMM simulator paper's free lists do (their policies are FIFO and LIFO).
//
// EXA (exact segregated fit, "a separate free list for each possible block
// size"): one class per size the trace uses (SizeClasses::assign_exact over
// sizes_of(trace.operations), src/simulate/trace_sizes.h), large sizes too, strict (round_to_class), so every
// list is uniform and a freed block is reused only by a request of its own
// size; an open last class above the largest size (empty for its own trace)
// with exact fit. FIFO, as the DMM simulator paper's ExactSegregatedFit example (SLL, FIRST,
// FIFO).
#pragma once

#include <bit>
#include <cstdint>
#include <utility>

#include "dmm/allocator.h"
#include "dmm/fixed_array.h"
#include "dmm/free_list.h"
#include "dmm/memory.h"
#include "dmm/size_classes.h"

namespace tailor::dmm {

/// Size (the class key) of a request of `bytes` with `alignment` (0: none):
/// round_up(max(bytes, 1) + alignment slack, 8); 0 if no block can be that large.
inline std::uint64_t segregated_size(std::uint64_t bytes, std::uint64_t alignment) noexcept {
  const std::uint64_t slack = alignment > 16 ? alignment - 16 : 0;
  if (bytes > BlockHeader::kMaxBytes - 32 || slack > BlockHeader::kMaxBytes - 32 - bytes) return 0;
  const std::uint64_t s = (bytes == 0 ? 1 : bytes) + slack;
  return (s + kSizeWord - 1) & ~(kSizeWord - 1);
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
  static constexpr MechanismKind kKind = MechanismKind::kSegregatedLists;
  static constexpr std::uint64_t kHeader = 8;
  static constexpr std::uint64_t kMinAlignment = 16;
  using Classes = SizeClasses<typename M::Arena>;

  /// Why these classes and configuration cannot make segregated lists, or nullptr if they can.
  static const char* check(const Classes& classes, const SegregatedConfig& config) noexcept {
    if (config.chunk < 64 || !std::has_single_bit(config.chunk))
      return "SegregatedLists: the chunk is not a power of two >= 64";
    if (config.fit == Fit::kFarthest) return "SegregatedLists: farthest fit needs segregated_fit.h's FreeBlocks";
    if (classes.count() > BlockHeader::kMaxClass) return "SegregatedLists: too many classes";
    return nullptr;
  }

  /// The arguments must pass check(); ok() says whether the arena held the lists.
  SegregatedLists(M& memory, Classes classes, SegregatedConfig config)
      : memory_(memory), classes_(std::move(classes)), config_(config) {
    ok_ = classes_.count() > 0 && lists_.assign(classes_.count());
    for (std::uint32_t c = 0; ok_ && c < classes_.count(); ++c) {
      const std::uint64_t up = classes_.upper(c);
      lists_[c].uniform = up != Classes::kOpen &&
                          (config.round_to_class || block_for(classes_.lower(c) + Classes::kWord) == block_for(up));
    }
  }

  bool ok() const noexcept { return ok_; }
  std::size_t state_bytes() const noexcept { return classes_.state_bytes() + lists_.size() * sizeof(FreeList); }

  static std::uint64_t size_for(std::uint64_t bytes, std::uint64_t alignment) noexcept {
    return segregated_size(bytes, alignment);
  }
  static constexpr std::uint64_t block_for(std::uint64_t size) noexcept { return segregated_block(size); }

  /// Class serving a request (Classes::kNone if none).
  std::uint32_t class_for(std::uint64_t bytes, std::uint64_t alignment = 0) const noexcept {
    const std::uint64_t s = size_for(bytes, alignment);
    return s ? classes_.class_of(s) : Classes::kNone;
  }

  Block allocate(std::uint64_t bytes, std::uint64_t alignment = 0) {
    const std::uint64_t size = size_for(bytes, alignment);
    const std::uint32_t c = size ? classes_.class_of(size) : Classes::kNone;
    if (c == Classes::kNone) [[unlikely]]
      return {};  // no class holds the request
    const std::uint64_t up = classes_.upper(c);
    const std::uint64_t need = config_.round_to_class && up != Classes::kOpen ? block_for(up) : block_for(size);
    FreeList& list = lists_[c];
    std::uint64_t have;
    Address block = list.take(memory_, steps_, need, config_.fit, have);
    if (block == 0) {
      block = carve(need);
      if (block == 0) [[unlikely]]
        return {};  // the system refused memory
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

  /// Bytes the program may use from `address` (as allocate returned it) to
  /// the end of its block: malloc_usable_size. Reads the block's metadata.
  std::uint64_t usable(Address address) {
    const auto [block, h] = block_of(address);
    return block + BlockHeader::bytes(h) - address;
  }

  /// Releases the block at `address` (as allocate returned it); returns its bytes.
  std::uint64_t release(Address address) {
    const auto [block, h] = block_of(address);
    lists_[BlockHeader::cls(h)].put(memory_, steps_, block, config_.policy);
    return BlockHeader::bytes(h);
  }

  std::uint64_t steps() const noexcept { return steps_; }
  const Classes& classes() const noexcept { return classes_; }
  const SegregatedConfig& config() const noexcept { return config_; }
  const FreeList& list(std::uint32_t c) const noexcept { return lists_[c]; }
  M& memory() noexcept { return memory_; }
  const M& memory() const noexcept { return memory_; }

 private:
  // The block behind the data address allocate returned, and its header word
  // (an alignment word followed).
  std::pair<Address, std::uint64_t> block_of(Address address) {
    std::uint64_t h = memory_.load(address - kHeader);
    Address block = address - kHeader;
    if (h & 1) {
      block -= h & ~std::uint64_t{1};
      h = memory_.load(block);
    }
    return {block, h};
  }

  // A block of `bytes` at the bump pointer, or 0 if the system refuses memory.
  Address carve(std::uint64_t bytes) {
    ++steps_;
    if (end_ - bump_ < bytes) [[unlikely]] {
      ++steps_;
      const std::uint64_t amount = (bytes + kHeader + config_.chunk - 1) & ~(config_.chunk - 1);
      const Address region = memory_.obtain(amount, kMinAlignment);
      if (region == 0) return 0;
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
  Classes classes_;
  SegregatedConfig config_;
  FixedArray<FreeList, typename M::Arena> lists_;
  std::uint64_t steps_ = 0;
  Address bump_ = 0, end_ = 0;
  bool ok_ = false;
};

/// S10: the DMM simulator paper's ten segregated free lists (see the top of this file).
template <Arena A>
bool assign_s10_classes(SizeClasses<A>& classes) {
  return classes.assign_powers_of_two(4, 12, true);
}
inline SegregatedConfig s10_config(std::uint64_t page_size = 4096) {
  return {Fit::kFirst, Policy::kLifo, false, page_size};
}

/// EXA: one strict class per size in sizes[0..n) (as segregated_size computes them), FIFO.
template <Arena A>
bool assign_exa_classes(SizeClasses<A>& classes, const std::uint64_t* sizes, std::size_t n) {
  return classes.assign_exact(sizes, n);
}
inline SegregatedConfig exa_config(std::uint64_t page_size = 4096) {
  return {Fit::kExact, Policy::kFifo, true, page_size};
}

}  // namespace tailor::dmm
