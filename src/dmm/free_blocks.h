// SPDX-License-Identifier: MIT
// FreeBlocks: the free blocks of one list of the DMM model's general
// mechanism (segregated_fit.h), in any of the DMM simulator paper's three data structures
// (singly linked list, doubly linked list, binary search tree), taken by any
// of its four allocation mechanisms (first, best, exact, farthest fit) under
// either policy (FIFO, LIFO). Blocks of any size may share it, so every
// search reads the block's header to learn its size. Written over the Memory
// concept (memory.h): every link lives in the free block itself.
//
// Layout of a free block at b (word 0, the header, belongs to the mechanism;
// its size is `size_of(header)`):
//   list:  b+8 next, b+16 prev (doubly linked only);
//   tree:  b+8 left, b+16 right, b+24 parent, b+32 order key.
// Hence the smallest free block: 16 bytes (SLL), 24 (DLL), 40 (BST), plus
// the mechanism's footer when it coalesces (min_block() below).
//
// Order: a list takes from its head; LIFO pushes at the head, FIFO at the
// tail, so a search meets the newest block first under LIFO and the oldest
// under FIFO. The tree is a binary search tree ordered by (size, key) where
// key is a release counter (FIFO) or its complement (LIFO): among blocks of
// one size, the oldest (FIFO) or newest (LIFO) comes first in order. It is
// kept balanced in expectation as a treap whose priorities are a hash of the
// block's address (never stored): a plain BST would degenerate into a list
// under the monotonic keys that FIFO and LIFO produce.
// Fits: first = the first block met that is large enough (on a tree, the
// first node visited on the descent); best = the smallest large enough (ties
// broken by the policy); exact = the first of exactly the size (on a tree,
// by order); farthest = the large-enough block farthest in address from the
// hottest block (the last one allocated or released by the owner: the DMM simulator paper's
// temperature-aware fit), which examines every block.
//
// Counting, as the DMM simulator paper counts (free_list.h has the same rules): 1 step per
// block examined or tree node visited, per insertion and per rotation
// (a uniform list, whose blocks all have one size, takes its head: 1 step); examining reads the
// header and the link followed (2 reads; a tree node's key is 1 read more
// when sizes tie); each link changed is 1 write.
#pragma once

#include <cstdint>

#include "dmm/assert.h"
#include "dmm/free_list.h"
#include "dmm/memory.h"

namespace tailor::dmm {

enum class Structure : std::uint8_t { kSll, kDll, kBst };

inline const char* to_string(Structure s) noexcept {
  return s == Structure::kSll ? "SLL" : s == Structure::kDll ? "DLL" : "BTREE";
}

class FreeBlocks {
 public:
  /// Low bits of a header word that are flags, not size; bits 40 and up are
  /// the owner's too (a class index).
  static constexpr std::uint64_t kFlagMask = 7;
  static constexpr std::uint64_t kSizeMask = ((std::uint64_t{1} << 40) - 1) & ~kFlagMask;
  static constexpr std::uint64_t size_of(std::uint64_t header) noexcept { return header & kSizeMask; }

  /// Smallest free block the structure can hold (bytes), before rounding to the alignment.
  static constexpr std::uint64_t min_block(Structure s, bool footer) noexcept {
    return (s == Structure::kSll ? 16 : s == Structure::kDll ? 24 : 40) + (footer ? 8 : 0);
  }

  FreeBlocks() = default;
  FreeBlocks(Structure structure, Fit fit, Policy policy) : structure_(structure), fit_(fit), policy_(policy) {}

  bool empty() const noexcept { return head_ == 0; }

  /// Declares that every block on this list has one size (strict classes):
  /// a list search then takes the head without reading its header.
  void set_uniform(bool on) noexcept { uniform_ = on; }

  /// Removes and returns a block of at least `need` bytes (exactly `need`
  /// under exact fit) chosen by the fit, or 0; sets `got` to its bytes.
  /// `hot` is the hottest address (farthest fit).
  template <Memory M>
  Address take(M& m, std::uint64_t& steps, std::uint64_t need, Address hot, std::uint64_t& got) {
    if (head_ == 0) return 0;
    if (uniform_ && structure_ != Structure::kBst && fit_ != Fit::kFarthest) {  // the head fits: 1 step, 1 read
      ++steps;
      const Address block = head_;
      const Address next = m.load(block + 8);
      if (structure_ == Structure::kDll && next != 0) m.store(next + 16, 0);
      head_ = next;
      got = need;
      return block;
    }
    const Address block =
        structure_ == Structure::kBst ? tree_take(m, steps, need, hot, got) : list_take(m, steps, need, hot, got);
    TAILOR_ASSERT(block == 0 || got >= need);
    return block;
  }

