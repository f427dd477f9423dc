// SPDX-License-Identifier: MIT
// The locality heap as an allocator: random allocate/free sequences over
// every K and size, checked for overlap, alignment, usable size and the
// index invariants; large and over-aligned requests; the C entry points, the
// allocator (with the hint overload of allocator_traits) and the memory
// resource; empty slabs going back to the source.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <list>
#include <map>
#include <memory_resource>
#include <random>
#include <vector>

#include "tailor/locality.h"

namespace {

using tailor::locality_heap;
using tailor::locality::First;
using tailor::locality::Match;

struct Block {
  unsigned char* p;
  std::size_t bytes;
  unsigned char tag;
};

class RandomSequence : public ::testing::TestWithParam<unsigned> {};

TEST_P(RandomSequence, BlocksNeverOverlapAndKeepTheirContents) {
  locality_heap heap{{GetParam(), false}};
  std::mt19937_64 rng(GetParam());
  std::vector<Block> live;
  std::map<std::uintptr_t, std::uintptr_t> ranges;  // start -> end
  for (int step = 0; step < 20000; ++step) {
    if (live.empty() || rng() % 100 < 60) {
      const std::size_t bytes = rng() % 20 == 0 ? 1025 + rng() % 9000 : rng() % 1025;
      const void* hint = live.empty() ? nullptr : live[rng() % live.size()].p;
      void* q = rng() % 2 ? heap.allocate(bytes, Match::from_hint(hint)) : heap.allocate(bytes, First{});
      ASSERT_NE(q, nullptr);
      auto* p = static_cast<unsigned char*>(q);
      ASSERT_EQ(reinterpret_cast<std::uintptr_t>(p) % 16, 0u);
      ASSERT_GE(heap.usable_size(p), bytes);
      const auto a = reinterpret_cast<std::uintptr_t>(p);
      auto next = ranges.lower_bound(a);
      if (next != ranges.end()) {
        ASSERT_GE(next->first, a + std::max<std::size_t>(bytes, 1));
      }
      if (next != ranges.begin()) {
        ASSERT_LE(std::prev(next)->second, a);
      }
      ranges[a] = a + std::max<std::size_t>(bytes, 1);
      const auto tag = static_cast<unsigned char>(rng());
      std::memset(p, tag, bytes);
      live.push_back({p, bytes, tag});
    } else {
      const std::size_t i = rng() % live.size();
      const Block b = live[i];
      for (std::size_t j = 0; j < b.bytes; ++j) ASSERT_EQ(b.p[j], b.tag);
      ranges.erase(reinterpret_cast<std::uintptr_t>(b.p));
      heap.deallocate(b.p);
      live[i] = live.back();
      live.pop_back();
    }
  }
  for (std::size_t bytes = 16; bytes <= locality_heap::kMaxSmall; bytes += 16)
    ASSERT_TRUE(heap.index_is_valid(bytes)) << bytes;
  for (const Block& b : live) heap.deallocate(b.p);
}

INSTANTIATE_TEST_SUITE_P(EveryK, RandomSequence, ::testing::Values(40u, 44u, 48u, 52u, 54u, 56u, 58u));

TEST(Heap, DefaultKIsOnePagePerClass) {
  locality_heap heap;
  EXPECT_EQ(heap.span(), tailor::locality::mmap_region_source::page_size());
  EXPECT_EQ(heap.k(), 52u);  // 4 KiB pages on this platform
}

TEST(Heap, RejectsKOutOfRange) {
  EXPECT_THROW(locality_heap({39, false}), std::invalid_argument);
  EXPECT_THROW(locality_heap({59, false}), std::invalid_argument);
}

TEST(Heap, LargeAndOverAlignedBlocks) {
  locality_heap heap;
  void* big = heap.allocate(1 << 20);
  ASSERT_NE(big, nullptr);
  std::memset(big, 1, 1 << 20);
  EXPECT_GE(heap.usable_size(big), std::size_t{1} << 20);
  void* aligned = heap.allocate(100, First{}, 4096);
  ASSERT_NE(aligned, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(aligned) % 4096, 0u);
  heap.deallocate(big);
  heap.deallocate(aligned);
  heap.deallocate(nullptr);
}

TEST(Heap, SequentialHintsStayInOneClass) {
  locality_heap heap;
  void* prev = heap.allocate(32);
  int same = 0;
  for (int i = 0; i < 100; ++i) {
    void* p = heap.allocate(32, Match::from_hint(prev));
    same += heap.kclass_of(p) == heap.kclass_of(prev);
    prev = p;
  }
  // A 4 KiB class holds 128 chunks of 32 bytes: at most one change of class in 100.
  EXPECT_GE(same, 99);
}

TEST(CApi, MallocNearAndFreeNear) {
  void* a = tailor_malloc_near(40, nullptr);
  ASSERT_NE(a, nullptr);
  void* b = tailor_malloc_near(40, a);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(tailor::default_locality_heap().kclass_of(a), tailor::default_locality_heap().kclass_of(b));
  EXPECT_EQ(tailor_near_usable_size(a), 48u);
  std::memset(b, 0, 40);
  tailor_free_near(a);
  tailor_free_near(b);
  tailor_free_near(nullptr);
}

TEST(Allocator, AllocatorTraitsForwardsTheHint) {
  locality_heap heap;
  tailor::allocator<long, Match> a(heap);
  using traits = std::allocator_traits<decltype(a)>;
  long* first = traits::allocate(a, 2);
  long* near = traits::allocate(a, 2, first);
  EXPECT_EQ(heap.kclass_of(first), heap.kclass_of(near));
  traits::deallocate(a, near, 2);
  traits::deallocate(a, first, 2);
}

TEST(Allocator, WorksWithStandardContainers) {
  locality_heap heap;
  {
    tailor::allocator<int> a(heap);
    std::vector<int, tailor::allocator<int>> v(a);
    std::list<int, tailor::allocator<int>> l(a);
    for (int i = 0; i < 10000; ++i) {
      v.push_back(i);
      l.push_front(i);
    }
    EXPECT_EQ(v[9999], 9999);
    EXPECT_EQ(l.front(), 9999);
    EXPECT_TRUE(a == tailor::allocator<double>(heap));
    locality_heap other;
    EXPECT_FALSE(a == tailor::allocator<int>(other));
  }
  EXPECT_TRUE(heap.index_is_valid(32));
}

TEST(MemoryResource, PmrContainers) {
  locality_heap heap;
  tailor::locality_resource r(heap);
  std::pmr::vector<std::pmr::string> v(&r);
  for (int i = 0; i < 1000; ++i) v.emplace_back(std::string(static_cast<std::size_t>(i % 70), 'x'));
  EXPECT_EQ(v[69].size(), 69u);
  void* p = r.allocate(64, 256);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 256, 0u);
  r.deallocate(p, 64, 256);
  tailor::locality_resource same(heap);
  EXPECT_TRUE(r.is_equal(same));
  EXPECT_FALSE(r.is_equal(*std::pmr::new_delete_resource()));
}

}  // namespace

