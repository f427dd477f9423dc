// SPDX-License-Identifier: MIT
// Kingsley (4.4BSD malloc by Chris Kingsley) as a mechanism over the Memory
// concept (memory.h), faithful to ../../../shared/docs/field-notes.md and to
// the 4.4BSD source's rules:
//  - 30 buckets; bucket i holds blocks of 2^(i+3) bytes; blocks of a page or
//    more (bucket >= pagebucket = log2(page) - 3) carry one extra page
//    (morecore obtains size + page for them), so a request n goes to
//      n <= page - 8: the smallest i with 2^(i+3) - 8 >= n,
//      n >  page - 8: the smallest i >= pagebucket with 2^(i+3) + page - 8 >= n;
//    a request of 0 bytes is served as 1 byte (a unique, freeable pointer);
//  - an 8-byte header before the data holds the bucket index while the block
//    is allocated and the free-list link while it is free (LIFO lists);
//  - refill (morecore) of an empty bucket below a page takes one page and cuts
//    it into blocks of the bucket; otherwise size + page for one block;
//  - no split, no coalesce, memory never returned;
//  - on first use the break is moved so that break + 8 is page-aligned (one
//    system request of page - 8 bytes): every block's data is then aligned to
//    min(block size, page), hence to 16 bytes for every bucket a request can
//    reach (kMinAlignment). This needs sbrk-like contiguous memory: each
//    obtain() asks for alignment 8 only.
// Aligned calls (memalign & co., which 4.4BSD lacked): an alignment of at most
// a page is met by using a bucket whose blocks are at least that large; a
// larger one by asking for n + alignment - page bytes and returning the first
// aligned address in the block, with a second header word before it that
// holds the bucket index and the distance back to the real data start.
//
// Time complexity, in abstract steps as the DMM simulator paper counts them (one per list
// operation and per loop iteration; constant-time arithmetic such as picking
// the bucket is free):
//   allocate: 1 (pop) + on an empty bucket 1 (system request) + nblocks - 1
//             (the refill loop links nblocks - 1 blocks) + on first use 1
//             (the alignment request);
//   release:  1 (push).
// Memory accesses are the loads and stores this class makes on the Memory
// (the 30 list heads are the allocator's own static state and not counted):
//   pop = 1 read (the head's link) + 1 write (the header; + 1 for the second
//   header of an over-page alignment); refill = nblocks - 1 writes (the last
//   block's link is fresh zero memory); release = 1 read (header) + 1 write (link).
#pragma once

#include <array>
#include <bit>
#include <cstdint>

#include "dmm/allocator.h"
#include "dmm/assert.h"
#include "dmm/memory.h"

namespace tailor::dmm {

template <Memory M>
class Kingsley {
 public:
  static constexpr MechanismKind kKind = MechanismKind::kKingsley;
  static constexpr unsigned kBuckets = 30;
  static constexpr std::uint64_t kHeader = 8;
  static constexpr std::uint64_t kMinAlignment = 16;

  /// Why Kingsley cannot run with this page size, or nullptr if it can.
  static const char* check(std::uint64_t page_size) noexcept {
    return page_size < 64 || !std::has_single_bit(page_size) ? "Kingsley: the page size is not a power of two >= 64"
                                                             : nullptr;
  }

  /// `page_size` must pass check().
  explicit Kingsley(M& memory, std::uint64_t page_size = 4096)
      : memory_(memory), page_(page_size), page_bucket_(static_cast<unsigned>(std::countr_zero(page_size)) - 3) {}

  /// Bucket serving a request of `bytes` (no alignment), or kBuckets if none can.
  unsigned bucket_for(std::uint64_t bytes) const noexcept {
    if (bytes == 0) bytes = 1;
    if (bytes <= page_ - kHeader) return ceil_log2(bytes + kHeader) - 3;
    if (bytes - page_ + kHeader > (std::uint64_t{1} << (kBuckets + 2))) return kBuckets;
    const unsigned i = ceil_log2(bytes - page_ + kHeader);
    return i > page_bucket_ + 3 ? i - 3 : page_bucket_;
  }

