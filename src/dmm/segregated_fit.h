// SPDX-License-Identifier: MIT
// SegregatedFit: the general list-based mechanism of the DMM model
// (docs/dmm.md, "The model"), over the Memory concept (memory.h). One
// template covers four of the DMM simulator paper's mechanisms by configuration:
//   segregated free lists   one list per class, searched alone;
//   segregated fit          lists by class; when a class has no fit, the next
//                           larger non-empty classes are tried (and the block
//                           split, if splitting is on);
//   exact segregated fit    one class per block size the trace uses, exact fit;
//   strict segregated fit   one block size per list: requests round up to the
//                           class's upper bound; no splitting or coalescing.
//                           (An aligned request whose slack goes past the
//                           last class has one more list, of odd sizes.)
// (Simple segregated storage has no headers and lives in
// simple_segregated_storage.h; the buddy systems in their own files.)
//
// Blocks. A block starts with a header word: its bytes (a multiple of the
// alignment, at least 8) | kUsed (bit 0) | kPrevFree (bit 1, kept only when
// coalescing) | with strict classes, its class + 1 in bits 40 and up. The data starts `header` bytes in; when header > 8 the word
// just before the data is a back pointer ((data - block) << 3 | 4), and an
// aligned request (alignment above the mechanism's) whose data moves writes
// the same back pointer before the moved data; a release reads the word
// before the data and tells the two apart by bit 2. A free block holds its
// list links (free_blocks.h) and, when coalescing, a footer (its bytes) in
// its last word, so that the next block finds its start.
//
// Sizes. A request of n bytes with alignment A has the size
// s = round_up(max(n, 1) + slack, 8), slack = A - alignment when A is larger;
// s selects the class (SizeClasses; a free block goes to the largest class
// whose every request it can serve, see class_of_block); the block
// needs round_up(s + header, alignment) bytes, at least the structure's
// smallest free block (FreeBlocks::min_block), or the class's upper bound's
// block when classes are strict.
//
// System memory. A miss carves the block from the current region by a bump
// pointer. When the region has no room, what is left of it becomes a free
// block (if large enough; with strict classes it stays unused, their lists
// holding one size each) and one system request obtains
// round_up(max(block + 16, chunk), granularity) bytes. The region's last word
// is never carved (a zero word reads as "in use": no coalescing past it).
// When coalescing, a released block that ends at the bump pointer goes back
// into the uncarved rest (dlmalloc's top); nothing past the bump pointer is
// ever read. With `returns` (which needs coalescing), a free block that,
// after coalescing, covers a whole region goes back to the system.
//
// Counting (the DMM simulator paper; free_blocks.h for the list operations): 1 step per list
// examined beyond the first, per carve, per split, per coalesce, and per
// system request; accesses are every load and store on the Memory.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <utility>

#include "dmm/allocator.h"
#include "dmm/fixed_array.h"
#include "dmm/free_blocks.h"
#include "dmm/memory.h"
#include "dmm/region_table.h"
#include "dmm/size_classes.h"

namespace tailor::dmm {

struct SegregatedFitConfig {
  Structure structure = Structure::kSll;
  Fit fit = Fit::kFirst;
  Policy policy = Policy::kLifo;
  bool search_larger = false;   ///< segregated fit: try larger classes on a miss
  bool round_to_class = false;  ///< strict: blocks have their class's upper bound
  bool split = false;
  bool coalesce = false;
  std::uint64_t header = 8;      ///< bytes before the data (multiple of 8, >= 8)
  std::uint64_t alignment = 16;  ///< of the data (power of two, >= 8)
  std::uint64_t chunk = 4096;    ///< least bytes per system request
  std::uint64_t granularity = 4096;  ///< system requests are multiples of it (power of two)
  bool returns = false;          ///< give whole free regions back to the system
};

template <Memory M>
class SegregatedFit {
 public:
  static constexpr MechanismKind kKind = MechanismKind::kSegregatedFit;
  static constexpr std::uint64_t kUsed = 1, kPrevFree = 2, kBackPointer = 4;
  /// What the simulator's checker may assume when no alignment is asked: 8.
  static constexpr std::uint64_t kMinAlignment = 8;
  using Classes = SizeClasses<typename M::Arena>;

