// SPDX-License-Identifier: MIT
// Binary buddy ("buddy") as a mechanism over the Memory concept (memory.h),
// after ../../../shared/docs/field-notes.md (Knuth's binary buddy):
//  - blocks of 2^k bytes, kMinOrder (5: 32 bytes) <= k <= max order (default
//    20: 1 MiB); a block of order k lies at an offset aligned to 2^k inside
//    its chunk, and its buddy is at offset x XOR 2^k;
//  - a 16-byte header before the data: one metadata word (the order, a free
//    bit) padded to 16 so that the data of every block is 16-aligned
//    (kMinAlignment). A request of n bytes needs n + 16 bytes, so it takes the
//    smallest order k >= kMinOrder with 2^k >= n + 16 (0 bytes: 32-byte block);
//  - one free list per order, doubly linked through the free block (word 0
//    header, word 1 next, word 2 prev: 24 bytes, hence the 32-byte minimum),
//    LIFO; the list heads and a bitmap of the non-empty lists are the
//    allocator's own state;
//  - allocate: take the first non-empty list j >= k; split j - k times, the
//    upper halves going to the (empty) lists j - 1 .. k; if every list is
//    empty, obtain a fresh chunk of 2^max bytes (aligned to 2^max, so that
//    "XOR relative to the arena base" is a plain XOR of addresses) and split it;
//  - release: while the order is below max and the buddy is free and of the
//    same order (its header word equals free | k), unlink the buddy and merge;
//    then push the result. Chunks are never returned to the system;
//  - requests with n + 16 > 2^max bytes are obtained directly from the system
//    (rounded up to a page, page-aligned), marked "direct" in the header word
//    (with their size), and returned to the system when released;
//  - aligned calls (alignment A > 16): the block must hold n + A bytes; the
//    data is the first A-aligned address at or after block + 16; when that is
//    not block + 16, the word 16 bytes before the data holds "indirect" and
//    the distance back to the block (one more write; release reads it first).
//
// Time complexity, in abstract steps as the DMM simulator paper counts them (one per list
// operation and per loop iteration; constant-time arithmetic such as the
// order of a size is free):
//   allocate: (j - k + 1) lists examined + 1 (pop) + (j - k) splits (one per
//             split loop iteration: halve, push the upper half);
//             with every list empty: (max - k + 1) lists examined + 1 (system
//             request) + (max - k) splits; direct: 1 (system request);
//   release:  1 per merge (loop iteration: unlink the buddy, combine) + 1 (push);
//             direct: 1 (system request).
// Memory accesses are the 64-bit words this class loads and stores through
// the Memory (list heads and the bitmap are not counted):
//   pop = 1 read (the head's next); push = 2 writes (header, next) + 1 write
//   (the old head's prev) if the list was not empty; unlink = 1 read (next) if
//   the block is the head, else 2 reads (next, prev) + 1 write (prev's next)
//   + 1 write (next's prev) if there is a next;
//   allocate = the pop + one push per split + 1 write (the header) [+ 1
//   write: the indirect word]; release = 1 read (header) [+ 1: the indirect
//   word] + per buddy examined 1 read (its header) + per merge one unlink +
//   the push. Direct: 1 write on allocate, 1 read on release.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>

#include "dmm/allocator.h"
#include "dmm/assert.h"
#include "dmm/memory.h"

namespace tailor::dmm {

namespace buddy_detail {

// The header word (shared with fibonacci_buddy.h).
inline constexpr std::uint64_t kOrderMask = 0xff;        // order (binary) or Fibonacci index
inline constexpr std::uint64_t kFree = 1u << 8;          // on a free list
inline constexpr std::uint64_t kRight = 1u << 9;         // FIB: LR bit, set for a right child
inline constexpr std::uint64_t kMemory = 1u << 10;       // FIB: inheritance (M) bit
inline constexpr std::uint64_t kDirect = 1u << 11;       // obtained directly; payload = bytes
inline constexpr std::uint64_t kIndirect = 1u << 12;     // alignment word; payload = data - block
inline constexpr unsigned kPayloadShift = 16;
inline constexpr std::uint64_t kHeader = 16;

/// Doubly linked LIFO free lists, one per order, through the free blocks:
/// word 0 the header, word 1 next, word 2 prev (the head's prev is never read:
/// a block is known to be the head by comparing it with the head pointer).
template <Memory M, unsigned N>
class FreeLists {
 public:
  explicit FreeLists(M& memory) : memory_(memory) {}

