// SPDX-License-Identifier: MIT
// The locality heap as an allocator: random allocate/free sequences over
// every K and size, checked for overlap, alignment, usable size and the
// index invariants; large and over-aligned requests; the C entry points, the
// allocator (with the hint overload of allocator_traits) and the memory
// resource.
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
