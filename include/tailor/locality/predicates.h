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
//     // optional: void bind(const kclass& lowest, const kclass& highest) noexcept;
//     //   called before each walk with the ends of the tree
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
/// and aims at the address at fraction f of the span between the lowest and
/// the highest K-class with a free chunk; from there it behaves as Match
/// (that K-class, else the nearest). Keys that take similar paths in the
/// container get nearby K-classes, whatever order they arrive in.
///
/// Seed 000 follows the turns literally down its own tree of K-classes. We
/// tried that first: the heap's tree is rebalanced as K-classes fill up and
/// leave it, so the same turns soon lead to a different part of memory; on
/// the test in tests/locality/tree_test.cpp it placed key neighbours within
/// 4 K-classes of each other 16% of the time against 11% for First. Aiming at
/// an address keeps the mapping from key rank to memory stable.
struct Path {
  tree_path path{};
  std::uintptr_t near = 0;  // without a path (from_hint): behave as Match
  std::uintptr_t target = 0;

  /// Called by the heap before each walk with the ends of the tree.
  void bind(const kclass& lowest, const kclass& highest) noexcept {
    if (path.depth == 0 && near != 0) {
      target = near;
      return;
    }
    const std::uintptr_t lo = lowest.first_address(), span = highest.last_address() - lo;
    // f = 0.b0 b1 ... b(d-1) 1 in binary, scaled to the span without overflow.
    const unsigned bits = path.depth < 63 ? path.depth : 63;
    const std::uint64_t fraction = (bits == 0 ? 0 : path.bits >> (64 - bits) << (64 - bits)) |
                                   (std::uint64_t{1} << (63 - bits));
    target = lo + static_cast<std::uintptr_t>(static_cast<double>(span) * std::ldexp(static_cast<double>(fraction), -64));
  }
  int steer(const kclass& c, unsigned depth) const noexcept { return Match{target}.steer(c, depth); }
  const kclass* pick(const kclass* lo, const kclass* hi) const noexcept { return Match{target}.pick(lo, hi); }
  static Path from_hint(const void* p) noexcept { return {{}, reinterpret_cast<std::uintptr_t>(p), 0}; }
  static Path from_path(tree_path t, const void* parent) noexcept {
    return {t, reinterpret_cast<std::uintptr_t>(parent), 0};
  }
};

}  // namespace tailor::locality
