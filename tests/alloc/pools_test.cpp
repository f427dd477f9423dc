// Call-site pools (site_pool.h, docs/pools.md) through the tailor_* API.
// Sets TAILOR_POOLS=2 (every site that keeps one size is pooled, so that a
// test needs one site per pool) and TAILOR_PURGE_DELAY=0 for itself
// (kEnvironment). TAILOR_POOLS=1's rule for the first site of a slot size:
// pools_slot_rule_test.cpp.
//
// Every allocation of a test comes from one call instruction in a loop (one
// return address, hence one site); distinct helpers are distinct sites. The
// helpers are noinline so that each keeps one call site of its own.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "pool_sites.h"
#include "tailor/tailor.h"

namespace {

// Pools on, and free spans purged at once (RSS checks). The core reads its
// environment at its first call, which comes after static initialization.
const bool kEnvironment = [] {
  setenv("TAILOR_CONFIG", "/dev/null", 1);
  setenv("TAILOR_POOLS", "2", 1);
  setenv("TAILOR_PURGE_DELAY", "0", 1);
  // The request that sets libtailor up is served before pools exist: make
  // it here, so that every request of the tests reaches its monitor.
  tailor_free(tailor_malloc(1));
  return true;
}();

TAILOR_TEST_SITE(site_a, tailor_malloc(n))
TAILOR_TEST_SITE(site_b, tailor_malloc(n))
TAILOR_TEST_SITE(site_c, tailor_malloc(n))
TAILOR_TEST_SITE(site_d, tailor_malloc(n))
TAILOR_TEST_SITE(site_e, tailor_malloc(n))
TAILOR_TEST_SITE(site_f, tailor_malloc(n))
TAILOR_TEST_SITE(site_g, tailor_malloc(n))
TAILOR_TEST_SITE(site_h, tailor_malloc(n))
TAILOR_TEST_SITE(site_temporaries, tailor_malloc(n))
TAILOR_TEST_SITE(site_structure, tailor_malloc(n))
TAILOR_TEST_SITE(site_calloc, tailor_calloc(1, n))
TAILOR_TEST_SITE(site_misuse, tailor_malloc(n))

long rss_kb() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  long pages = 0, resident = 0;
  if (f != nullptr) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

void* opaque(void* p) {
  asm volatile("" : "+r"(p));
  return p;
}

// Warms a site up: kWindow requests of `n` bytes, freed at once.
void warm(void* (*site)(std::size_t), std::size_t n) {
  std::vector<void*> v;
  for (int i = 0; i < kWindow; ++i) v.push_back(site(n));
  for (void* p : v) tailor_free(p);
}

TEST(Pools, ModeIsOnline) { EXPECT_EQ(stats().mode, 1); }

TEST(Pools, OneSizeSiteGetsAPoolAfterItsWindow) {
  const std::size_t before = stats().sites_pooled;
  std::vector<void*> v;
  for (int i = 0; i < 3 * kWindow; ++i) v.push_back(site_a(40));
  for (int i = 0; i < kWindow; ++i) EXPECT_EQ(tailor_pool_slot_size(v[i]), 0u) << i;  // monitored: the heap's
  for (int i = kWindow; i < 3 * kWindow; ++i) EXPECT_EQ(tailor_pool_slot_size(v[i]), 48u) << i;
  // Bump allocation: successive blocks one slot apart (the regular stride).
  for (int i = kWindow + 1; i < 3 * kWindow; ++i)
    EXPECT_EQ(static_cast<char*>(v[i]) - static_cast<char*>(v[i - 1]), 48) << i;
  EXPECT_EQ(stats().sites_pooled, before + 1);
  for (void* p : v) {
    EXPECT_GE(tailor_usable_size(p), 40u);
    tailor_free(p);
  }
}

TEST(Pools, VaryingSiteIsNotPooled) {
  const std::size_t before = stats().sites_unpooled;
  const std::size_t sizes[] = {24, 100, 200, 40};
  std::vector<void*> v;
  for (int i = 0; i < 4 * kWindow; ++i) v.push_back(site_b(sizes[i % 4]));
  for (void* p : v) {
    EXPECT_EQ(tailor_pool_slot_size(p), 0u);
    tailor_free(p);
  }
  EXPECT_EQ(stats().sites_unpooled, before + 1);
}

// A site of temporaries: its pool empties again and again with only a few
// slots ever carved; after 16 such times the site is left to the heap,
// and its area is given back. A site that builds a structure (more than
// 64 slots at once) and frees it as often stays pooled.
TEST(Pools, SitesOfTemporariesAreDemotedToTheHeap) {
  if (!sites_distinguished()) GTEST_SKIP() << "one call site for every request in this build";
  warm(&site_temporaries, 40);
  warm(&site_structure, 40);
  const std::size_t pooled = stats().sites_pooled, demoted = stats().sites_demoted;
  for (int round = 0; round < 20; ++round) {
    std::vector<void*> few, many;
    for (int i = 0; i < 8; ++i) few.push_back(site_temporaries(40));
    for (int i = 0; i < 100; ++i) many.push_back(site_structure(40));
    if (round == 0) {
      EXPECT_EQ(tailor_pool_slot_size(few[0]), 48u);
      EXPECT_EQ(tailor_pool_slot_size(many[0]), 48u);
    }
    for (void* p : few) tailor_free(p);
    for (void* p : many) tailor_free(p);
  }
  void* d = site_temporaries(40);
  void* e = site_structure(40);
  EXPECT_EQ(tailor_pool_slot_size(d), 0u);   // demoted: the heap's
  EXPECT_EQ(tailor_pool_slot_size(e), 48u);  // still pooled
  EXPECT_EQ(stats().sites_pooled, pooled - 1);
  EXPECT_EQ(stats().sites_demoted, demoted + 1);
  tailor_free(d);
  tailor_free(e);
}

TEST(Pools, OtherSizesOfAPooledSiteGoToTheHeap) {
  warm(&site_c, 64);
  void* p = site_c(64);
  void* q = site_c(300);
  EXPECT_EQ(tailor_pool_slot_size(p), 64u);
  EXPECT_EQ(tailor_pool_slot_size(q), 0u);
  EXPECT_GE(tailor_usable_size(q), 300u);
  tailor_free(p);
  tailor_free(q);
}

TEST(Pools, FreedSlotsAreReusedLastInFirstOut) {
  warm(&site_d, 32);
  void* keep = site_d(32);  // the area is not empty (an empty one starts again from its first slot)
  void* a = site_d(32);
  void* b = site_d(32);
  ASSERT_EQ(tailor_pool_slot_size(a), 32u);
  tailor_free(a);
  tailor_free(b);
  EXPECT_EQ(site_d(32), b);
  EXPECT_EQ(site_d(32), a);
  tailor_free(a);
  tailor_free(b);
  tailor_free(keep);
  EXPECT_EQ(site_d(32), keep);  // emptied: carved again from the start, in address order
  EXPECT_EQ(site_d(32), a);
  tailor_free(keep);
  tailor_free(a);
}

TEST(Pools, AreasDoubleAndEmptyAreasAreReleased) {
  warm(&site_e, 64);
  const tailor_pools_stats s0 = stats();
  const long rss0 = rss_kb();
  constexpr int kCount = 1 << 20;  // 64 MiB of 64-byte slots
  std::vector<void*> v(kCount);
  for (int i = 0; i < kCount; ++i) {
    v[i] = site_e(64);
    std::memset(v[i], 0x5a, 64);
  }
  const tailor_pools_stats s1 = stats();
  const long rss1 = rss_kb();
  EXPECT_GT(s1.areas, s0.areas);
  EXPECT_GE(s1.largest_area, std::size_t{4} << 20);  // 64K, 128K, ... doubled at least six times
  EXPECT_GE(s1.area_bytes - s0.area_bytes, std::size_t{64} << 20);
#if !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
  EXPECT_GT(rss1 - rss0, 60 * 1024);
#endif
  for (void* p : v) tailor_free(p);
  tailor_collect();
  const tailor_pools_stats s2 = stats();
  const long rss2 = rss_kb();
  EXPECT_GT(s2.areas_released, s1.areas_released);
  EXPECT_LE(s2.areas, s0.areas + 2);  // the current area and one spare stay
  EXPECT_LE(s2.area_bytes, s0.area_bytes + (std::size_t{16} << 20));
#if !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)  // their shadow memory moves RSS too
  EXPECT_LT(rss2, rss1 - 48 * 1024) << "RSS " << rss0 << " -> " << rss1 << " -> " << rss2 << " KB";
#else
  (void)rss0, (void)rss1, (void)rss2;
#endif
}

// A pooled block is a block of its heap's pages: free's own checks catch a
// double free and a pointer into the middle of a slot, as for any block.
TEST(Pools, MisuseOfAPooledBlockIsCaught) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  warm(&site_misuse, 40);
  void* keep = site_misuse(40);
  ASSERT_EQ(tailor_pool_slot_size(keep), 48u);
  EXPECT_DEATH(
      {
        void* p = site_misuse(40);
        tailor_free(p);
        tailor_free(opaque(p));
      },
      "tailor: free\\(\\): double free of 0x[0-9a-f]+ \\(block of 48 bytes, already free\\)");
  EXPECT_DEATH(tailor_free(opaque(static_cast<char*>(keep) + 16)),
               "tailor: free\\(\\): invalid pointer 0x[0-9a-f]+");
  tailor_free(keep);
}

