// SPDX-License-Identifier: MIT
// Allocation predicates (seed 000, section 3): how the heap picks, among the
// K-classes of a size class that have a free chunk, the one to allocate from.
// The heap keeps those K-classes in a red-black tree ordered by address and
// walks it from the root; at each K-class the predicate answers, as Defero's
// ternary predicate does, 0 "take this one", < 0 "go to lower addresses",
// > 0 "go to higher addresses". When the walk falls off the tree, the heap
// takes the last K-class visited, or asks the predicate's optional pick(lo,
// hi), given the nearest visited K-classes below and above (either may be
// null).
//
// Writing one's own predicate (docs/locality.md has a worked example):
//   struct Mine {
//     int steer(const tailor::locality::kclass& c, unsigned depth) noexcept;
//     // optional: const kclass* pick(const kclass* lo, const kclass* hi) noexcept;
//     // optional: bool accepts(const kclass& c) noexcept;  // fast path: the
//     //   heap offers the K-class it allocated from last and takes it if true
//     // for tailor::allocator: static Mine from_hint(const void* hint) noexcept;
//     //   and optionally static Mine from_path(tree_path, const void* parent);
//   };
// Steering must be consistent with the order (a predicate that says "lower"
// at c must mean every K-class above c is worse), or the walk finds an
// arbitrary class, which is still correct memory, just not a good choice.
#pragma once

#include <concepts>
#include <cstdint>

#include "kbit.h"
#include "tree_path.h"

namespace tailor::locality {

template <class P>
concept allocation_predicate = requires(P& p, const kclass& c, unsigned depth) {
  { p.steer(c, depth) } -> std::convertible_to<int>;
};

/// First: the K-class at the root of the tree, in constant time. Successive
/// allocations keep coming from it until it runs out (temporal locality);
/// hints are ignored.
struct First {
  int steer(const kclass&, unsigned) const noexcept { return 0; }
  static First from_hint(const void*) noexcept { return {}; }
  static First from_path(tree_path, const void*) noexcept { return {}; }
};

/// Match (Defero's "Best"): the K-class of the hint address if it has a free
/// chunk, else the nearest one by address. A null hint behaves as First.
struct Match {
  std::uintptr_t hint = 0;

  int steer(const kclass& c, unsigned) const noexcept {
    if (hint == 0) return 0;
    if (hint < c.first_address()) return -1;
    if (hint > c.last_address()) return 1;
    return 0;
  }
  const kclass* pick(const kclass* lo, const kclass* hi) const noexcept {
    if (lo == nullptr) return hi;
    if (hi == nullptr) return lo;
    return hint - lo->last_address() <= hi->first_address() - hint ? lo : hi;
  }
  bool accepts(const kclass& c) const noexcept { return steer(c, 0) == 0; }
  static Match from_hint(const void* p) noexcept { return {reinterpret_cast<std::uintptr_t>(p)}; }
  /// A tree that gives a path also gives the new node's parent: near it.
  static Match from_path(tree_path, const void* parent) noexcept { return from_hint(parent); }
};

/// Path: follows the turns of a tree insertion path down the heap's tree of
/// K-classes (turn i steers at depth i) and takes the K-class where the turns
/// run out or the tree ends. Keys that take similar paths in the container
/// get nearby K-classes, whatever order they arrive in.
struct Path {
  tree_path path{};
  std::uintptr_t near = 0;  // without a path (from_hint): behave as Match

  int steer(const kclass& c, unsigned depth) const noexcept {
    if (path.depth == 0) return Match{near}.steer(c, depth);
    if (depth >= path.depth) return 0;
    return path.turn(depth) ? 1 : -1;
  }
  const kclass* pick(const kclass* lo, const kclass* hi) const noexcept {
    if (path.depth == 0) return Match{near}.pick(lo, hi);
    return nullptr;  // the last K-class visited
  }
  static Path from_hint(const void* p) noexcept { return {{}, reinterpret_cast<std::uintptr_t>(p)}; }
  static Path from_path(tree_path t, const void* parent) noexcept {
    return {t, reinterpret_cast<std::uintptr_t>(parent)};
  }
};

}  // namespace tailor::locality
