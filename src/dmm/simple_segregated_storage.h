// SPDX-License-Identifier: MIT
// SimpleSegregatedStorage: the DMM simulator paper's simple segregated storage as a
// mechanism over the Memory concept (memory.h). Storage is divided into
// areas, each holding blocks of a single class; blocks carry no header, so a
// block's class is found from its area: areas are `chunk` bytes aligned to
// `chunk`, and an area's first word holds its class. A class's blocks all
// have its upper bound's bytes (rounded to the class's alignment, at least
// the structure's smallest free block); no splitting, no coalescing, no
// memory returned (an area's free blocks are spread over its class's list).
//
// With alignment 8, a class whose block size is a multiple of 16 still has
// its blocks 16-aligned; the others (24 bytes, say) pack 8-aligned blocks
// with no padding, as mimalloc's word-sized bins do.
//
// A free block holds its links after its first word (and, when the structure
// compares sizes, its bytes in it: free_blocks.h), so any structure, fit and
// policy of the model applies. Allocation: take from
// the class's list; on a miss carve at the class's bump pointer in its
// current area, and obtain a new area (one system request) when it is full.
// An aligned request (alignment A above its class's) has A - alignment
// bytes of slack in its size; its data is the first A-aligned address in the
// block, and the release finds the block by arithmetic from the area start.
//
// Area lists ("lists": "area"; config.area_lists): instead of one list per
// class, each area keeps its own free list, count of blocks in use and
// count of blocks carved, in a 32-byte header after which its blocks start
// (mimalloc's pages are laid out so; as mimalloc's heap holds its current
// page's list, the class's state holds its current area's). A class allocates from its current
// area (its list, else its next uncarved block) and, when that is full,
// from an area of the class's stack of areas that have free blocks, else
// from a new area; a release pushes the block on its own area's list, puts
// the area on the stack if it was full, and an area whose blocks are all
// free starts carving again from its first block. So consecutive requests
// get neighbouring blocks, and a structure freed whole and built again is
// laid out as it was the first time, not in the order its blocks were
// freed: what a global list gives a program that walks what it allocated.
// An area's list is singly linked, taken from its head, LIFO.
//
// Counting: the list operations (free_blocks.h; a list's head always fits,
// its blocks having one size); 1 step per carve and 1 per system request
// (plus the area's class word, 1 write); a release reads the area's class
// word (1 read) and, for a tree or the farthest fit, which compare sizes,
// writes the block's size word (1 write). With area lists: 1 step per
// allocation and per release, 1 more per area taken from the stack or
// pushed on it, and every header word read or written is counted as the
// memory counts accesses.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <utility>

#include "dmm/allocator.h"
#include "dmm/fixed_array.h"
#include "dmm/free_blocks.h"
#include "dmm/memory.h"
#include "dmm/size_classes.h"

namespace tailor::dmm {

struct SimpleSegregatedConfig {
  Structure structure = Structure::kSll;
  Fit fit = Fit::kFirst;
  Policy policy = Policy::kLifo;
  std::uint64_t alignment = 16;  ///< of the blocks (power of two, >= 8)
  std::uint64_t chunk = 4096;    ///< bytes of an area (power of two)
  bool area_lists = false;       ///< a free list per area, not per class
};

template <Memory M>
class SimpleSegregatedStorage {
 public:
  static constexpr MechanismKind kKind = MechanismKind::kSimpleSegregatedStorage;
  static constexpr std::uint64_t kMinAlignment = 8;
  using Classes = SizeClasses<typename M::Arena>;

  /// Why these classes and configuration cannot make simple segregated
  /// storage, or nullptr if they can.
  static const char* check(const Classes& classes, const SimpleSegregatedConfig& config) noexcept {
    if (config.alignment < 8 || !std::has_single_bit(config.alignment))
      return "SimpleSegregatedStorage: alignment must be a power of two >= 8";
    if (!std::has_single_bit(config.chunk)) return "SimpleSegregatedStorage: chunk must be a power of two";
    const std::uint64_t min = FreeBlocks::min_block(config.structure, false);
    for (std::uint32_t c = 0; c < classes.count(); ++c) {
      if (classes.upper(c) == Classes::kOpen) return "SimpleSegregatedStorage: its last class has no upper bound";
      const std::uint64_t bytes = round(std::max(classes.upper(c), min), config.alignment);
      const std::uint64_t align = bytes % 16 == 0 ? std::max<std::uint64_t>(16, config.alignment) : config.alignment;
      if (first_offset(config.area_lists, align) + bytes > config.chunk)
        return "SimpleSegregatedStorage: an area (chunk) cannot hold a block of its largest class";
    }
    return nullptr;
  }