TEST(Pools, ReallocMovesAPooledBlockOutAndFreesItsSlot) {
  warm(&site_f, 48);
  auto* p = static_cast<unsigned char*>(site_f(48));
  ASSERT_EQ(tailor_pool_slot_size(p), 48u);
  for (int i = 0; i < 48; ++i) p[i] = static_cast<unsigned char>(i);
  auto* q = static_cast<unsigned char*>(tailor_realloc(p, 40));  // smaller: still moves
  ASSERT_NE(q, nullptr);
  EXPECT_NE(q, p);
  EXPECT_EQ(tailor_pool_slot_size(q), 0u);
  for (int i = 0; i < 40; ++i) EXPECT_EQ(q[i], i);
  EXPECT_EQ(site_f(48), p);  // the slot was freed: it is the next one handed out
  auto* r = static_cast<unsigned char*>(tailor_realloc(q, 4000));
  for (int i = 0; i < 40; ++i) EXPECT_EQ(r[i], i);
  tailor_free(r);
  tailor_free(p);
}

TEST(Pools, CallocZeroesAReusedSlot) {
  // One block at a time: past the window the pool hands the same slot back,
  // until the site is demoted as one of temporaries (16 empties), after
  // which the heap's blocks must be zeroed as well.
  for (int i = 0; i < 3 * kWindow; ++i) {
    auto* p = static_cast<unsigned char*>(site_calloc(80));
    for (int k = 0; k < 80; ++k) ASSERT_EQ(p[k], 0) << i;
    if (i >= kWindow && i < kWindow + 8) {
      EXPECT_EQ(tailor_pool_slot_size(p), 80u) << i;
    }
    std::memset(p, 0xff, 80);
    tailor_free(p);
  }
}