#if defined(__SANITIZE_ADDRESS__)
namespace {
// Under ASan the heap poisons free chunks, so a use after free inside
// memory ASan does not own (the heap's mmap'd slabs) is still caught.
TEST(HeapDeathTest, UseAfterFreeIsCaughtUnderAsan) {
  EXPECT_DEATH(
      {
        locality_heap heap;
        auto* p = static_cast<volatile int*>(heap.allocate(32));
        *p = 1;
        heap.deallocate(const_cast<int*>(p));
        *p = 2;
      },
      "use-after-poison");
}
}  // namespace
#endif

// Empty slabs go back to the source (heap_options::empty_slab_hold).
namespace {

// The mmap source, counting the slabs (64 KiB regions at 64 KiB) it has out.
struct counting_source : tailor::locality::mmap_region_source {
  std::size_t* outstanding;
  std::size_t* obtained;
  void* obtain(std::size_t bytes, std::size_t align) noexcept {
    void* p = mmap_region_source::obtain(bytes, align);
    if (p != nullptr && align == bytes) ++*outstanding, ++*obtained;
    return p;
  }
  void give_back(void* p, std::size_t bytes) noexcept {
    if (bytes == std::size_t{64} << 10 && (reinterpret_cast<std::uintptr_t>(p) & (bytes - 1)) == 0) --*outstanding;
    mmap_region_source::give_back(p, bytes);
  }
};
using counting_heap = tailor::locality::basic_locality_heap<counting_source>;

struct SlabReturn : ::testing::Test {
  std::size_t outstanding = 0, obtained = 0;
  counting_source source() { return counting_source{{}, &outstanding, &obtained}; }
  template <class Heap>
  static void build_and_clear(Heap& heap, int n) {
    std::vector<void*> blocks;
    void* prev = nullptr;
    for (int i = 0; i < n; ++i) blocks.push_back(prev = heap.allocate(32, Match::from_hint(prev)));
    for (void* p : blocks) heap.deallocate(p);
  }
};

TEST_F(SlabReturn, AtOnceWithHoldZero) {
  counting_heap heap({52, false, 0}, source());
  build_and_clear(heap, 20000);  // about 10 slabs of 32-byte chunks
  EXPECT_GE(obtained, 9u);
  EXPECT_EQ(outstanding, 0u);
  EXPECT_EQ(heap.slab_count(), 0u);
  EXPECT_TRUE(heap.index_is_valid(32));
  EXPECT_EQ(heap.free_kclasses(32), 0u);
  build_and_clear(heap, 20000);  // the heap works on after giving everything back
  EXPECT_EQ(outstanding, 0u);
}

TEST_F(SlabReturn, NeverWithNegativeHoldUntilTrim) {
  counting_heap heap({52, false, -1}, source());
  build_and_clear(heap, 20000);
  EXPECT_EQ(outstanding, heap.slab_count());
  EXPECT_EQ(heap.empty_slab_count(), heap.slab_count());
  heap.trim();
  EXPECT_EQ(outstanding, 0u);
  EXPECT_EQ(heap.empty_slab_count(), 0u);
  EXPECT_TRUE(heap.index_is_valid(32));
}

TEST_F(SlabReturn, ClearAndRebuildReusesSlabs) {
  counting_heap heap({52, false}, source());  // the default hold
  build_and_clear(heap, 20000);
  const std::size_t first = obtained;
  for (int round = 0; round < 10; ++round) build_and_clear(heap, 20000);
  EXPECT_EQ(obtained, first);  // the hysteresis: no slab traded with the source
  EXPECT_EQ(outstanding, first);
}

TEST_F(SlabReturn, AfterTheHold) {
  counting_heap heap({52, false, 1}, source());
  build_and_clear(heap, 20000);
  const std::size_t slabs = heap.slab_count();
  EXPECT_EQ(outstanding, slabs);
  // A program that goes on with one chunk at a time: after as many
  // operations as the heap holds chunks, the idle slabs go back (the check
  // runs when a slab empties, here at every free).
  std::size_t ops = 0;
  while (heap.slab_count() > 1 && ops < 10 * 20000) {
    heap.deallocate(heap.allocate(32));
    ops += 2;
  }
  EXPECT_EQ(heap.slab_count(), 1u);  // the one in use
  EXPECT_EQ(outstanding, 1u);
  // Not before the hold: the first slab emptied about 18,000 operations
  // before the clear ended, and the heap held about 20,000 chunks.
  EXPECT_GE(slabs, 9u);
  EXPECT_GT(ops, 2000u);
  EXPECT_TRUE(heap.index_is_valid(32));
}

TEST_F(SlabReturn, PartlyUsedSlabsStay) {
  counting_heap heap({52, false, 0}, source());
  std::vector<void*> blocks;
  for (int i = 0; i < 20000; ++i) blocks.push_back(heap.allocate(32));
  const std::size_t slabs = heap.slab_count();
  for (std::size_t i = 0; i < blocks.size(); ++i)
    if (i % 100 != 0) heap.deallocate(blocks[i]);  // one chunk in 100 stays: every slab keeps some
  EXPECT_EQ(heap.slab_count(), slabs);
  for (std::size_t i = 0; i < blocks.size(); i += 100) {
    auto* q = static_cast<int*>(blocks[i]);
    *q = 1;  // still usable
    heap.deallocate(q);
  }
  EXPECT_EQ(heap.slab_count(), 0u);
}

}  // namespace
