// SPDX-License-Identifier: MIT
// Which back end the locality heap runs on, and what that gives: with
// libtailor as the process's malloc (test_locality_linked links it;
// locality.preload runs test_locality with LD_PRELOAD), memory from
// tailor_malloc_near, tailor::allocator, the pmr resource and the
// containers is released with plain free, resized with realloc and measured
// with malloc_usable_size, from any thread. Without libtailor (glibc,
// sanitizers) the heap falls back to mmap; the tests that need libtailor
// are skipped there.
#include <gtest/gtest.h>
#include <malloc.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "common/fork_child.h"
#include "common/handoff_queue.h"
#include "tailor/list.h"
#include "tailor/locality.h"
#include "tailor/map.h"
#include "tailor/set.h"

namespace {

bool on_libtailor() { return tailor::default_locality_heap().source().on_libtailor(); }

// TAILOR_TEST_EXPECT_BACKEND=libtailor|mmap says which one this run must find.
TEST(Backend, IsTheExpectedOne) {
  const char* expect = std::getenv("TAILOR_TEST_EXPECT_BACKEND");
  const std::string want = expect != nullptr ? expect : "mmap";
  EXPECT_EQ(on_libtailor() ? "libtailor" : "mmap", want);
  tailor::locality_heap own;
  EXPECT_EQ(own.source().on_libtailor(), on_libtailor());
}

TEST(Backend, PlainFreeReallocAndUsableSize) {
  if (!on_libtailor()) GTEST_SKIP() << "libtailor is not this process's malloc";
  void* a = tailor_malloc_near(40, nullptr);
  ASSERT_NE(a, nullptr);
  void* b = tailor_malloc_near(40, a);
  EXPECT_EQ(tailor::default_locality_heap().kclass_of(a), tailor::default_locality_heap().kclass_of(b));
  EXPECT_EQ(malloc_usable_size(a), 48u);
  std::memset(a, 0x5a, 40);
  void* same = realloc(a, 44);  // fits its chunk: stays
  EXPECT_EQ(same, a);
  auto* grown = static_cast<unsigned char*>(realloc(a, 5000));  // moves into libtailor proper
  ASSERT_NE(grown, nullptr);
  for (int i = 0; i < 40; ++i) ASSERT_EQ(grown[i], 0x5a);
  free(grown);
  void* keep = tailor_malloc_near(40, b);  // a neighbour in b's K-class
  ASSERT_EQ(tailor::default_locality_heap().kclass_of(keep), tailor::default_locality_heap().kclass_of(b));
  const auto b_address = reinterpret_cast<std::uintptr_t>(b);
  free(b);
  // The chunk went back to its K-class, on top of its free list: the next
  // request hinted there gets that very chunk.
  void* c = tailor_malloc_near(40, keep);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(c), b_address);
  free(c);
  free(keep);
  void* big = tailor_malloc_near(1 << 20, nullptr);  // a region of its own
  ASSERT_NE(big, nullptr);
  EXPECT_GE(malloc_usable_size(big), std::size_t{1} << 20);
  free(big);
  free(nullptr);
  tailor_free_near(tailor_malloc_near(8, nullptr));  // still works too
}

TEST(Backend, AllocatorAndResourceMemoryGoesToFree) {
  if (!on_libtailor()) GTEST_SKIP() << "libtailor is not this process's malloc";
  tailor::locality_heap heap({52, false, 0});
  tailor::allocator<long> alloc(heap);
  long* p = alloc.allocate(3);
  p[2] = 7;
  EXPECT_EQ(malloc_usable_size(p), 32u);
  free(p);
  tailor::locality_resource r(heap);
  void* q = r.allocate(200, 64);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(q) % 64, 0u);
  free(q);
  EXPECT_EQ(heap.slab_count(), 0u);  // hold 0: both slabs went back at once
}

TEST(Backend, ContainersOnTheDefaultHeap) {
  // Every run: the containers with their default allocator (the process-wide heap).
  tailor::list<int> l;
  tailor::set<int> s;
  tailor::map<int, std::string> m;
  for (int i = 0; i < 20000; ++i) {
    l.push_back(i);
    s.insert((i * 7919) % 20000);
    m.emplace(i, std::to_string(i));
  }
  EXPECT_EQ(l.size(), 20000u);
  EXPECT_EQ(s.size(), 20000u);
  EXPECT_EQ(*s.begin(), 0);
  EXPECT_EQ(m.find(1234)->second, "1234");
  l.clear();
  s.clear();
  m.clear();
}

// Threads allocate near their previous block from the process-wide heap and
// plain-free blocks that other threads allocated.
TEST(Backend, CrossThreadPlainFrees) {
  if (!on_libtailor()) GTEST_SKIP() << "libtailor is not this process's malloc";
  constexpr int kThreads = 4, kPerThread = 20000;
  tailor::test::handoff_queue queue(512);
  auto work = [&](int id) {
    void* prev = nullptr;
    for (int i = 0; i < kPerThread; ++i) {
      const std::size_t bytes = 16 + static_cast<std::size_t>((i + id) % 8) * 16;
      void* p = tailor_malloc_near(bytes, prev);
      ASSERT_NE(p, nullptr);
      std::memset(p, id, bytes);
      prev = p;
      free(queue.exchange(p));
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(work, t);
  for (auto& t : threads) t.join();
  for (void* p : queue.drain()) free(p);
  for (std::size_t bytes = 16; bytes <= 128; bytes += 16)
    EXPECT_TRUE(tailor::default_locality_heap().index_is_valid(bytes)) << bytes;
}

// A fork while another thread is inside the process-wide heap (and, on
// libtailor, inside its region pool: blocks above 1 KiB take a region
// each) must leave the child with usable locks. Before the fork handlers, a
// child forked while the other thread held either lock spun forever on its
// first call.
TEST(Fork, ChildUsesTheHeapWhileAnotherThreadWorksInIt) {
  std::atomic<bool> stop{false};
  std::thread worker([&] {
    std::vector<void*> blocks;
    while (!stop.load(std::memory_order_relaxed)) {
      for (int i = 0; i < 32; ++i) blocks.push_back(tailor_malloc_near(48, blocks.empty() ? nullptr : blocks.back()));
      blocks.push_back(tailor_malloc_near(8192, nullptr));
      for (void* p : blocks) tailor_free_near(p);
      blocks.clear();
    }
  });
  int hung = 0, failed = 0;
  for (int i = 0; i < 100 && hung == 0; ++i) {
    const auto end = tailor::test::run_in_child([&] {
      void* small = tailor_malloc_near(48, nullptr);
      void* large = tailor_malloc_near(8192, nullptr);
      const bool ok = small != nullptr && large != nullptr;
      tailor_free_near(small);
      tailor_free_near(large);
      return ok;
    });
    hung += end == tailor::test::ChildEnd::kHung;
    failed += end == tailor::test::ChildEnd::kFailed || end == tailor::test::ChildEnd::kNoFork;
  }
  stop = true;
  worker.join();
  EXPECT_EQ(hung, 0) << "children that never finished (a lock held across fork)";
  EXPECT_EQ(failed, 0);
}

}  // namespace