  /// The arguments must pass check(); ok() says whether the arena held the classes' state.
  SimpleSegregatedStorage(M& memory, Classes classes, SimpleSegregatedConfig config)
      : memory_(memory), classes_(std::move(classes)), config_(config) {
    ok_ = classes_state_.assign(classes_.count());
    const std::uint64_t min = FreeBlocks::min_block(config.structure, false);
    for (std::uint32_t c = 0; ok_ && c < classes_.count(); ++c) {
      ClassState& k = classes_state_[c];
      k.bytes = round(std::max(classes_.upper(c), min), config.alignment);
      k.align = k.bytes % 16 == 0 ? std::max<std::uint64_t>(16, config.alignment) : config.alignment;
      k.first = first_offset(config.area_lists, k.align);
      k.capacity = (config.chunk - k.first) / k.bytes;
      k.magic = UINT64_MAX / k.bytes + 1;
      k.list = FreeBlocks(config.structure, config.fit, config.policy);
      k.list.set_uniform(uniform());
    }
  }

  bool ok() const noexcept { return ok_; }
  std::size_t state_bytes() const noexcept {
    return classes_.state_bytes() + classes_state_.size() * sizeof(ClassState);
  }

  std::uint64_t min_alignment() const noexcept { return config_.alignment; }

  Block allocate(std::uint64_t bytes, std::uint64_t alignment = 0) {
    if (bytes > (std::uint64_t{1} << 46)) [[unlikely]]
      return {};  // larger than any class
    const std::uint64_t s = ((bytes == 0 ? 1 : bytes) + 7) & ~std::uint64_t{7};
    std::uint32_t c = classes_.class_of(s);
    if (c != Classes::kNone && alignment > classes_state_[c].align)  // room to move the data: the slack
      c = alignment > (std::uint64_t{1} << 40) ? Classes::kNone : classes_.class_of(s + alignment - config_.alignment);
    if (c == Classes::kNone) [[unlikely]]
      return {};  // no class holds the request
    ClassState& k = classes_state_[c];
    if (config_.area_lists) return aligned(area_allocate(k, c), k, alignment);
    std::uint64_t got;
    Address block = k.list.take(memory_, steps_, k.bytes, hot_, got);
    if (block == 0) {
      ++steps_;
      if (k.end - k.bump < k.bytes) {
        ++steps_;
        const Address area = memory_.obtain(config_.chunk, config_.chunk);
        if (area == 0) [[unlikely]]
          return {};  // the system refused memory
        memory_.store(area, c);
        k.bump = area + k.first;
        k.end = area + config_.chunk;
      }
      block = k.bump;
      k.bump += k.bytes;
    }
    return aligned(block, k, alignment);
  }

  /// Bytes the program may use from `address` (as allocate returned it) to
  /// the end of its block: malloc_usable_size. Reads the block's metadata.
  std::uint64_t usable(Address address) {
    const Address area = address & ~(config_.chunk - 1);
    const ClassState& k = classes_state_[static_cast<std::uint32_t>(memory_.load(area))];
    const Address block = block_of(area, k, address);
    return block + k.bytes - address;
  }

  std::uint64_t release(Address address) {
    const Address area = address & ~(config_.chunk - 1);
    const auto c = static_cast<std::uint32_t>(memory_.load(area));
    ClassState& k = classes_state_[c];
    const Address block = block_of(area, k, address);
    if (config_.area_lists) {
      area_release(k, area, block);
      return k.bytes;
    }
    if (!uniform()) memory_.store(block, k.bytes);  // the size word the structure's search reads
    k.list.put(memory_, steps_, block, k.bytes);
    hot_ = block;
    return k.bytes;
  }

  std::uint64_t steps() const noexcept { return steps_; }
  std::uint64_t splits() const noexcept { return 0; }
  std::uint64_t coalesces() const noexcept { return 0; }

 private:
  struct ClassState {
    FreeBlocks list;          ///< class lists
    Address current = 0;      ///< area lists: the area requests take from
    Address head = 0;         ///< area lists: the current area's free list (its header's is stale meanwhile)
    std::uint64_t counts = 0; ///< area lists: the current area's counts (kCounts' layout)
    Address stack = 0;        ///< area lists: areas with free blocks, linked by their kNext words
    std::uint64_t capacity = 0;  ///< blocks in an area
    std::uint64_t bytes = 0;
    std::uint64_t align = 16;  ///< of its blocks: 16 when their size is a multiple of 16, else the config's
    std::uint64_t first = 16;  ///< offset of an area's first block (after its class word)
    std::uint64_t magic = 0;   ///< 2^64 / bytes rounded up: the block index without a division
    Address bump = 0, end = 0;
  };

  __extension__ typedef unsigned __int128 U128;

