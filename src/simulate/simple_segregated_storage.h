// SPDX-License-Identifier: MIT
// SimpleSegregatedStorage: seed 002's simple segregated storage as a
// mechanism over the Memory concept (memory.h). Storage is divided into
// areas, each holding blocks of a single class; blocks carry no header, so a
// block's class is found from its area: areas are `chunk` bytes aligned to
// `chunk`, and an area's first word holds its class. A class's blocks all
// have its upper bound's bytes (rounded to the alignment, at least the
// structure's smallest free block); no splitting, no coalescing, no memory
// returned (an area's free blocks are spread over its class's list).
//
// A free block holds its bytes in its first word while free (the free
// structure, free_blocks.h, reads sizes there) and its links after it, so
// any structure, fit and policy of the model applies. Allocation: take from
// the class's list; on a miss carve at the class's bump pointer in its
// current area, and obtain a new area (one system request) when it is full.
// An aligned request (alignment A above the mechanism's) has A - alignment
// bytes of slack in its size; its data is the first A-aligned address in the
// block, and the release finds the block by arithmetic from the area start.
//
// Counting: the list operations (free_blocks.h); 1 step per carve and 1 per
// system request (plus the area's class word, 1 write); a release reads the
// area's class word (1 read) and writes the block's size word (1 write).
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "allocator.h"
#include "free_blocks.h"
#include "memory.h"
#include "size_classes.h"

namespace tailor::simulate {

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
  static constexpr std::uint64_t kMinAlignment = 8;

  SimpleSegregatedStorage(M& memory, SizeClasses classes, SimpleSegregatedConfig config)
      : memory_(memory), classes_(std::move(classes)), config_(config), classes_state_(classes_.count()) {
    auto bad = [](const std::string& what) { throw std::invalid_argument("SimpleSegregatedStorage: " + what); };
    if (config.alignment < 8 || !std::has_single_bit(config.alignment)) bad("alignment must be a power of two >= 8");
    if (!std::has_single_bit(config.chunk)) bad("chunk must be a power of two");
    first_ = std::max<std::uint64_t>(8, config.alignment);
    const std::uint64_t min = round(FreeBlocks::min_block(config.structure, false));
    for (std::uint32_t c = 0; c < classes_.count(); ++c) {
      if (classes_.upper(c) == SizeClasses::kOpen) bad("its last class has no upper bound");
      ClassState& k = classes_state_[c];
      k.bytes = std::max(round(classes_.upper(c)), min);
      if (first_ + k.bytes > config.chunk)
        bad("an area of " + std::to_string(config.chunk) + " bytes cannot hold a block of " +
            std::to_string(k.bytes) + " bytes");
      k.list = FreeBlocks(config.structure, config.fit, config.policy);
    }
  }

  std::uint64_t min_alignment() const noexcept { return config_.alignment; }

  Block allocate(std::uint64_t bytes, std::uint64_t alignment = 0) {
    const std::uint64_t slack = alignment > config_.alignment ? alignment - config_.alignment : 0;
    const std::uint64_t s = ((bytes == 0 ? 1 : bytes) + slack + 7) & ~std::uint64_t{7};
    const std::uint32_t c = classes_.class_of(s);
    if (c == SizeClasses::kNone) [[unlikely]]
      throw std::length_error("SimpleSegregatedStorage: no class holds a request of " + std::to_string(bytes) +
                              " bytes");
    ClassState& k = classes_state_[c];
    std::uint64_t got;
    Address block = k.list.take(memory_, steps_, k.bytes, hot_, got);
    if (block == 0) {
      ++steps_;
      if (k.end - k.bump < k.bytes) {
        ++steps_;
        const Address area = memory_.obtain(config_.chunk, config_.chunk);
        memory_.store(area, c);
        k.bump = area + first_;
        k.end = area + config_.chunk;
      }
      block = k.bump;
      k.bump += k.bytes;
    }
    hot_ = block;
    Address data = block;
    if (alignment > config_.alignment) data = (data + alignment - 1) & ~(alignment - 1);
    return {data, k.bytes};
  }

  std::uint64_t release(Address address) {
    const Address area = address & ~(config_.chunk - 1);
    const auto c = static_cast<std::uint32_t>(memory_.load(area));
    ClassState& k = classes_state_[c];
    const Address block = area + first_ + (address - area - first_) / k.bytes * k.bytes;
    memory_.store(block, k.bytes);
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
    Address bump = 0, end = 0;
  };

  std::uint64_t round(std::uint64_t bytes) const noexcept {
    return (bytes + config_.alignment - 1) & ~(config_.alignment - 1);
  }

  M& memory_;
  SizeClasses classes_;
  SimpleSegregatedConfig config_;
  std::vector<ClassState> classes_state_;
  std::uint64_t first_ = 16;
  std::uint64_t steps_ = 0;
  Address hot_ = 0;
};

}  // namespace tailor::simulate