  /// Bytes of one block of bucket i (the extra page of big blocks included).
  std::uint64_t block_bytes(unsigned bucket) const noexcept {
    const std::uint64_t size = std::uint64_t{1} << (bucket + 3);
    return size >= page_ ? size + page_ : size;
  }

  Block allocate(std::uint64_t bytes, std::uint64_t alignment = 0) {
    std::uint64_t extra = 0;  // room for an over-page alignment
    unsigned bucket;
    if (alignment <= kMinAlignment) [[likely]] {
      bucket = bucket_for(bytes);
    } else if (alignment <= page_) {
      bucket = bucket_for(bytes);
      const unsigned need = static_cast<unsigned>(std::countr_zero(alignment)) - 3;
      if (need > bucket) bucket = need;
    } else {
      extra = alignment - page_;
      bucket = bytes > UINT64_MAX - extra ? kBuckets : bucket_for(bytes + extra);
    }
    if (bucket >= kBuckets) [[unlikely]]
      return {};  // no bucket holds the request
    Address block = heads_[bucket];
    if (block == 0) [[unlikely]] {
      if (!refill(bucket)) return {};
      block = heads_[bucket];
    }
    ++steps_;
    heads_[bucket] = memory_.load(block);
    memory_.store(block, bucket);
    Address data = block + kHeader;
    if (extra) {
      const Address aligned = (data + alignment - 1) & ~(alignment - 1);
      if (aligned != data) memory_.store(aligned - kHeader, bucket | (aligned - data) << 8);
      data = aligned;
    }
    TAILOR_ASSERT(alignment <= 1 || (data & (alignment - 1)) == 0);
    return {data, block_bytes(bucket)};
  }

  /// Bytes the program may use from `address` (as allocate returned it) to
  /// the end of its block: malloc_usable_size. Reads the block's metadata.
  std::uint64_t usable(Address address) {
    const std::uint64_t header = memory_.load(address - kHeader);
    const unsigned bucket = static_cast<unsigned>(header & 0xff);
    const Address block = address - kHeader - (header >> 8);
    return block + block_bytes(bucket) - address;
  }

  /// Releases the block at `address` (as allocate returned it); returns its block bytes.
  std::uint64_t release(Address address) {
    const std::uint64_t header = memory_.load(address - kHeader);
    const unsigned bucket = static_cast<unsigned>(header & 0xff);
    const Address block = address - kHeader - (header >> 8);
    TAILOR_ASSERT(bucket < kBuckets && block < address);  // a header this allocator wrote
    ++steps_;
    memory_.store(block, heads_[bucket]);
    heads_[bucket] = block;
    return block_bytes(bucket);
  }

  std::uint64_t steps() const noexcept { return steps_; }
  M& memory() noexcept { return memory_; }
  const M& memory() const noexcept { return memory_; }

 private:
  static unsigned ceil_log2(std::uint64_t x) noexcept { return static_cast<unsigned>(std::bit_width(x - 1)); }

  // Fills an empty bucket; false if the system refuses memory.
  bool refill(unsigned bucket) {
    if (!started_) {
      ++steps_;
      if (memory_.obtain(page_ - kHeader, 8) == 0) return false;
      started_ = true;
    }
    const std::uint64_t size = std::uint64_t{1} << (bucket + 3);
    const std::uint64_t amount = size < page_ ? page_ : size + page_;
    const std::uint64_t blocks = size < page_ ? page_ / size : 1;
    ++steps_;
    const Address start = memory_.obtain(amount, 8);
    if (start == 0) return false;
    heads_[bucket] = start;
    Address block = start;
    for (std::uint64_t k = 1; k < blocks; ++k, block += size) {
      ++steps_;
      memory_.store(block, block + size);
    }
    return true;
  }

  M& memory_;
  std::uint64_t page_;
  unsigned page_bucket_;
  bool started_ = false;
  std::uint64_t steps_ = 0;
  std::array<Address, kBuckets> heads_{};
};

}  // namespace tailor::dmm
