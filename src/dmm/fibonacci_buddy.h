// SPDX-License-Identifier: MIT
// Fibonacci buddy (FIB; Hirschberg 1973, Cranston and Thomas 1975) as a
// mechanism over the Memory concept (memory.h), after
// ../../../shared/docs/field-notes.md:
//  - block sizes F_i = 16 u_i bytes with u_0 = 2, u_1 = 3, u_i = u_{i-1} +
//    u_{i-2} (32, 48, 80, 128, 208, 336, 544, 880, 1424, 2304, 3728, ...): the
//    smallest block is 32 bytes (a free block holds its header word and two
//    links), and every block starts 16-aligned (kMinAlignment);
//  - a block of index i >= 2 splits into a left child of index i - 1 (lower
//    address) and a right child of index i - 2; blocks of index 0 and 1 do not
//    split. A left block of index i at a has its buddy at a + F_i (index
//    i - 1); a right block of index i at a has its buddy at a - F_{i+1}
//    (index i + 1);
//  - address and size cannot tell left from right, so each block's header
//    word keeps a left/right bit (LR) and an inheritance bit (M): on split,
//    left.LR = L, right.LR = R, left.M = parent.LR, right.M = parent.M; on
//    merge, parent.LR = left.M, parent.M = right.M. A fresh chunk has LR = L,
//    M = L (it never merges). Allocated blocks keep their bits in the header;
//  - the header is 16 bytes: the header word (index, free bit, LR, M) padded
//    to 16; a request of n bytes takes the smallest index i with F_i >= n + 16;
//  - one free list per index, doubly linked through the free blocks (as in
//    binary_buddy.h), LIFO;
//  - allocate: take the first non-empty list j >= k. Split down: of the two
//    children of a block of index j, continue with the right one (j - 2) if it
//    is at least k (and is not index 1 while k = 0: index 1 cannot split)
//    and push the left one, else continue with the left one and push the
//    right one; stop at index k (or at index 1 when k = 0 and j = 1). If every
//    list is empty, obtain a fresh chunk of the top index (default 22: F_22 =
//    1,200,400 bytes, the smallest Fibonacci size >= 1 MiB), page-aligned;
//  - release: while the index is below the top, find the buddy through LR,
//    and if its header word says free and of the buddy's index, unlink it and
//    merge (bits as above); then push. Chunks are never returned;
//  - requests with n + 16 > F_top, and aligned calls, are handled exactly as
//    in binary_buddy.h (direct blocks returned on release; indirect word).
//
// Time complexity, in abstract steps as the DMM simulator paper counts them (one per list
// operation and per loop iteration; the index of a size is free):
//   allocate: (j - k + 1) lists examined + 1 (pop, or the system request of a
//             fresh chunk, when j is the top) + 1 per split;
//   release:  1 per merge + 1 (push); direct blocks: 1 (system request).
// Memory accesses (64-bit words loaded and stored through the Memory; list
// heads and the bitmap are not counted): as binary_buddy.h, except that a pop
// also reads the popped block's header (1 more read: its LR and M bits).
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>

#include "dmm/allocator.h"
#include "dmm/binary_buddy.h"
#include "dmm/memory.h"

namespace tailor::dmm {

template <Memory M>
class FibonacciBuddy {
 public:
  static constexpr MechanismKind kKind = MechanismKind::kFibonacciBuddy;
  static constexpr std::uint64_t kHeader = buddy_detail::kHeader;
  static constexpr std::uint64_t kMinAlignment = 16;
  static constexpr std::uint64_t kUnit = 16;
  static constexpr unsigned kDefaultTop = 22;
  static constexpr unsigned kMaxTop = 60;

  /// Why a Fibonacci buddy cannot have these parameters, or nullptr if it can.
  static const char* check(unsigned top_index, std::uint64_t page_size) noexcept {
    if (top_index < 2 || top_index > kMaxTop) return "FibonacciBuddy: the top index is not in 2..60";
    if (page_size < 16 || !std::has_single_bit(page_size)) return "FibonacciBuddy: the page size is not a power of two";
    return nullptr;
  }

  /// The parameters must pass check().
  explicit FibonacciBuddy(M& memory, unsigned top_index = kDefaultTop, std::uint64_t page_size = 4096)
      : memory_(memory), lists_(memory), top_(top_index), page_(page_size) {
    std::uint64_t a = 2, b = 3;
    for (unsigned i = 0; i <= kMaxTop; ++i) {
      sizes_[i] = a * kUnit;
      const std::uint64_t c = a + b;
      a = b;
      b = c;
    }
    for (std::uint64_t u = 0; u < small_.size(); ++u) small_[u] = static_cast<std::uint8_t>(search(u * kUnit));
  }

  /// Bytes of a block of index i (0 <= i <= 60).
  std::uint64_t size(unsigned index) const noexcept { return sizes_[index]; }
  unsigned top_index() const noexcept { return top_; }

  /// Index of the block for a request needing `need` bytes (header included);
  /// top + 1 if it is obtained directly.
  unsigned index_for(std::uint64_t need) const noexcept {
    const std::uint64_t units = (need + kUnit - 1) / kUnit;
    const unsigned i = units < small_.size() ? small_[units] : search(need);
    return i > top_ ? top_ + 1 : i;
  }