TEST(Pools, FreeAndUsableSizeFromAnotherThread) {
  warm(&site_g, 24);
  constexpr int kCount = 20000;
  std::vector<void*> v(kCount);
  for (int i = 0; i < kCount; ++i) v[i] = site_g(24);
  for (void* p : v) ASSERT_EQ(tailor_pool_slot_size(p), 32u);
  std::thread t([&] {
    for (void* p : v) {
      EXPECT_EQ(tailor_usable_size(p), 32u);
      tailor_free(p);
    }
  });
  t.join();
  // The owner takes the slots back when it runs out of room: the next
  // allocations reuse them instead of growing the pool.
  const std::size_t bytes = stats().area_bytes;
  for (int i = 0; i < kCount; ++i) v[i] = site_g(24);
  EXPECT_LE(stats().area_bytes, bytes);
  for (void* p : v) tailor_free(p);
}

TEST(Pools, ThreadsAllocateAndFreeEachOthersBlocks) {
  constexpr int kThreads = 4, kRounds = 200, kPerRound = 500;
  std::vector<std::atomic<void*>> mailbox(kThreads * kPerRound);
  for (auto& m : mailbox) m.store(nullptr);
  std::atomic<int> checks{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t) {
    ts.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) {
        for (int i = 0; i < kPerRound; ++i) {
          auto* p = static_cast<std::uint64_t*>(site_h(56));
          p[0] = static_cast<std::uint64_t>(t) << 32 | static_cast<std::uint64_t>(i);
          // Hand it to the next thread's slot; free whatever was there.
          void* old = mailbox[((t + 1) % kThreads) * kPerRound + i].exchange(p);
          if (old != nullptr) {
            auto* o = static_cast<std::uint64_t*>(old);
            if ((o[0] & 0xffffffffu) == static_cast<std::uint64_t>(i)) checks.fetch_add(1);
            tailor_free(old);
          }
        }
      }
    });
  }
  for (auto& th : ts) th.join();
  for (auto& m : mailbox)
    if (void* p = m.exchange(nullptr)) tailor_free(p);
  EXPECT_EQ(checks.load(), kThreads * (kRounds * kPerRound - kPerRound));
}

TEST(Pools, AThreadsPoolsOutliveItAndAreAdopted) {
  std::vector<void*> v;
  std::thread t([&] {
    warm(&site_a, 40);
    for (int i = 0; i < 1000; ++i) v.push_back(site_a(40));
  });
  t.join();
  for (void* p : v) EXPECT_EQ(tailor_pool_slot_size(p), 48u);
  for (void* p : v) tailor_free(p);  // the pools' owner has exited
  std::thread t2([] {
    std::vector<void*> w;
    for (int i = 0; i < 1000; ++i) w.push_back(site_a(40));
    for (void* p : w) EXPECT_EQ(tailor_pool_slot_size(p), 48u);
    for (void* p : w) tailor_free(p);
  });
  t2.join();
}

TEST(Pools, ForkWithPoolsActive) {
  warm(&site_a, 40);
  std::vector<void*> v;
  for (int i = 0; i < 1000; ++i) v.push_back(site_a(40));
  std::atomic<bool> stop{false};
  std::thread busy([&] {  // another thread allocating from pools while the main one forks
    while (!stop.load()) tailor_free(site_a(40));
  });
  for (int k = 0; k < 20; ++k) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      for (void* p : v) tailor_free(p);
      std::vector<void*> w;
      for (int i = 0; i < 2000; ++i) {
        w.push_back(site_a(40));
        if (tailor_pool_slot_size(w.back()) != 48) _exit(3);
      }
      for (void* p : w) tailor_free(p);
      _exit(0);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  stop.store(true);
  busy.join();
  for (void* p : v) tailor_free(p);
}

}  // namespace
