// SPDX-License-Identifier: MIT
// Heap misuse in the default mode (docs/allocator.md, "Heap misuse"), as
// death tests on the core API: each misuse stops the process with one line
// naming the call, the error, the address and the block's size. And the
// registry of segments follows every mapping that moves.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "alloc/alloc.h"  // delete_sized_inline: operator delete(p, size) of the core
#include "tailor/tailor.h"

namespace {

void* opaque(void* p) {
  asm volatile("" : "+r"(p));
  return p;
}

TEST(Misuse, DoubleFreeSmallLargeHuge) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        void* p = tailor_malloc(48);
        tailor_free(p);
        tailor_free(opaque(p));
      },
      "^tailor: free\\(\\): double free of 0x[0-9a-f]+ \\(block of 48 bytes, already free\\)\n");
  EXPECT_DEATH(
      {
        void* p = tailor_malloc(300000);
        tailor_free(p);
        tailor_free(opaque(p));
      },
      "tailor: free\\(\\): double free of 0x[0-9a-f]+ \\(already free, its page too\\)");
  EXPECT_DEATH(
      {
        void* a = tailor_malloc(32);
        void* b = tailor_malloc(32);
        tailor_free(a);
        tailor_free(b);
        tailor_free(opaque(a));
      },
      "double free of 0x[0-9a-f]+ \\(block of 32 bytes");
}

TEST(Misuse, InvalidPointers) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        char local[32];
        tailor_free(opaque(local + 16));
      },
      "tailor: free\\(\\): invalid pointer 0x[0-9a-f]+ \\(not allocated by libtailor");
  EXPECT_DEATH(
      {
        auto* p = static_cast<char*>(tailor_malloc(64));
        tailor_free(opaque(p + 16));
      },
      "invalid pointer 0x[0-9a-f]+ \\(not the start of a block: 16 bytes into the block of 64 bytes at 0x");
  EXPECT_DEATH(
      {
        auto* p = static_cast<char*>(tailor_malloc(1 << 20));
        tailor_free(opaque(p + 4096));
      },
      "not the start of a block: 4096 bytes into the block of");
  EXPECT_DEATH(
      {
        auto* p = static_cast<char*>(tailor_malloc(64 << 20));
        tailor_free(opaque(p + 16));
      },
      "invalid pointer");
  EXPECT_DEATH(
      {
        void* p = tailor_malloc(48);
        tailor_free(p);
        (void)tailor_realloc(opaque(p), 100);
      },
      "tailor: realloc\\(\\): block already freed: 0x[0-9a-f]+");
}

// Another thread's free of a block checks it as the owner's free does
// (free_remote): small and middle blocks, the same messages.
TEST(Misuse, AnotherThreadsFreeIsCheckedAsTheOwnersIs) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto elsewhere = [](void* p) { std::thread([p] { tailor_free(opaque(p)); }).join(); };
  EXPECT_DEATH(
      {
        void* p = tailor_malloc(48);
        elsewhere(p);
        elsewhere(p);
      },
      "^tailor: free\\(\\): double free of 0x[0-9a-f]+ \\(block of 48 bytes, already free\\)\n");
  EXPECT_DEATH(
      {
        void* p = tailor_malloc(48);
        tailor_free(p);
        elsewhere(p);
      },
      "^tailor: free\\(\\): double free of 0x[0-9a-f]+ \\(block of 48 bytes, already free\\)\n");
  EXPECT_DEATH(
      {
        auto* p = static_cast<char*>(tailor_malloc(64));
        elsewhere(p + 16);
      },
      "invalid pointer 0x[0-9a-f]+ \\(not the start of a block: 16 bytes into the block of 64 bytes at 0x");
  EXPECT_DEATH(
      {
        auto* p = static_cast<char*>(tailor_malloc(20000));
        elsewhere(p + 64);
      },
      "not the start of a block: 64 bytes into the block of");
  EXPECT_DEATH(
      {
        void* p = tailor_malloc(20000);
        elsewhere(p);
        elsewhere(p);
      },
      "double free of 0x[0-9a-f]+ \\(block of [0-9]+ bytes, already free\\)");
  // And the good frees of every small class from another thread.
  std::vector<void*> v;
  for (std::size_t n = 1; n <= 1024; n += 7) v.push_back(tailor_malloc(n));
  std::thread([&] {
    for (void* p : v) tailor_free(p);
  }).join();
}