  /// Inserts a free block of `bytes` (its header already written).
  template <Memory M>
  void put(M& m, std::uint64_t& steps, Address block, std::uint64_t bytes) {
    ++steps;
    if (structure_ == Structure::kBst) return tree_insert(m, steps, block, bytes);
    const bool dll = structure_ == Structure::kDll;
    if (policy_ == Policy::kLifo || head_ == 0) {
      m.store(block + 8, head_);
      if (dll) {
        m.store(block + 16, 0);
        if (head_ != 0) m.store(head_ + 16, block);
      }
      if (head_ == 0) tail_ = block;
      head_ = block;
    } else {
      m.store(block + 8, 0);
      if (dll) m.store(block + 16, tail_);
      m.store(tail_ + 8, block);
      tail_ = block;
    }
  }

  /// Removes a given free block (a coalescing neighbour). A singly linked
  /// list finds its predecessor by walking from the head.
  template <Memory M>
  void remove(M& m, std::uint64_t& steps, Address block) {
    ++steps;
    switch (structure_) {
      case Structure::kBst: return tree_erase(m, steps, block);
      case Structure::kDll: {
        const Address next = m.load(block + 8), prev = m.load(block + 16);
        if (prev == 0) head_ = next; else m.store(prev + 8, next);
        if (next == 0) tail_ = prev; else m.store(next + 16, prev);
        return;
      }
      case Structure::kSll: {
        Address prev = 0;
        for (Address b = head_; b != block; b = m.load(b + 8)) ++steps, prev = b;
        unlink(m, prev, block, m.load(block + 8));
        return;
      }
    }
  }

  /// Calls f(block) for every free block (tests, the checker).
  template <Memory M, class F>
  void each(M& m, F f) const {
    if (structure_ != Structure::kBst) {
      for (Address b = head_; b != 0; b = m.load(b + 8)) f(b);
      return;
    }
    walk_tree(m, head_, f);
  }

 private:
  static std::uint64_t distance(Address a, Address b) noexcept { return a > b ? a - b : b - a; }

  template <Memory M>
  Address list_take(M& m, std::uint64_t& steps, std::uint64_t need, Address hot, std::uint64_t& got) {
    Address prev = 0, block = head_, best = 0, best_prev = 0, best_next = 0;
    std::uint64_t best_bytes = UINT64_MAX, best_distance = 0;
    while (block != 0) {
      ++steps;
      const std::uint64_t have = size_of(m.load(block));
      const Address next = m.load(block + 8);
      if (fit_ == Fit::kExact ? have == need : have >= need) {
        bool better;
        switch (fit_) {
          case Fit::kBest: better = have < best_bytes; break;
          case Fit::kFarthest: better = best == 0 || distance(block, hot) > best_distance; break;
          default: better = true;
        }
        if (better) {
          best = block, best_prev = prev, best_next = next, best_bytes = have, best_distance = distance(block, hot);
          if (fit_ == Fit::kFirst || fit_ == Fit::kExact || (fit_ == Fit::kBest && have == need)) break;
        }
      }
      prev = block;
      block = next;
    }
    if (best == 0) return 0;
    if (structure_ == Structure::kDll) {
      if (best_prev == 0) head_ = best_next; else m.store(best_prev + 8, best_next);
      if (best_next == 0) tail_ = best_prev; else m.store(best_next + 16, best_prev);
    } else {
      unlink(m, best_prev, best, best_next);
    }
    got = best_bytes;
    return best;
  }

  template <Memory M>
  void unlink(M& m, Address prev, Address block, Address next) {
    if (prev == 0) head_ = next; else m.store(prev + 8, next);
    if (block == tail_) tail_ = prev;
  }

  // --- tree: head_ is the root; words: +8 left, +16 right, +24 parent, +32 key.

  // Calls f(node) for every node of the tree at `root`, in pre-order with
  // the right subtree first, with no stack: it climbs back up by the parent
  // links.
  template <Memory M, class F>
  static void walk_tree(M& m, Address root, F&& f) {
    Address b = root;
    while (b != 0) {
      f(b);
      const Address right = m.load(b + 16);
      if (right != 0) {
        b = right;
        continue;
      }
      Address left = m.load(b + 8);
      // Climb until a node whose left subtree is still to visit: one reached
      // from its right child (or a leaf's own left, none here).
      while (left == 0) {
        if (b == root) return;
        const Address parent = m.load(b + 24);
        const Address parent_right = m.load(parent + 16);
        left = parent_right == b ? m.load(parent + 8) : 0;
        b = parent;
      }
      b = left;
    }
  }