  bool empty(unsigned order) const noexcept { return heads_[order] == 0; }
  /// Bitmap of the non-empty lists.
  std::uint64_t nonempty() const noexcept { return nonempty_; }

  void push(unsigned order, Address block, std::uint64_t header) {
    const Address head = heads_[order];
    memory_.store(block, header);
    memory_.store(block + 8, head);
    if (head) memory_.store(head + 16, block);
    heads_[order] = block;
    nonempty_ |= std::uint64_t{1} << order;
  }

  Address pop(unsigned order) {
    const Address block = heads_[order];
    const Address next = memory_.load(block + 8);
    heads_[order] = next;
    if (!next) nonempty_ &= ~(std::uint64_t{1} << order);
    return block;
  }

  void unlink(unsigned order, Address block) {
    const Address next = memory_.load(block + 8);
    if (heads_[order] == block) {
      heads_[order] = next;
      if (!next) nonempty_ &= ~(std::uint64_t{1} << order);
      return;
    }
    const Address prev = memory_.load(block + 16);
    memory_.store(prev + 8, next);
    if (next) memory_.store(next + 16, prev);
  }

  /// Every free block as {address of the block, order}; for tests (its reads count).
  template <class F>
  void each(F&& f) {
    for (unsigned o = 0; o < N; ++o)
      for (Address b = heads_[o]; b; b = memory_.load(b + 8)) f(b, o);
  }

 private:
  M& memory_;
  std::array<Address, N> heads_{};
  std::uint64_t nonempty_ = 0;
};

/// Where the data of a block goes for an alignment (0 or <= 16: block + 16);
/// writes the indirect word when the data is not at block + 16.
template <Memory M>
Address place(M& memory, Address block, std::uint64_t alignment) {
  const Address data = block + kHeader;
  if (alignment <= kHeader) return data;
  const Address aligned = (data + alignment - 1) & ~(alignment - 1);
  if (aligned != data) memory.store(aligned - kHeader, kIndirect | (aligned - block) << kPayloadShift);
  return aligned;
}

/// The inverse of place(): the block behind the data address allocate
/// returned, and that block's header word (an aligned request's indirect
/// word is followed back to the block).
struct Placed {
  Address block;
  std::uint64_t header;
};
template <Memory M>
Placed block_of(M& memory, Address data) {
  Address block = data - kHeader;
  std::uint64_t header = memory.load(block);
  if (header & kIndirect) {
    block = data - (header >> kPayloadShift);
    header = memory.load(block);
  }
  return {block, header};
}

/// Bytes a request needs in its block (header and alignment slack
/// included), or 0 if no block can be that large.
inline std::uint64_t need(std::uint64_t bytes, std::uint64_t alignment) noexcept {
  if (bytes > (std::uint64_t{1} << 46) || alignment > (std::uint64_t{1} << 40)) return 0;
  return bytes + (alignment > kHeader ? alignment : kHeader);
}

/// Requests beyond the largest block come straight from the memory, in
/// whole pages, with a kDirect header; their release returns them to it.
template <Memory M>
Block allocate_direct(M& memory, std::uint64_t need, std::uint64_t alignment, std::uint64_t page,
                      std::uint64_t& steps) {
  const std::uint64_t bytes = (need + page - 1) & ~(page - 1);
  ++steps;
  const Address block = memory.obtain(bytes, std::max(page, alignment));
  if (block == 0) [[unlikely]]
    return {};
  memory.store(block, kDirect | bytes << kPayloadShift);
  return {place(memory, block, alignment), bytes};
}

/// Releases `p` if it was obtained directly: its bytes, or 0 for a buddy block.
template <Memory M>
std::uint64_t release_direct(M& memory, Placed p, std::uint64_t& steps) {
  if (!(p.header & kDirect)) [[likely]]
    return 0;
  const std::uint64_t bytes = p.header >> kPayloadShift;
  ++steps;
  memory.release(p.block, bytes);
  return bytes;
}

/// malloc_usable_size of `data` in `p`, a buddy block of `order_bytes` unless obtained directly.
inline std::uint64_t usable(Address data, Placed p, std::uint64_t order_bytes) noexcept {
  return p.block + (p.header & kDirect ? p.header >> kPayloadShift : order_bytes) - data;
}

}  // namespace buddy_detail

template <Memory M>
class BinaryBuddy {
 public:
  static constexpr MechanismKind kKind = MechanismKind::kBinaryBuddy;
  static constexpr std::uint64_t kHeader = buddy_detail::kHeader;
  static constexpr std::uint64_t kMinAlignment = 16;
  static constexpr unsigned kMinOrder = 5;
  static constexpr unsigned kDefaultMaxOrder = 20;