// A thread with a heap sets other threads' frees aside and checks them
// later (heap.h, Heap::deferred): at the latest when it ends, with the
// same messages.
TEST(Misuse, AnotherThreadsFreesSetAsideAreCheckedWhenLookedAt) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto elsewhere = [](void* p, void* q) {
    std::thread([p, q] {
      tailor_free(tailor_malloc(8));  // a heap of its own: its next foreign frees are set aside
      tailor_free(opaque(p));
      tailor_free(opaque(q));
    }).join();
  };
  EXPECT_DEATH(
      {
        void* p = tailor_malloc(48);
        elsewhere(p, p);
      },
      "^tailor: free\\(\\): double free of 0x[0-9a-f]+ \\(block of 48 bytes, already free\\)\n");
  EXPECT_DEATH(
      {
        void* p = tailor_malloc(256);  // a stashed class
        void* q = tailor_malloc(256);
        tailor_free(p);
        elsewhere(q, p);
      },
      "^tailor: free\\(\\): double free of 0x[0-9a-f]+ \\(block of 256 bytes, already free\\)\n");
  EXPECT_DEATH(
      {
        auto* p = static_cast<char*>(tailor_malloc(64));
        void* q = tailor_malloc(64);
        elsewhere(q, p + 16);
      },
      "invalid pointer 0x[0-9a-f]+ \\(not the start of a block: 16 bytes into the block of 64 bytes at 0x");
}

// The slice map (segment.h, slice_classes) knows a slice's class only
// while a class page holds it: a slice that held one and now starts
// a middle block must send that block's cross-thread free to the
// descriptor, not to the old class, which would take the middle block for
// a small one (the freeing thread would keep it for its next malloc of
// that class). A block of another class stays live throughout, so that
// the segment is not unmapped and mapped again with a zeroed map.
TEST(Misuse, ASliceThatStartsAnotherPageForgetsItsClass) {
  void* keeper = tailor_malloc(5000);
  std::vector<void*> small;
  for (int i = 0; i < 4096; ++i) small.push_back(tailor_malloc(64));  // 4 pages of a stashable class
  const auto slice_of = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) >> 16; };  // PAGE_SIZE 64 KiB
  std::vector<std::uintptr_t> slices;
  for (void* p : small) slices.push_back(slice_of(p));
  for (void* p : small) tailor_free(p);
  tailor_collect();  // the empty pages' spans go back to the heap's free spans
  std::vector<void*> big;
  bool reused = false;
  for (int i = 0; i < 256 && !reused; ++i) {
    big.push_back(tailor_malloc(70000));
    const std::uintptr_t at = reinterpret_cast<std::uintptr_t>(big.back());
    reused = (at & 0xffff) == 0 && std::find(slices.begin(), slices.end(), slice_of(big.back())) != slices.end();
  }
  ASSERT_TRUE(reused) << "no block of 70000 bytes started on a slice of the freed small pages";
  void* b = big.back();
  big.pop_back();
  void* next = nullptr;
  std::thread([&] {
    void* mine = tailor_malloc(64);  // a heap of its own, which keeps other heaps' blocks it frees (stashes)
    tailor_free(b);
    next = tailor_malloc(64);
    tailor_free(mine);
  }).join();
  EXPECT_NE(next, b);
  tailor_free(next);
  for (void* p : big) tailor_free(p);
  tailor_free(keeper);
}

// Every class holds at least 16 bytes: the second word is the block's own.
TEST(Misuse, SmallestBlockHasTwoWords) {
  for (std::size_t n = 0; n <= 16; ++n) {
    void* p = tailor_malloc(n);
    EXPECT_EQ(tailor_usable_size(p), 16u) << n;
    tailor_free(p);
  }
}

// A freed huge block waits in the huge cache; a larger request grows it with
// mremap, which may move it: the moved mapping must still be recognized
// (found by the fault tests: free of the grown block reported invalid).
TEST(Misuse, HugeMappingsThatMoveStayKnown) {
  for (int round = 0; round < 20; ++round) {
    void* a = tailor_malloc(std::size_t{40} << 20);
    void* keep = tailor_malloc(std::size_t{40} << 20);  // sits where a would grow in place
    ASSERT_NE(a, nullptr);
    tailor_free(a);
    auto* b = static_cast<unsigned char*>(tailor_malloc((std::size_t{60} + static_cast<std::size_t>(round)) << 20));
    ASSERT_NE(b, nullptr);
    b[0] = 1;
    tailor_free(b);  // aborts if its mapping is not registered
    tailor_free(keep);
  }
}