  /// Why this configuration cannot make a segregated fit, or nullptr if it can.
  static const char* check(const SegregatedFitConfig& c) noexcept {
    if (c.header < 8 || c.header % 8 != 0) return "SegregatedFit: header must be a multiple of 8, at least 8";
    if (c.alignment < 8 || !std::has_single_bit(c.alignment))
      return "SegregatedFit: alignment must be a power of two >= 8";
    if (!std::has_single_bit(c.granularity) || c.granularity < 16)
      return "SegregatedFit: granularity must be a power of two >= 16";
    if (c.chunk == 0) return "SegregatedFit: chunk must be positive";
    if (c.returns && !c.coalesce) return "SegregatedFit: returning memory needs coalescing";
    if (c.round_to_class && (c.split || c.coalesce)) return "SegregatedFit: strict classes cannot split or coalesce";
    return nullptr;
  }

  /// The configuration must pass check(); ok() says whether the arena held the lists.
  SegregatedFit(M& memory, Classes classes, SegregatedFitConfig config)
      : memory_(memory), classes_(std::move(classes)), config_(config) {
    const auto& c = config_;
    min_block_ = round(FreeBlocks::min_block(c.structure, c.coalesce));
    ok_ = classes_.count() > 0 && lists_.assign(classes_.count() + (config.round_to_class ? 1 : 0));
    for (std::uint32_t k = 0; ok_ && k < lists_.size(); ++k) {
      lists_[k] = FreeBlocks(c.structure, c.fit, c.policy);
      lists_[k].set_uniform(c.round_to_class && k < classes_.count() && classes_.upper(k) != Classes::kOpen);
    }
  }

  bool ok() const noexcept { return ok_; }
  std::size_t state_bytes() const noexcept {
    return classes_.state_bytes() + lists_.size() * sizeof(FreeBlocks) + regions_.state_bytes();
  }

  std::uint64_t min_alignment() const noexcept { return config_.alignment; }

  /// Bytes of the block a request needs (0 if it cannot be served).
  std::uint64_t block_for(std::uint64_t bytes, std::uint64_t alignment, std::uint32_t& cls) const noexcept {
    const std::uint64_t slack = alignment > config_.alignment ? alignment - config_.alignment : 0;
    if (bytes > (std::uint64_t{1} << 46) || slack > (std::uint64_t{1} << 46)) return 0;
    const std::uint64_t s = ((bytes == 0 ? 1 : bytes) + slack + 7) & ~std::uint64_t{7};
    cls = class_of_capacity(s);
    std::uint64_t size = s;
    if (config_.round_to_class && classes_.upper(cls) != Classes::kOpen) {
      if (classes_.upper(cls) >= s)
        size = classes_.upper(cls);
      else  // an aligned request's slack goes past the last class: the list of odd sizes
        cls = classes_.count();
    }
    return std::max(round(size + config_.header), min_block_);
  }

  Block allocate(std::uint64_t bytes, std::uint64_t alignment = 0) {
    std::uint32_t c;
    const std::uint64_t need = block_for(bytes, alignment, c);
    if (need == 0) [[unlikely]]
      return {};  // too large for any block
    std::uint64_t got = 0;
    Address block = lists_[c].take(memory_, steps_, need, hot_, got);
    if (block == 0 && config_.search_larger) {
      for (std::uint32_t d = c + 1; d < classes_.count() && block == 0; ++d) {
        ++steps_;
        if (!lists_[d].empty()) block = lists_[d].take(memory_, steps_, need, hot_, got);
      }
    }
    if (block == 0) {
      block = carve(need);
      if (block == 0) [[unlikely]]
        return {};  // the system refused memory
      got = need;
      memory_.store(block, need | kUsed | tag(c));
    } else if (config_.split && got - need >= min_block_) {
      ++steps_;
      ++splits_;
      put_free(block + need, got - need, 0);  // the next block keeps kPrevFree: the remainder is free
      got = need;
      memory_.store(block, need | kUsed | tag(c));
    } else if (config_.coalesce) {  // mark it in use for its neighbours
      if (block + got != bump_) {
        const std::uint64_t nh = memory_.load(block + got);
        if (nh != 0) memory_.store(block + got, nh & ~kPrevFree);
      }
      memory_.store(block, got | kUsed | tag(c));
    }  // else its header (size, class) is unchanged: nothing to write
    hot_ = block;
    Address data = block + config_.header;
    if (alignment > config_.alignment) data = (data + alignment - 1) & ~(alignment - 1);
    if (data != block + 8) memory_.store(data - 8, (data - block) << 3 | kBackPointer);
    return {data, got};
  }