  /// Why a binary buddy cannot have these parameters, or nullptr if it can.
  static const char* check(unsigned max_order, std::uint64_t page_size) noexcept {
    if (max_order <= kMinOrder || max_order > 40) return "BinaryBuddy: the max order is not in 6..40";
    if (page_size < 16 || !std::has_single_bit(page_size)) return "BinaryBuddy: the page size is not a power of two";
    return nullptr;
  }

  /// The parameters must pass check().
  explicit BinaryBuddy(M& memory, unsigned max_order = kDefaultMaxOrder, std::uint64_t page_size = 4096)
      : memory_(memory), lists_(memory), max_(max_order), page_(page_size) {}

  /// Order of the block for a request needing `need` bytes (header included);
  /// max order + 1 if it is obtained directly.
  unsigned order_for(std::uint64_t need) const noexcept {
    const unsigned k = std::max<unsigned>(kMinOrder, static_cast<unsigned>(std::bit_width(need - 1)));
    return k > max_ ? max_ + 1 : k;
  }
  unsigned max_order() const noexcept { return max_; }

  Block allocate(std::uint64_t bytes, std::uint64_t alignment = 0) {
    using namespace buddy_detail;
    const std::uint64_t n = need(bytes, alignment);
    if (n == 0) [[unlikely]]
      return {};
    const unsigned k = order_for(n);
    if (k > max_) [[unlikely]]
      return buddy_detail::allocate_direct(memory_, n, alignment, page_, steps_);
    const std::uint64_t lists = lists_.nonempty() >> k << k;
    Address block;
    unsigned j;
    if (lists) [[likely]] {
      j = static_cast<unsigned>(std::countr_zero(lists));
      steps_ += j - k + 2;  // lists examined, pop
      block = lists_.pop(j);
    } else {
      block = memory_.obtain(std::uint64_t{1} << max_, std::uint64_t{1} << max_);
      if (block == 0) [[unlikely]]
        return {};
      j = max_;
      steps_ += j - k + 2;  // lists examined, system request
    }
    steps_ += j - k;
    splits_ += j - k;
    while (j > k) {
      --j;
      lists_.push(j, block + (std::uint64_t{1} << j), kFree | j);
    }
    TAILOR_ASSERT((block & ((std::uint64_t{1} << k) - 1)) == 0);  // a block of order k is aligned to its size
    memory_.store(block, k);
    return {place(memory_, block, alignment), std::uint64_t{1} << k};
  }

  /// Bytes the program may use from `address` (as allocate returned it) to
  /// the end of its block: malloc_usable_size. Reads the block's metadata.
  std::uint64_t usable(Address address) {
    using namespace buddy_detail;
    const Placed p = block_of(memory_, address);
    return buddy_detail::usable(address, p, std::uint64_t{1} << (p.header & kOrderMask));
  }

  /// Releases the block at `address` (as allocate returned it); returns its block bytes.
  std::uint64_t release(Address address) {
    using namespace buddy_detail;
    auto [block, header] = block_of(memory_, address);
    if (const std::uint64_t bytes = release_direct(memory_, {block, header}, steps_)) [[unlikely]]
      return bytes;
    const unsigned order = static_cast<unsigned>(header & kOrderMask);
    TAILOR_ASSERT(order >= kMinOrder && order <= max_ && (block & ((std::uint64_t{1} << order) - 1)) == 0);
    unsigned k = order;
    ++steps_;  // the push
    while (coalesce_ && k < max_) {
      const std::uint64_t half = std::uint64_t{1} << k;
      const Address buddy = block ^ half;
      if (memory_.load(buddy) != (kFree | k)) break;
      lists_.unlink(k, buddy);
      block &= ~half;
      ++k;
      ++steps_;
      ++coalesces_;
    }
    lists_.push(k, block, kFree | k);
    return std::uint64_t{1} << order;
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

  /// Calls f(block start, bytes) for every free block. For tests: it walks
  /// the lists through the memory, so its reads count.
  template <class F>
  void each_free(F&& f) {
    lists_.each([&](Address b, unsigned o) { f(b, std::uint64_t{1} << o); });
  }

 private:
  M& memory_;
  buddy_detail::FreeLists<M, 41> lists_;
  unsigned max_;
  std::uint64_t page_;
  bool coalesce_ = true;
  std::uint64_t steps_ = 0, splits_ = 0, coalesces_ = 0;
};

}  // namespace tailor::dmm
