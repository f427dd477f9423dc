// SPDX-License-Identifier: MIT
// Region pools (src/alloc/region.h): libtailor's memory lent to another
// allocator, whose blocks tailor_free (the same code as libtailor's free),
// tailor_realloc and tailor_usable_size hand back to it. Then the locality
// heap on such a pool (libtailor_region_source) with many threads that
// allocate near hints and free each other's blocks with tailor_free: it
// runs under TSan (make test-tsan), where libtailor cannot be the process's
// malloc, so the core's tailor_free stands in for free.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "common/fork_child.h"
#include "common/handoff_queue.h"
#include "tailor/locality/heap.h"
#include "tailor/locality/libtailor_region_source.h"
#include "tailor/tailor.h"

namespace {

// A toy owner: one 64-byte block per region, counting what free hands back.
struct Counter {
  std::atomic<int> freed{0};
  std::atomic<void*> last{nullptr};
};
void count_free(void* owner, void* p) {
  auto* c = static_cast<Counter*>(owner);
  c->last = p;
  ++c->freed;
}
std::size_t usable_64(void*, const void*) { return 64; }

TEST(Region, ObtainAlignsAndFreeReachesTheOwner) {
  Counter counter;
  const tailor_region_hooks hooks{&count_free, &usable_64, &counter};
  tailor_region_pool* pool = tailor_region_pool_create(&hooks);
  ASSERT_NE(pool, nullptr);
  const std::size_t max_align = tailor_region_max_align();
  EXPECT_GE(max_align, std::size_t{512} << 10);
  EXPECT_EQ(tailor_region_page_size(), 4096u);
  std::vector<std::pair<void*, std::size_t>> regions;
  for (std::size_t align = 4096; align <= max_align; align *= 4) {
    for (std::size_t bytes : {std::size_t{4096}, std::size_t{64} << 10, align, std::size_t{3} << 20}) {
      void* r = tailor_region_obtain(pool, bytes, align);
      ASSERT_NE(r, nullptr) << bytes << " at " << align;
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(r) % align, 0u);
      std::memset(r, 0xab, bytes);
      regions.emplace_back(r, bytes);
    }
  }
  // Regions never overlap.
  for (std::size_t i = 0; i < regions.size(); ++i)
    for (std::size_t j = i + 1; j < regions.size(); ++j) {
      const auto a = reinterpret_cast<std::uintptr_t>(regions[i].first);
      const auto b = reinterpret_cast<std::uintptr_t>(regions[j].first);
      EXPECT_TRUE(a + regions[i].second <= b || b + regions[j].second <= a);
    }
  // A block inside a region, freed and measured through the core's API.
  auto* inside = static_cast<char*>(regions[1].first) + 4096;
  EXPECT_EQ(tailor_usable_size(inside), 64u);
  tailor_free(inside);
  EXPECT_EQ(counter.freed.load(), 1);
  EXPECT_EQ(counter.last.load(), inside);
  // realloc beyond the block moves it into libtailor proper and frees it in the region.
  std::memset(inside, 7, 64);
  auto* moved = static_cast<char*>(tailor_realloc(inside, 1000));
  ASSERT_NE(moved, nullptr);
  EXPECT_EQ(moved[63], 7);
  EXPECT_EQ(counter.freed.load(), 2);
  tailor_free(moved);
  EXPECT_EQ(counter.freed.load(), 2);
  // A realloc that fits stays where it is.
  EXPECT_EQ(tailor_realloc(inside, 40), inside);
  for (auto& [r, bytes] : regions) tailor_region_give_back(pool, r, bytes);
  tailor_region_pool_destroy(pool);
}

TEST(Region, OutOfRangeRequestsAreRefused) {
  Counter counter;
  const tailor_region_hooks hooks{&count_free, &usable_64, &counter};
  EXPECT_EQ(tailor_region_pool_create(nullptr), nullptr);
  const tailor_region_hooks missing{nullptr, &usable_64, &counter};
  EXPECT_EQ(tailor_region_pool_create(&missing), nullptr);
  tailor_region_pool* pool = tailor_region_pool_create(&hooks);
  ASSERT_NE(pool, nullptr);
  EXPECT_EQ(tailor_region_obtain(pool, 0, 4096), nullptr);
  EXPECT_EQ(tailor_region_obtain(pool, 4096, 3000), nullptr);
  EXPECT_EQ(tailor_region_obtain(pool, 4096, tailor_region_max_align() * 2), nullptr);
  // A region larger than a segment gets a mapping of its own; free still finds its owner.
  const std::size_t big = std::size_t{80} << 20;
  void* r = tailor_region_obtain(pool, big, 1 << 16);
  ASSERT_NE(r, nullptr);
  static_cast<char*>(r)[big - 1] = 1;
  tailor_free(static_cast<char*>(r) + 128);
  EXPECT_EQ(counter.freed.load(), 1);
  // Giving back something that is not a region start is reported, not done.
  testing::internal::CaptureStderr();
  tailor_region_give_back(pool, static_cast<char*>(r) + 4096, 4096);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("not the start of a region"), std::string::npos);
  tailor_region_give_back(pool, r, big);
  tailor_region_pool_destroy(pool);  // also unmaps regions not given back
}