  /// Bytes the program may use from `address` (as allocate returned it) to
  /// the end of its block: malloc_usable_size. Reads the block's metadata.
  std::uint64_t usable(Address address) {
    const auto [block, w] = block_of(address);
    return block + (w & FreeBlocks::kSizeMask) - address;
  }

  /// Releases the block at `address` (as allocate returned it); returns its bytes.
  std::uint64_t release(Address address) {
    const auto [block, w] = block_of(address);
    const std::uint64_t bytes = w & FreeBlocks::kSizeMask;
    hot_ = block;
    if (!config_.coalesce) {
      const std::uint32_t c = config_.round_to_class ? static_cast<std::uint32_t>(w >> 40) - 1 : class_of_block(bytes);
      lists_[c].put(memory_, steps_, block, bytes);
      return bytes;
    }
    Address start = block;
    std::uint64_t size = bytes;
    const bool last = block + bytes == bump_;  // nothing carved after it yet
    const std::uint64_t nh = last ? 0 : memory_.load(block + bytes);
    if (nh != 0 && !(nh & kUsed)) {  // the next block is free
      ++steps_;
      ++coalesces_;
      const std::uint64_t next_bytes = nh & FreeBlocks::kSizeMask;
      lists_[class_of_block(next_bytes)].remove(memory_, steps_, block + bytes);
      size += next_bytes;
    }
    if (w & kPrevFree) {
      ++steps_;
      ++coalesces_;
      const std::uint64_t prev_bytes = memory_.load(block - 8);
      start = block - prev_bytes;
      lists_[class_of_block(prev_bytes)].remove(memory_, steps_, start);
      size += prev_bytes;
    }
    if (last) {  // back into the uncarved rest of the region (dlmalloc's top)
      ++steps_;
      bump_ = start;
      if (config_.returns && bump_ == region_ + pad()) {
        ++steps_;
        memory_.release(region_, end_ + 8 - region_);
        regions_.erase(regions_.find(region_));
        region_ = bump_ = end_ = 0;
      }
      return bytes;
    }
    if (config_.returns && release_region(start, size)) return bytes;
    put_free(start, size, kPrevFree);
    return bytes;
  }

  std::uint64_t steps() const noexcept { return steps_; }
  std::uint64_t splits() const noexcept { return splits_; }
  std::uint64_t coalesces() const noexcept { return coalesces_; }
  /// Whether a free block may be split, merged or given back (a block the
  /// front of free blocks keeps cannot be).
  bool merges() const noexcept { return config_.split || config_.coalesce || config_.returns; }
  const Classes& classes() const noexcept { return classes_; }
  const SegregatedFitConfig& config() const noexcept { return config_; }

  /// Calls f(address, bytes) for every free block, for tests.
  template <class F>
  void each_free(F&& f) {
    for (const auto& l : lists_) l.each(memory_, [&](Address b) { f(b, memory_.load(b) & FreeBlocks::kSizeMask); });
  }

 private:
  // The block behind the data address allocate returned, and its header word
  // (an aligned request's back pointer followed).
  std::pair<Address, std::uint64_t> block_of(Address address) {
    std::uint64_t w = memory_.load(address - 8);
    Address block = address - 8;
    if (w & kBackPointer) {
      block = address - (w >> 3);
      w = memory_.load(block);
    }
    return {block, w};
  }

  std::uint64_t round(std::uint64_t bytes) const noexcept {
    return (bytes + config_.alignment - 1) & ~(config_.alignment - 1);
  }