  // An area's header with area lists: its class word, then these.
  static constexpr std::uint64_t kHead = 8;    ///< its free list
  static constexpr std::uint64_t kCounts = 16; ///< blocks in use (low 32 bits), blocks carved (high 32 bits)
  static constexpr std::uint64_t kNext = 24;   ///< the next area on its class's stack, | kOnStack while on it
  static constexpr std::uint64_t kOnStack = 1;
  static constexpr std::uint64_t kAreaHeader = 32;

  static std::uint64_t first_offset(bool area_lists, std::uint64_t align) noexcept {
    return std::max<std::uint64_t>(area_lists ? kAreaHeader : 8, align);
  }

  Block aligned(Address block, const ClassState& k, std::uint64_t alignment) noexcept {
    if (block == 0) return {};
    hot_ = block;
    Address data = block;
    if (alignment > k.align) data = (data + alignment - 1) & ~(alignment - 1);
    return {data, k.bytes};
  }

  // A block from the class's current area, else from an area of its stack,
  // else from a new area; 0 if the system refused one. The current area's
  // list and counts live in the class's state while it is current (written
  // back to its header when it is left, full): the requests and releases a
  // program makes in one area read no header.
  Address area_allocate(ClassState& k, std::uint32_t c) {
    ++steps_;
    for (;;) {
      if (k.head != 0) {
        const Address block = k.head;
        k.head = memory_.load(block + 8);
        ++k.counts;
        return block;
      }
      const std::uint64_t carved = k.counts >> 32;
      if (k.current != 0 && carved < k.capacity) {
        k.counts += 1 + (std::uint64_t{1} << 32);
        return k.current + k.first + carved * k.bytes;
      }
      ++steps_;
      if (k.current != 0) {  // full: its header gets its counts back, and its list is empty
        memory_.store(k.current + kHead, 0);
        memory_.store(k.current + kCounts, k.counts);
      }
      Address area;
      if (k.stack != 0) {  // the next area with free blocks
        area = k.stack;
        k.stack = memory_.load(area + kNext) & ~kOnStack;
        memory_.store(area + kNext, 0);
        k.head = memory_.load(area + kHead);
        k.counts = memory_.load(area + kCounts);
      } else {
        area = memory_.obtain(config_.chunk, config_.chunk);
        if (area == 0) [[unlikely]]
          return 0;  // the system refused memory
        memory_.store(area, c);
        memory_.store(area + kHead, 0);
        memory_.store(area + kNext, 0);
        k.head = 0;
        k.counts = 0;
      }
      k.current = area;
    }
  }

  void area_release(ClassState& k, Address area, Address block) {
    ++steps_;
    if (area == k.current) {
      if (static_cast<std::uint32_t>(--k.counts) == 0) {  // every block free: carve from the first again
        k.head = 0;
        k.counts = 0;
      } else {
        memory_.store(block + 8, k.head);
        k.head = block;
      }
      hot_ = block;
      return;
    }
    const std::uint64_t counts = memory_.load(area + kCounts) - 1;
    if (static_cast<std::uint32_t>(counts) == 0) {
      memory_.store(area + kHead, 0);
      memory_.store(area + kCounts, 0);
    } else {
      memory_.store(block + 8, memory_.load(area + kHead));
      memory_.store(area + kHead, block);
      memory_.store(area + kCounts, counts);
    }
    const std::uint64_t next = memory_.load(area + kNext);
    if ((next & kOnStack) == 0) {  // it was full: its class may take from it again
      ++steps_;
      memory_.store(area + kNext, k.stack | kOnStack);
      k.stack = area;
    }
    hot_ = block;
  }

  // The start of the block holding `address` in an area: the offset divided
  // by the block size, by a multiplication (exact for offsets below 2^32,
  // Lemire's fastmod; larger areas divide).
  Address block_of(Address area, const ClassState& k, Address address) const noexcept {
    const std::uint64_t off = address - area - k.first;
    const std::uint64_t i = off < (std::uint64_t{1} << 32) && k.bytes < (std::uint64_t{1} << 32)
                                ? static_cast<std::uint64_t>((static_cast<U128>(off) * k.magic) >> 64)
                                : off / k.bytes;
    return area + k.first + i * k.bytes;
  }

  // A class's blocks all have one size, so a list's head always fits: only a
  // tree (ordered by size) or the farthest fit reads the size words.
  bool uniform() const noexcept { return config_.structure != Structure::kBst && config_.fit != Fit::kFarthest; }

  static std::uint64_t round(std::uint64_t bytes, std::uint64_t align) noexcept {
    return (bytes + align - 1) & ~(align - 1);
  }

  M& memory_;
  Classes classes_;
  SimpleSegregatedConfig config_;
  FixedArray<ClassState, typename M::Arena> classes_state_;
  std::uint64_t steps_ = 0;
  Address hot_ = 0;
  bool ok_ = false;
};

}  // namespace tailor::dmm
