// SPDX-License-Identifier: MIT
// The allocation predicates on constructed free-chunk states: a slab is used
// up, chosen chunks are freed so that exactly the K-classes we want hold a
// free chunk, and each predicate must pick the K-class worked out by hand.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "tailor/locality.h"

namespace {

using tailor::locality_heap;
using tailor::locality::First;
using tailor::locality::kclass;
using tailor::locality::Match;
using tailor::locality::Path;
using tailor::locality::tree_path;

constexpr std::size_t kSize = 64;

/// A heap with K = 52 (4 KiB K-classes) whose first slab of 64-byte chunks is
/// fully allocated; `by_slot[j]` lists the chunks of K-class j of the slab.
struct UsedUpSlab {
  locality_heap heap{{52, false}};
  std::vector<std::vector<void*>> by_slot;
  std::uintptr_t slab = 0;

  UsedUpSlab() {
    void* p = heap.allocate(kSize);
    slab = reinterpret_cast<std::uintptr_t>(p) & ~(heap.slab_bytes() - 1);
    by_slot.resize(heap.slab_bytes() / heap.span());
    record(p);
    while (heap.free_kclasses(kSize) != 0) record(heap.allocate(kSize));
  }
  void record(void* p) {
    const std::size_t j = (reinterpret_cast<std::uintptr_t>(p) - slab) / heap.span();
    ASSERT_LT(j, by_slot.size());
    by_slot[j].push_back(p);
  }
  std::uintptr_t class_start(std::size_t j) const { return slab + j * heap.span(); }
  std::uint64_t index(std::size_t j) const { return class_start(j) >> (64 - heap.k()); }
  /// Frees `n` chunks of K-class j.
  void free_in(std::size_t j, std::size_t n = 1) {
    for (std::size_t i = 0; i < n; ++i) {
      heap.deallocate(by_slot[j].back());
      by_slot[j].pop_back();
    }
  }
  std::uint64_t class_of(const void* p) const { return heap.kclass_of(p); }
};

/// Slots 2, 5, 9 freed in ascending order: the tree is 5 at the root, 2 to
/// the left, 9 to the right.
struct ThreeClasses : UsedUpSlab {
  ThreeClasses() {
    free_in(2, 3);
    free_in(5, 3);
    free_in(9, 3);
  }
};

TEST(Predicates, ConstructedStateHasTheFreedClassesOnly) {
  ThreeClasses s;
  std::vector<std::uint64_t> seen;
  s.heap.for_each_free_kclass(kSize, [&](const kclass& c) {
    seen.push_back(c.index());
    EXPECT_EQ(c.free_chunks(), 3u);
  });
  EXPECT_EQ(seen, (std::vector<std::uint64_t>{s.index(2), s.index(5), s.index(9)}));
  ASSERT_NE(s.heap.root_kclass(kSize), nullptr);
  EXPECT_EQ(s.heap.root_kclass(kSize)->index(), s.index(5));
  EXPECT_TRUE(s.heap.index_is_valid(kSize));
}

TEST(Predicates, FirstTakesTheRootUntilItRunsOut) {
  ThreeClasses s;
  for (int i = 0; i < 3; ++i) EXPECT_EQ(s.class_of(s.heap.allocate(kSize, First{})), s.index(5));
  // Class 5 is gone; the tree of {2, 9} has one of them at the root.
  const std::uint64_t root = s.heap.root_kclass(kSize)->index();
  EXPECT_TRUE(root == s.index(2) || root == s.index(9));
  EXPECT_EQ(s.class_of(s.heap.allocate(kSize, First{})), root);
  EXPECT_EQ(s.heap.free_kclasses(kSize), 2u);
}

TEST(Predicates, MatchTakesTheHintsClass) {
  ThreeClasses s;
  for (std::size_t j : {9u, 2u, 5u}) {
    const auto hint = reinterpret_cast<const void*>(s.class_start(j) + 100);
    EXPECT_EQ(s.class_of(s.heap.allocate(kSize, Match::from_hint(hint))), s.index(j)) << "slot " << j;
  }
}

TEST(Predicates, MatchTakesTheNearestClassWhenTheHintsHasNoFreeChunk) {
  ThreeClasses s;
  // A hint 100 bytes into class 7: 4197 bytes above class 5, 8092 below class 9.
  EXPECT_EQ(s.class_of(s.heap.allocate(kSize, Match::from_hint(reinterpret_cast<void*>(s.class_start(7) + 100)))),
            s.index(5));
  // 100 bytes into class 8: 3996 bytes below class 9, 8293 above class 5.
  EXPECT_EQ(s.class_of(s.heap.allocate(kSize, Match::from_hint(reinterpret_cast<void*>(s.class_start(8) + 100)))),
            s.index(9));
  // Class 3 is nearest to 2; class 15 to 9.
  EXPECT_EQ(s.class_of(s.heap.allocate(kSize, Match::from_hint(reinterpret_cast<void*>(s.class_start(3))))),
            s.index(2));
  EXPECT_EQ(s.class_of(s.heap.allocate(kSize, Match::from_hint(reinterpret_cast<void*>(s.class_start(15))))),
            s.index(9));
  // Far outside the heap: the lowest and the highest class.
  EXPECT_EQ(s.class_of(s.heap.allocate(kSize, Match::from_hint(reinterpret_cast<void*>(std::uintptr_t{16})))),
            s.index(2));
  EXPECT_EQ(s.class_of(s.heap.allocate(kSize, Match::from_hint(reinterpret_cast<void*>(~std::uintptr_t{0} - 15)))),
            s.index(9));
}

TEST(Predicates, MatchWithoutHintBehavesAsFirst) {
  ThreeClasses s;
  EXPECT_EQ(s.class_of(s.heap.allocate(kSize, Match::from_hint(nullptr))), s.index(5));
}

tree_path path_of(std::initializer_list<bool> turns) {
  tree_path p;
  for (bool right : turns) p.push(right);
  return p;
}

/// Every K-class of the slab (0..15, 64 KiB) holds free chunks, except `skip`.
struct AllClasses : UsedUpSlab {
  explicit AllClasses(std::size_t skip = 99) {
    for (std::size_t j = 0; j < 16; ++j)
      if (j != skip) free_in(j, 2);
  }
  /// The K-class Path aims at: fraction f of the span from class 0 to the end of class 15.
  std::size_t aimed(double f) const {
    return static_cast<std::size_t>(f * static_cast<double>(heap.slab_bytes() - 1)) / heap.span();
  }
};

TEST(Predicates, PathAimsAtTheFractionItsTurnsSpell) {
  AllClasses s;
  struct Case {
    std::initializer_list<bool> turns;
    double fraction;  // 0.turns 1 in binary
  };
  for (const Case& c : {Case{{}, 0.5}, Case{{false}, 0.25}, Case{{true}, 0.75}, Case{{false, false}, 0.125},
                        Case{{true, true}, 0.875}, Case{{true, false, true}, 0.6875}}) {
    const std::size_t want = s.aimed(c.fraction);
    EXPECT_EQ(s.class_of(s.heap.allocate(kSize, Path::from_path(path_of(c.turns), nullptr))), s.index(want))
        << "fraction " << c.fraction;
  }
}

TEST(Predicates, PathTakesTheNearestClassWhenItsAimHasNoFreeChunk) {
  // 0.75 of the span is the last byte of class 11: class 12 is one byte away, class 10 a class away.
  AllClasses s(11);
  ASSERT_EQ(s.aimed(0.75), 11u);
  EXPECT_EQ(s.class_of(s.heap.allocate(kSize, Path::from_path(path_of({true}), nullptr))), s.index(12));
}

TEST(Predicates, PathSpansTheSizeClassesMemory) {
  ThreeClasses s;  // classes 2, 5, 9 have free chunks; the span is the whole slab, 0..15
  // 0.5 of it is the last byte of class 7: 4097 bytes below class 9, 8192 above 5.
  EXPECT_EQ(s.class_of(s.heap.allocate(kSize, Path::from_path(path_of({}), nullptr))), s.index(9));
  // 0.375: class 5 itself.
  EXPECT_EQ(s.class_of(s.heap.allocate(kSize, Path::from_path(path_of({false, true}), nullptr))), s.index(5));
  // 0.875 (class 13): nearest is 9; 0.0625 (class 0): nearest is 2.
  EXPECT_EQ(s.class_of(s.heap.allocate(kSize, Path::from_path(path_of({true, true}), nullptr))), s.index(9));
  EXPECT_EQ(s.class_of(s.heap.allocate(kSize, Path::from_path(path_of({false, false, false}), nullptr))), s.index(2));
}

TEST(Predicates, PathWithoutAPathBehavesAsMatch) {
  ThreeClasses s;
  EXPECT_EQ(s.class_of(s.heap.allocate(kSize, Path::from_hint(reinterpret_cast<void*>(s.class_start(9) + 8)))),
            s.index(9));
}

/// A user predicate (the docs' example): always the highest K-class.
struct Highest {
  int steer(const kclass&, unsigned) const noexcept { return 1; }
  static Highest from_hint(const void*) noexcept { return {}; }
};

TEST(Predicates, UserPredicateSteersTheWalk) {
  ThreeClasses s;
  static_assert(tailor::locality::allocation_predicate<Highest>);
  EXPECT_EQ(s.class_of(s.heap.allocate(kSize, Highest{})), s.index(9));
}

TEST(Predicates, AFreedChunkGoesBackToItsClass) {
  ThreeClasses s;
  s.free_in(12);
  std::size_t in12 = 0;
  s.heap.for_each_free_kclass(kSize, [&](const kclass& c) {
    if (c.index() == s.index(12)) in12 = c.free_chunks();
  });
  EXPECT_EQ(in12, 1u);
  // A class that runs out leaves the tree.
  EXPECT_EQ(s.class_of(s.heap.allocate(kSize, Match::from_hint(reinterpret_cast<void*>(s.class_start(12))))),
            s.index(12));
  EXPECT_EQ(s.heap.free_kclasses(kSize), 3u);
  EXPECT_TRUE(s.heap.index_is_valid(kSize));
}

TEST(Predicates, OtherSizeClassesAreSeparate) {
  ThreeClasses s;
  void* p = s.heap.allocate(32, Match::from_hint(reinterpret_cast<void*>(s.class_start(5))));
  EXPECT_NE(s.class_of(p), s.index(5));  // 32-byte chunks live in their own slab
  EXPECT_EQ(s.heap.free_kclasses(kSize), 3u);
}

}  // namespace