TEST(Region, GivenBackSpansAreReused) {
  Counter counter;
  const tailor_region_hooks hooks{&count_free, &usable_64, &counter};
  tailor_region_pool* pool = tailor_region_pool_create(&hooks);
  ASSERT_NE(pool, nullptr);
  tailor_stats before{};
  tailor_get_stats(&before);
  for (int round = 0; round < 200; ++round) {
    std::vector<void*> rs;
    for (int i = 0; i < 64; ++i) rs.push_back(tailor_region_obtain(pool, 64 << 10, 64 << 10));
    for (void* r : rs) {
      ASSERT_NE(r, nullptr);
      tailor_region_give_back(pool, r, 64 << 10);
    }
  }
  tailor_stats after{};
  tailor_get_stats(&after);
  EXPECT_LE(after.segments_mapped, before.segments_mapped + 1);  // 64 x 64 KiB fit one segment
  tailor_region_pool_destroy(pool);
}

using region_heap = tailor::locality::basic_locality_heap<tailor::locality::libtailor_region_source>;

TEST(Region, LocalityHeapBlocksAreReleasedByFree) {
  region_heap heap({52, false, -1}, tailor::locality::libtailor_region_source(tailor::locality::linked_region_api()));
  std::vector<void*> blocks;
  void* prev = nullptr;
  for (int i = 0; i < 5000; ++i) {
    void* p = heap.allocate(24, tailor::locality::Match::from_hint(prev));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(tailor_usable_size(p), 32u);
    blocks.push_back(p);
    prev = p;
  }
  void* large = heap.allocate(100000);
  ASSERT_NE(large, nullptr);
  EXPECT_GE(tailor_usable_size(large), 100000u);
  tailor_free(large);
  for (void* p : blocks) tailor_free(p);  // plain (core) free: back to their K-classes
  EXPECT_EQ(heap.empty_slab_count(), heap.slab_count());
  EXPECT_TRUE(heap.index_is_valid(32));
  heap.trim();
  EXPECT_EQ(heap.slab_count(), 0u);
}

TEST(Region, HeapRefusesSlabsLargerThanTheSourceAligns) {
  // K = 40 needs 16 MiB slabs aligned to 16 MiB; fine with 32 MiB segments.
  EXPECT_NO_THROW(region_heap({40, false}, tailor::locality::libtailor_region_source(
                                               tailor::locality::linked_region_api())));
  struct small_source : tailor::locality::libtailor_region_source {
    using libtailor_region_source::libtailor_region_source;
    std::size_t max_align() const noexcept { return std::size_t{1} << 20; }
  };
  using small_heap = tailor::locality::basic_locality_heap<small_source>;
  EXPECT_THROW(small_heap({40, false}, small_source(tailor::locality::linked_region_api())), std::invalid_argument);
}

// Threads allocate near their own previous block, hand every block to a
// queue, and free blocks other threads allocated, with tailor_free.
TEST(Stress, LocalityHeapCrossThreadFrees) {
  region_heap heap({52, true}, tailor::locality::libtailor_region_source(tailor::locality::linked_region_api()));
  constexpr int kThreads = 4, kPerThread = 20000;
  tailor::test::handoff_queue queue(256);
  std::atomic<long> bad{0};
  auto work = [&](int id) {
    void* prev = nullptr;
    for (int i = 0; i < kPerThread; ++i) {
      const std::size_t bytes = 16 + static_cast<std::size_t>((i * 7 + id) % 12) * 16;
      auto* p = static_cast<unsigned char*>(heap.allocate(bytes, tailor::locality::Match::from_hint(prev)));
      if (p == nullptr || tailor_usable_size(p) < bytes) {
        ++bad;
        continue;
      }
      std::memset(p, id + 1, bytes);
      prev = p;
      if (void* victim = queue.exchange(p); victim != nullptr) {
        if (i % 3 == 0) {
          void* q = tailor_realloc(victim, 2000);  // moves into libtailor proper
          if (q == nullptr) ++bad;
          tailor_free(q);
        } else {
          tailor_free(victim);
        }
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(work, t);
  for (auto& t : threads) t.join();
  EXPECT_EQ(bad.load(), 0);
  for (void* p : queue.drain()) tailor_free(p);
  for (std::size_t bytes = 16; bytes <= 192; bytes += 16) EXPECT_TRUE(heap.index_is_valid(bytes)) << bytes;
  heap.trim();
  EXPECT_EQ(heap.slab_count(), 0u);
}

// A child forked while another thread is inside a pool (holding its lock)
// must find the pool usable: the pools' fork handlers take every pool's
// lock before fork. Not in make test-tsan's filter: TSan and a fork beside
// a running thread do not mix.
TEST(RegionFork, ChildObtainsWhileAnotherThreadWorksInThePool) {
  Counter counter;
  const tailor_region_hooks hooks{&count_free, &usable_64, &counter};
  tailor_region_pool* pool = tailor_region_pool_create(&hooks);
  ASSERT_NE(pool, nullptr);
  std::atomic<bool> stop{false};
  std::thread worker([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      void* r = tailor_region_obtain(pool, 64 << 10, 4096);
      if (r != nullptr) tailor_region_give_back(pool, r, 64 << 10);
    }
  });
  int hung = 0, failed = 0;
  for (int i = 0; i < 100 && hung == 0; ++i) {
    const auto end = tailor::test::run_in_child([&] {
      void* r = tailor_region_obtain(pool, 64 << 10, 4096);
      if (r != nullptr) tailor_region_give_back(pool, r, 64 << 10);
      return r != nullptr;
    });
    hung += end == tailor::test::ChildEnd::kHung;
    failed += end == tailor::test::ChildEnd::kFailed || end == tailor::test::ChildEnd::kNoFork;
  }
  stop = true;
  worker.join();
  tailor_region_pool_destroy(pool);
  EXPECT_EQ(hung, 0) << "children that never finished (the pool's lock held across fork)";
  EXPECT_EQ(failed, 0);
}

}  // namespace
