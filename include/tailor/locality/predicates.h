// SPDX-License-Identifier: MIT
// Allocation predicates (the Defero paper, section 3): how the heap picks, among the
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
//     // optional: void bind(std::uintptr_t first, std::uintptr_t last) noexcept;
//     //   called before each walk with the range of addresses the size
//     //   class's memory spans (its slabs)
//     // optional: bool accepts(const kclass& c) noexcept;  // fast path: the
//     //   heap offers the K-class it allocated from last and takes it if true
//     // for tailor::allocator: static Mine from_hint(const void* hint) noexcept;
//     //   and optionally static Mine from_path(tree_path, const void* parent);
//   };
// Steering must be consistent with the order (a predicate that says "lower"
// at c must mean every K-class above c is worse), or the walk finds an
// arbitrary class, which is still correct memory, just not a good choice.
#pragma once

#include <cmath>
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

/// Path: reads the turns of a tree insertion path as a binary fraction f
/// (turn i is bit i after the point, plus half a unit for the part below the
/// new node), an estimate of where the new key ranks among the tree's keys,
/// and aims at the address at fraction f of the memory the size class spans
/// (from its lowest slab to the end of its highest); from there it behaves
/// as Match (that K-class, else the nearest with a free chunk). Keys that
/// take similar paths in the container get nearby K-classes, whatever order
/// they arrive in. The path is only good to a few percent of the key range
/// (a red-black tree is not weight-balanced), so when the new node's parent
/// (its in-order neighbour) lies within 1/256 of the span from that target,
/// Path aims at the parent instead: the path picks the region, the parent the
/// spot in it.
///
/// The Defero paper follows the turns literally down its own tree of K-classes. We
/// tried that first, then aiming within the span of the K-classes that still
/// have free chunks: both move the target as K-classes fill up and leave the
/// tree (rebalancing; the ends of the span), so equal turns soon lead to
/// different memory. The memory a size class spans only grows, so the map
/// from key rank to address stays put (docs/locality.md has the numbers).
/// The aim does not depend on K; K sets how close "nearest" has to be.
struct Path {
  tree_path path{};
  std::uintptr_t near = 0;  // without a path (from_hint): behave as Match
  std::uintptr_t target = 0;

  /// Called by the heap before each walk with the first and last address of
  /// the memory of the size class.
  void bind(std::uintptr_t first, std::uintptr_t last) noexcept {
    if (path.depth == 0 && near != 0) {
      target = near;
      return;
    }
    // f = 0.b0 b1 ... b(d-1) 1 in binary.
    const unsigned bits = path.depth < 63 ? path.depth : 63;
    const std::uint64_t fraction = (bits == 0 ? 0 : path.bits >> (64 - bits) << (64 - bits)) |
                                   (std::uint64_t{1} << (63 - bits));
    target = first + static_cast<std::uintptr_t>(static_cast<double>(last - first) *
                                                 std::ldexp(static_cast<double>(fraction), -64));
    if (near != 0 && (near > target ? near - target : target - near) <= (last - first) / 256) target = near;
  }
  int steer(const kclass& c, unsigned depth) const noexcept { return Match{target}.steer(c, depth); }
  const kclass* pick(const kclass* lo, const kclass* hi) const noexcept { return Match{target}.pick(lo, hi); }
  static Path from_hint(const void* p) noexcept { return {{}, reinterpret_cast<std::uintptr_t>(p), 0}; }
  static Path from_path(tree_path t, const void* parent) noexcept {
    return {t, reinterpret_cast<std::uintptr_t>(parent), 0};
  }
};

}  // namespace tailor::locality
