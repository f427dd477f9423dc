// SPDX-License-Identifier: MIT
// The hint a search tree gives the allocator for a new node: the turns taken
// from the root down to the new node's place, as bits. tailor::set and
// tailor::map compute it during insertion (tree.h); the Path predicate
// (predicates.h) follows the same turns in the heap's tree of K-classes, so
// that keys close in value get addresses close in memory.
#pragma once

#include <cstdint>

namespace tailor::locality {

struct tree_path {
  static constexpr unsigned kMaxDepth = 64;
  /// Turn i (0 = at the root) is bit 63 - i: 0 for left, 1 for right. Read as
  /// a binary fraction, the bits place the key among the keys in the tree.
  std::uint64_t bits = 0;
  /// Turns recorded (at most kMaxDepth; deeper turns are dropped).
  unsigned depth = 0;

  constexpr void push(bool right) noexcept {
    if (depth < kMaxDepth) {
      if (right) bits |= std::uint64_t{1} << (63 - depth);
      ++depth;
    }
  }
  constexpr bool turn(unsigned i) const noexcept { return (bits >> (63 - i) & 1) != 0; }
};

}  // namespace tailor::locality
