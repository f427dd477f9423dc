// SPDX-License-Identifier: MIT
// SimpleSegregatedStorage: seed 002's simple segregated storage as a
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
// Counting: the list operations (free_blocks.h; a list's head always fits,
// its blocks having one size); 1 step per carve and 1 per system request
// (plus the area's class word, 1 write); a release reads the area's class
// word (1 read) and, for a tree or the farthest fit, which compare sizes,
// writes the block's size word (1 write).
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <utility>

#include "allocator.h"
#include "fixed_array.h"
#include "free_blocks.h"
#include "memory.h"
#include "size_classes.h"

namespace tailor::dmm {

struct SimpleSegregatedConfig {
  Structure structure = Structure::kSll;
  Fit fit = Fit::kFirst;
  Policy policy = Policy::kLifo;
  std::uint64_t alignment = 16;  ///< of the blocks (power of two, >= 8)
  std::uint64_t chunk = 4096;    ///< bytes of an area (power of two)
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
      if (std::max<std::uint64_t>(8, align) + bytes > config.chunk)
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
      k.first = std::max<std::uint64_t>(8, k.align);
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
    hot_ = block;
    Address data = block;
    if (alignment > k.align) data = (data + alignment - 1) & ~(alignment - 1);
    return {data, k.bytes};
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
    FreeBlocks list;
    std::uint64_t bytes = 0;
    std::uint64_t align = 16;  ///< of its blocks: 16 when their size is a multiple of 16, else the config's
    std::uint64_t first = 16;  ///< offset of an area's first block (after its class word)
    std::uint64_t magic = 0;   ///< 2^64 / bytes rounded up: the block index without a division
    Address bump = 0, end = 0;
  };

  __extension__ typedef unsigned __int128 U128;

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
