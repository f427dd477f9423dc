// SPDX-License-Identifier: MIT
// A singly linked free list of blocks over the Memory concept (memory.h),
// with a fit (first, best, exact) and a policy (LIFO, FIFO), for the
// segregated mechanisms (segregated_lists.h) and the DMM model to come.
//
// Block layout (shared with segregated_lists.h): a block starts with one
// header word, BlockHeader: its bytes (a multiple of 16, header included) and
// its class index; the header never changes while the block exists (no
// splitting or coalescing). A free block's link (the next free block, 0 at
// the end) is the word after the header, so the smallest block is 16 bytes.
//
// The list's head and tail are the owner's static state (like Kingsley's
// bucket heads) and not memory accesses. Policy: LIFO pushes at the head,
// FIFO at the tail; both take from the head side, so a search meets the most
// recently freed block first under LIFO and the oldest first under FIFO.
//
// Counting, as the DMM simulator paper counts (one step per loop iteration of a search and
// per list operation; accesses are the loads and stores made on the Memory):
//   take: 1 step per block examined; examining a block reads its link (1
//         read) and, unless the list is uniform (all its blocks one size, so
//         the head always fits), its header (1 read): the DMM simulator paper's "2 accesses
//         per iteration". Unlinking a block that is not the head writes its
//         predecessor's link (1 write). First fit stops at the first block
//         large enough, exact fit at the first of exactly the size, best fit
//         at an exact size or at the end of the list. A miss costs the blocks
//         examined (0 on an empty list).
//   put:  1 step; LIFO writes the block's link (1 write); FIFO writes the
//         block's link (0) and, if the list was not empty, the old tail's link
//         (2 writes, or 1).
#pragma once

#include <cstdint>

#include "dmm/memory.h"

namespace tailor::dmm {

/// The DMM simulator paper's allocation mechanisms; FreeList (below) implements the first
/// three, FreeBlocks (free_blocks.h) all four.
enum class Fit : std::uint8_t { kFirst, kBest, kExact, kFarthest };
enum class Policy : std::uint8_t { kLifo, kFifo };

inline const char* to_string(Fit f) noexcept {
  return f == Fit::kFirst ? "first" : f == Fit::kBest ? "best" : f == Fit::kExact ? "exact" : "farthest";
}
inline const char* to_string(Policy p) noexcept { return p == Policy::kLifo ? "LIFO" : "FIFO"; }

/// The header word at the start of every block: bytes in bits 4..39 (a
/// multiple of 16, so its low 4 bits are 0), class index in bits 40..63.
/// Bit 0 set marks instead an alignment word (see segregated_lists.h).
struct BlockHeader {
  static constexpr std::uint64_t kMaxBytes = (std::uint64_t{1} << 40) - 16;
  static constexpr std::uint64_t kMaxClass = (std::uint64_t{1} << 24) - 1;
  static constexpr std::uint64_t make(std::uint64_t bytes, std::uint64_t cls) noexcept { return bytes | cls << 40; }
  static constexpr std::uint64_t bytes(std::uint64_t h) noexcept { return h & ((std::uint64_t{1} << 40) - 1); }
  static constexpr std::uint32_t cls(std::uint64_t h) noexcept { return static_cast<std::uint32_t>(h >> 40); }
  static constexpr Address link(Address block) noexcept { return block + 8; }
};

struct FreeList {
  Address head = 0;
  Address tail = 0;      // last block (FIFO pushes after it); valid only while head != 0
  bool uniform = false;  // every block on the list has the same bytes: the head always fits

  /// Removes and returns a free block of at least `bytes` (exactly `bytes`
  /// for Fit::kExact) chosen by `fit`, or 0 if none; sets `got` to its bytes
  /// (on a uniform list, to `bytes`: the owner keeps that one size on it).
  /// Adds to `steps`.
  template <Memory M>
  Address take(M& memory, std::uint64_t& steps, std::uint64_t bytes, Fit fit, std::uint64_t& got) {
    got = bytes;
    if (head == 0) return 0;
    if (uniform) {
      ++steps;
      const Address block = head;
      head = memory.load(BlockHeader::link(block));
      return block;
    }
    Address prev = 0, block = head;
    Address best = 0, best_prev = 0, best_next = 0;
    std::uint64_t best_bytes = UINT64_MAX;
    while (block != 0) {
      ++steps;
      const std::uint64_t have = BlockHeader::bytes(memory.load(block));
      const Address next = memory.load(BlockHeader::link(block));
      const bool fits = fit == Fit::kExact ? have == bytes : have >= bytes;
      if (fits && (fit != Fit::kBest || have < best_bytes)) {
        best = block, best_prev = prev, best_next = next, best_bytes = have;
        if (fit != Fit::kBest || have == bytes) break;
      }
      prev = block;
      block = next;
    }
    if (best != 0) {
      unlink(memory, best_prev, best, best_next);
      got = best_bytes;
    }
    return best;
  }

  /// Puts a free block on the list by `policy`. Adds 1 to `steps`.
  template <Memory M>
  void put(M& memory, std::uint64_t& steps, Address block, Policy policy) {
    ++steps;
    if (policy == Policy::kLifo) {
      memory.store(BlockHeader::link(block), head);
      if (head == 0) tail = block;
      head = block;
    } else {
      memory.store(BlockHeader::link(block), 0);
      if (head == 0)
        head = block;
      else
        memory.store(BlockHeader::link(tail), block);
      tail = block;
    }
  }

 private:
  template <Memory M>
  void unlink(M& memory, Address prev, Address block, Address next) {
    if (prev == 0)
      head = next;
    else
      memory.store(BlockHeader::link(prev), next);
    if (block == tail) tail = prev;
  }
};

}  // namespace tailor::dmm