  Block allocate(std::uint64_t bytes, std::uint64_t alignment = 0) {
    using namespace buddy_detail;
    const std::uint64_t n = need(bytes, alignment);
    if (n == 0) [[unlikely]]
      return {};
    const unsigned k = index_for(n);
    if (k > top_) [[unlikely]]
      return buddy_detail::allocate_direct(memory_, n, alignment, page_, steps_);
    const std::uint64_t lists = lists_.nonempty() >> k << k;
    Address block;
    unsigned j;
    std::uint64_t bits;  // LR and M of the current block
    if (lists) [[likely]] {
      j = static_cast<unsigned>(std::countr_zero(lists));
      block = lists_.pop(j);
      bits = memory_.load(block) & (kRight | kMemory);
    } else {
      block = memory_.obtain(sizes_[top_], page_);
      if (block == 0) [[unlikely]]
        return {};
      j = top_;
      bits = 0;
    }
    steps_ += j - k + 2;  // lists examined, pop or system request
    while (j > k && j >= 2) {
      ++steps_;
      ++splits_;
      const std::uint64_t left_bits = (bits & kRight) ? kMemory : 0;  // LR = L, M = parent.LR
      const std::uint64_t right_bits = kRight | (bits & kMemory);      // LR = R, M = parent.M
      const Address right = block + sizes_[j - 1];
      if (j - 2 >= k && !(j == 3 && k == 0)) {
        lists_.push(j - 1, block, kFree | (j - 1) | left_bits);
        block = right;
        bits = right_bits;
        j -= 2;
      } else {
        lists_.push(j - 2, right, kFree | (j - 2) | right_bits);
        bits = left_bits;
        j -= 1;
      }
    }
    memory_.store(block, j | bits);
    return {place(memory_, block, alignment), sizes_[j]};
  }

  /// Bytes the program may use from `address` (as allocate returned it) to
  /// the end of its block: malloc_usable_size. Reads the block's metadata.
  std::uint64_t usable(Address address) {
    using namespace buddy_detail;
    const Placed p = block_of(memory_, address);
    return buddy_detail::usable(address, p, sizes_[p.header & kOrderMask]);
  }

  /// Releases the block at `address` (as allocate returned it); returns its block bytes.
  std::uint64_t release(Address address) {
    using namespace buddy_detail;
    auto [block, header] = block_of(memory_, address);
    if (const std::uint64_t bytes = release_direct(memory_, {block, header}, steps_)) [[unlikely]]
      return bytes;
    const unsigned index = static_cast<unsigned>(header & kOrderMask);
    unsigned i = index;
    std::uint64_t bits = header & (kRight | kMemory);
    ++steps_;  // the push
    while (coalesce_ && i < top_) {
      if (!(bits & kRight)) {  // a left block: its buddy is the right one above, index i - 1
        const Address buddy = block + sizes_[i];
        const std::uint64_t b = memory_.load(buddy);
        if ((b & (kFree | kOrderMask)) != (kFree | (i - 1))) break;
        lists_.unlink(i - 1, buddy);
        bits = ((bits & kMemory) ? kRight : 0) | (b & kMemory);  // parent.LR = left.M, parent.M = right.M
        i += 1;
      } else {  // a right block: its buddy is the left one below, index i + 1
        const Address buddy = block - sizes_[i + 1];
        const std::uint64_t b = memory_.load(buddy);
        if ((b & (kFree | kOrderMask)) != (kFree | (i + 1))) break;
        lists_.unlink(i + 1, buddy);
        bits = ((b & kMemory) ? kRight : 0) | (bits & kMemory);
        block = buddy;
        i += 2;
      }
      ++steps_;
      ++coalesces_;
    }
    lists_.push(i, block, kFree | i | bits);
    return sizes_[index];
  }

  /// Turns merging off (the DMM simulator paper's buddy systems with coalesce = false):
  /// a released block stays on its own order's list.
  void set_coalesce(bool on) noexcept { coalesce_ = on; }
  /// A buddy splits blocks and gives whole chunks back.
  bool merges() const noexcept { return true; }

  std::uint64_t steps() const noexcept { return steps_; }
  std::uint64_t splits() const noexcept { return splits_; }
  std::uint64_t coalesces() const noexcept { return coalesces_; }
  M& memory() noexcept { return memory_; }
  const M& memory() const noexcept { return memory_; }

  /// A free block as the lists hold it: start, index, LR and M bits.
  struct FreeBlock {
    Address address = 0;
    unsigned index = 0;
    bool right = false;
    bool memory = false;
  };
  /// Calls f(FreeBlock) for every free block. For tests: it walks the lists
  /// and reads the headers through the memory, so its reads count.
  template <class F>
  void each_free(F&& f) {
    lists_.each([&](Address b, unsigned i) {
      const std::uint64_t h = memory_.load(b);
      f(FreeBlock{b, i, (h & buddy_detail::kRight) != 0, (h & buddy_detail::kMemory) != 0});
    });
  }

 private:
  unsigned search(std::uint64_t need) const noexcept {
    return static_cast<unsigned>(std::lower_bound(sizes_.begin(), sizes_.end(), need) - sizes_.begin());
  }

  M& memory_;
  buddy_detail::FreeLists<M, kMaxTop + 1> lists_;
  unsigned top_;
  std::uint64_t page_;
  std::array<std::uint64_t, kMaxTop + 1> sizes_{};
  std::array<std::uint8_t, 1025> small_{};  // index for each need of up to 16 KiB, by 16-byte units
  bool coalesce_ = true;
  std::uint64_t steps_ = 0, splits_ = 0, coalesces_ = 0;
};

}  // namespace tailor::dmm