// Keeps `n` threads alive at once (each with a heap of its own), then runs
// `body` in the last one: with n > 254, that heap has no tag in the segment
// registry (misuse.h), so its frees take the slow path, with the same checks.
template <class F>
void in_thread_beyond_the_tags(int n, F body) {
  std::atomic<int> ready{0};
  std::atomic<bool> done{false};
  std::vector<std::thread> ts;
  for (int i = 0; i + 1 < n; ++i)
    ts.emplace_back([&] {
      void* mine = tailor_malloc(24);  // sets this thread's heap up
      ready++;
      while (!done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      tailor_free(mine);
    });
  while (ready < n - 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::thread last(body);
  last.join();
  done = true;
  for (auto& t : ts) t.join();
}

TEST(Misuse, HeapsBeyondTheTags) {
  in_thread_beyond_the_tags(300, [] {
    std::vector<void*> v;
    for (int round = 0; round < 4; ++round) {
      for (std::size_t i = 0; i < 3000; ++i) {
        const std::size_t n = 16 + (i * 37) % 2000;
        auto* p = static_cast<unsigned char*>(tailor_malloc(n));
        ASSERT_NE(p, nullptr);
        p[0] = p[n - 1] = static_cast<unsigned char>(i);
        v.push_back(p);
      }
      for (std::size_t i = 0; i < v.size(); ++i) {
        const std::size_t n = 16 + (i * 37) % 2000;
        auto* p = static_cast<unsigned char*>(v[i]);
        ASSERT_EQ(p[0], static_cast<unsigned char>(i));
        ASSERT_EQ(p[n - 1], static_cast<unsigned char>(i));
        if (i % 2) tailor_free(p);
        else tailor::alloc::delete_sized_inline(p, n, "operator delete");
      }
      v.clear();
    }
  });
  tailor_stats st;
  tailor_get_stats(&st);
  EXPECT_GE(st.heaps_created, 255u);
}

TEST(Misuse, HeapsBeyondTheTagsStillCatch) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(in_thread_beyond_the_tags(300,
                                         [] {
                                           void* p = tailor_malloc(48);
                                           tailor_free(p);
                                           tailor_free(opaque(p));
                                         }),
               "tailor: free\\(\\): double free of 0x[0-9a-f]+ \\(block of 48 bytes, already free\\)");
  EXPECT_DEATH(in_thread_beyond_the_tags(300,
                                         [] {
                                           auto* p = static_cast<char*>(tailor_malloc(64));
                                           tailor_free(opaque(p + 16));
                                         }),
               "not the start of a block: 16 bytes into the block of 64 bytes");
  EXPECT_DEATH(in_thread_beyond_the_tags(300,
                                         [] {
                                           void* p = tailor_malloc(200);
                                           tailor::alloc::delete_sized_inline(opaque(p), 8, "operator delete");
                                         }),
               "tailor: operator delete\\(\\): wrong size for 0x[0-9a-f]+ \\(8 bytes given, block of");
}

// operator delete(p, size) on the owner's fast path: the size must be of the
// block's class; 0 only for the smallest class (what new(0) returns).
TEST(Misuse, SizedDeleteClassBounds) {
  void* a = tailor_malloc(0);
  tailor::alloc::delete_sized_inline(a, 0, "operator delete");
  void* b = tailor_malloc(100);
  tailor::alloc::delete_sized_inline(b, 100, "operator delete");
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        void* p = tailor_malloc(100);
        tailor::alloc::delete_sized_inline(opaque(p), 0, "operator delete");
      },
      "wrong size for 0x[0-9a-f]+ \\(0 bytes given");
  EXPECT_DEATH(
      {
        void* p = tailor_malloc(100);
        tailor::alloc::delete_sized_inline(opaque(p), 200, "operator delete");
      },
      "wrong size for 0x[0-9a-f]+ \\(200 bytes given");
}

#if defined(TAILOR_DEBUG) && TAILOR_DEBUG
// Debug builds (TAILOR_DEBUG, src/dmm/assert.h) check the heap's invariants
// on the fast paths. A use after free that rewrites a freed block's link
// (the first word) sends its page's free list outside the page: the malloc
// that would hand out the bogus address stops at the check instead.
TEST(DebugInvariants, AFreeListLinkOutsideItsPageIsCaught) {
  EXPECT_DEATH(
      {
        void* a = tailor_malloc(48);
        tailor_free(a);  // the head of its page's free list
        static void* elsewhere[8];
        *static_cast<void**>(a) = elsewhere;
        void* again = tailor_malloc(48);  // a itself
        void* bogus = tailor_malloc(48);  // would be `elsewhere`
        std::fprintf(stderr, "not caught: %p %p\n", again, bogus);
      },
      "tailor: assertion failed: .*page_holds_block");
}
#endif

}  // namespace