  template <Memory M>
  Address tree_take(M& m, std::uint64_t& steps, std::uint64_t need, Address hot, std::uint64_t& got) {
    Address found = 0;
    std::uint64_t found_bytes = 0;
    if (fit_ == Fit::kFarthest) {
      std::uint64_t best_distance = 0;
      walk_tree(m, head_, [&](Address b) {
        ++steps;
        const std::uint64_t have = size_of(m.load(b));
        if (have >= need && (found == 0 || distance(b, hot) > best_distance))
          found = b, found_bytes = have, best_distance = distance(b, hot);
      });
    } else {
      // Descent towards the smallest (size, key) with size >= need.
      for (Address b = head_; b != 0;) {
        ++steps;
        const std::uint64_t have = size_of(m.load(b));
        if (have >= need) {
          found = b, found_bytes = have;
          if (fit_ == Fit::kFirst) break;
          b = m.load(b + 8);
        } else {
          b = m.load(b + 16);
        }
      }
      if (fit_ == Fit::kExact && found != 0 && found_bytes != need) found = 0;
    }
    if (found == 0) return 0;
    tree_erase(m, steps, found);
    got = found_bytes;
    return found;
  }

  template <Memory M>
  void tree_insert(M& m, std::uint64_t& steps, Address block, std::uint64_t bytes) {
    const std::uint64_t key = policy_ == Policy::kFifo ? counter_ : ~counter_;
    ++counter_;
    m.store(block + 8, 0);
    m.store(block + 16, 0);
    m.store(block + 32, key);
    Address parent = 0;
    bool left = false;
    for (Address b = head_; b != 0;) {
      ++steps;
      parent = b;
      const std::uint64_t have = size_of(m.load(b));
      left = bytes < have || (bytes == have && key < m.load(b + 32));
      b = m.load(b + (left ? 8 : 16));
    }
    m.store(block + 24, parent);
    if (parent == 0) head_ = block; else m.store(parent + (left ? 8 : 16), block);
    while (parent != 0 && priority(block) > priority(parent)) {  // heap order on the priorities
      ++steps;
      rotate_up(m, block, parent);
      parent = m.load(block + 24);
    }
  }

  // The treap's priority of a node: a hash of its address within its 2^40
  // bytes of address space (never stored), so that an allocator behaves the
  // same in whichever space of a DMM it runs (dmm.h, part_simulation.h).
  static std::uint64_t priority(Address a) noexcept {
    std::uint64_t x = (a & ((std::uint64_t{1} << 40) - 1)) * 0x9e3779b97f4a7c15ull;
    return x ^ (x >> 29);
  }

  // Rotates x (a child of p) above p.
  template <Memory M>
  void rotate_up(M& m, Address x, Address p) {
    const Address g = m.load(p + 24);
    const bool x_left = m.load(p + 8) == x;
    const std::size_t in = x_left ? 16 : 8, out = x_left ? 8 : 16;  // x's inner child moves to p
    const Address inner = m.load(x + in);
    m.store(p + out, inner);
    if (inner != 0) m.store(inner + 24, p);
    m.store(x + in, p);
    m.store(p + 24, x);
    m.store(x + 24, g);
    if (g == 0) head_ = x;
    else m.store(g + (m.load(g + 8) == p ? 8 : 16), x);
  }

  // Replaces the subtree rooted at u by v (v may be 0) in u's parent.
  template <Memory M>
  void transplant(M& m, Address u, Address v) {
    const Address p = m.load(u + 24);
    if (p == 0) head_ = v;
    else m.store(p + (m.load(p + 8) == u ? 8 : 16), v);
    if (v != 0) m.store(v + 24, p);
  }

  template <Memory M>
  void tree_erase(M& m, std::uint64_t& steps, Address z) {
    for (;;) {  // rotate z down below its higher-priority child until it has at most one
      const Address l = m.load(z + 8), r = m.load(z + 16);
      if (l == 0) return transplant(m, z, r);
      if (r == 0) return transplant(m, z, l);
      ++steps;
      rotate_up(m, priority(l) > priority(r) ? l : r, z);
    }
  }

  Structure structure_ = Structure::kSll;
  Fit fit_ = Fit::kFirst;
  Policy policy_ = Policy::kLifo;
  Address head_ = 0, tail_ = 0;
  std::uint64_t counter_ = 0;
  bool uniform_ = false;
};

}  // namespace tailor::dmm