  std::uint32_t class_of_capacity(std::uint64_t capacity) const noexcept {
    if (capacity < kSizeWord) capacity = kSizeWord;
    const std::uint32_t c = classes_.class_of(capacity & ~(kSizeWord - 1));
    return c == Classes::kNone ? classes_.count() - 1 : c;
  }
  // Strict classes keep a block's class in its header (bits 40 and up, plus
  // one): several classes may share a block size, and a block goes back to
  // the list it was carved for.
  std::uint64_t tag(std::uint32_t c) const noexcept {
    return config_.round_to_class ? static_cast<std::uint64_t>(c + 1) << 40 : 0;
  }

  // A free block goes to the list of the largest class all of whose requests
  // it can serve (its capacity, bytes - header, reaches the class's upper
  // bound), so that any block on a request's own list fits it; the open last
  // class keeps whatever is larger than the bounded ones.
  std::uint32_t class_of_block(std::uint64_t bytes) const noexcept {
    const std::uint64_t capacity = bytes > config_.header ? bytes - config_.header : 0;
    const std::uint32_t c = class_of_capacity(capacity);
    const std::uint64_t up = classes_.upper(c);
    return up != Classes::kOpen && up > capacity && c > 0 ? c - 1 : c;
  }

  // Marks [block, block + bytes) free (header, footer when coalescing; the
  // next block's kPrevFree when `mark_next`) and puts it on its list.
  void put_free(Address block, std::uint64_t bytes, std::uint64_t mark_next) {
    memory_.store(block, bytes);
    if (config_.coalesce) {
      memory_.store(block + bytes - 8, bytes);
      if (mark_next && block + bytes != bump_) {
        const std::uint64_t nh = memory_.load(block + bytes);
        if (nh != 0) memory_.store(block + bytes, nh | kPrevFree);
      }
    }
    lists_[class_of_block(bytes)].put(memory_, steps_, block, bytes);
  }

  // A block of `bytes` at the bump pointer, or 0 if the system refuses memory.
  Address carve(std::uint64_t bytes) {
    ++steps_;
    if (end_ - bump_ < bytes) [[unlikely]] {
      ++steps_;
      const std::uint64_t want = std::max(bytes + pad() + 8, config_.chunk);
      const std::uint64_t amount = (want + config_.granularity - 1) & ~(config_.granularity - 1);
      const Address region = memory_.obtain(amount, std::max<std::uint64_t>(config_.alignment, 16));
      if (region == 0) return 0;
      if (!regions_.insert(region, amount)) {  // no room to record it
        memory_.release(region, amount);
        return 0;
      }
      if (end_ - bump_ >= min_block_ && !config_.round_to_class)  // strict lists hold only their own size
        put_free(bump_, end_ - bump_, 0);
      else if (config_.coalesce && end_ > bump_)
        memory_.store(bump_, kUsed);  // what is left reads as in use
      region_ = region;
      bump_ = region + pad();
      end_ = region + amount - 8;  // the last word stays zero: a fence
    }
    const Address block = bump_;
    bump_ += bytes;
    return block;
  }

  // Bytes before a region's first block, so that its data is aligned.
  std::uint64_t pad() const noexcept {
    return (config_.alignment - config_.header % config_.alignment) % config_.alignment;
  }

  // Gives a region other than the current one back to the system if
  // [start, start + size) is all of it; true if it did.
  bool release_region(Address start, std::uint64_t size) {
    ++steps_;
    const std::size_t i = regions_.containing(start);
    if (i == RegionTable<typename M::Arena>::kNone) return false;
    const auto r = regions_[i];
    if (r.start == region_ || start != r.start + pad() || start + size != r.start + r.bytes - 8) return false;
    memory_.release(r.start, r.bytes);
    regions_.erase(i);
    return true;
  }

  M& memory_;
  Classes classes_;
  SegregatedFitConfig config_;
  FixedArray<FreeBlocks, typename M::Arena> lists_;
  RegionTable<typename M::Arena> regions_;  // the allocator's own record of its regions
  bool ok_ = false;
  std::uint64_t min_block_ = 16;
  std::uint64_t steps_ = 0, splits_ = 0, coalesces_ = 0;
  Address region_ = 0, bump_ = 0, end_ = 0, hot_ = 0;  // the current region and its uncarved rest
};

}  // namespace tailor::dmm
