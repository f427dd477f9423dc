// SPDX-License-Identifier: MIT
// Memory going back to the OS and address-space handling: RSS drops after a
// large free burst (at once with tailor_collect, and by itself once
// TAILOR_PURGE_DELAY has passed), and a footprint far beyond physical memory
// lives in reserved-but-untouched address space, and freed large and huge
// blocks are reused without faulting their pages in again.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "common/process_memory.h"
#include "alloc/config.h"
#include "alloc/os.h"
#include "tailor/tailor.h"

namespace {

using tailor::test::minor_faults;
using tailor::test::rss_kb;

// 256 MiB in blocks of every range (small, middle, large), all touched.
std::vector<void*> burst() {
  std::vector<void*> v;
  const std::size_t sizes[] = {24, 200, 3000, 40000, 300000, 2 << 20};
  std::size_t total = 0;
  for (int i = 0; total < (std::size_t{256} << 20); ++i) {
    std::size_t s = sizes[i % 6];
    void* p = tailor_malloc(s);
    EXPECT_NE(p, nullptr);
    std::memset(p, 1, s);
    v.push_back(p);
    total += s;
  }
  return v;
}

TEST(Memory, RssDropsAfterFreeBurstWithCollect) {
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer's shadow of the 256 MiB burst (32 MiB) stays resident
  // after libtailor unmaps the burst: RSS would measure the sanitizer.
  GTEST_SKIP() << "RSS under AddressSanitizer counts its shadow memory";
#endif
  long before = rss_kb();
  std::vector<void*> v = burst();
  long peak = rss_kb();
  EXPECT_GT(peak - before, 200 * 1024);
  for (void* p : v) tailor_free(p);
  tailor_collect();
  long after = rss_kb();
  EXPECT_LT(after - before, 16 * 1024) << "before " << before << " peak " << peak << " after " << after;
}

TEST(Memory, RssDropsAfterPurgeDelay) {
  if (tailor::alloc::g_config.purge_delay_ms < 0) GTEST_SKIP() << "TAILOR_PURGE_DELAY=-1";
  long before = rss_kb();
  std::vector<void*> v = burst();
  long peak = rss_kb();
  for (void* p : v) tailor_free(p);
  // Nothing is purged behind the program's back: the next span allocation or
  // free after the delay does it.
  std::this_thread::sleep_for(std::chrono::milliseconds(tailor::alloc::g_config.purge_delay_ms + 50));
  tailor_free(tailor_malloc(300000));
  long after = rss_kb();
  EXPECT_LT(after - before, 40 * 1024) << "before " << before << " peak " << peak << " after " << after;
}

TEST(Memory, FootprintBeyondPhysicalMemory) {
  const long phys_gib = sysconf(_SC_PHYS_PAGES) * (sysconf(_SC_PAGESIZE) / 1024) / (1024 * 1024);
  const std::size_t target_gib = static_cast<std::size_t>(phys_gib < 64 ? 96 : phys_gib + 32);
  tailor_stats s0;
  tailor_get_stats(&s0);
  std::vector<void*> v;
  // Huge blocks (mapped directly) and large blocks (from segments) together.
  for (std::size_t i = 0; i < target_gib / 2; ++i) {
    auto* p = static_cast<char*>(tailor_malloc(std::size_t{1} << 30));
    ASSERT_NE(p, nullptr) << i;
    p[0] = 1;
    p[(std::size_t{1} << 30) - 1] = 2;
    v.push_back(p);
  }
  for (std::size_t i = 0; i < target_gib / 2 * 256; ++i) {  // 4 MiB each
    auto* p = static_cast<char*>(tailor_malloc(std::size_t{4} << 20));
    ASSERT_NE(p, nullptr) << i;
    if (i % 64 == 0) p[100] = 3;
    v.push_back(p);
  }
  tailor_stats s1;
  tailor_get_stats(&s1);
  EXPECT_GE(s1.bytes_mapped - s0.bytes_mapped, (target_gib - 1) << 30);
  EXPECT_LT(rss_kb(), 2L * 1024 * 1024) << "the footprint should stay untouched";
  for (void* p : v) tailor_free(p);
  tailor_collect();
  tailor_stats s2;
  tailor_get_stats(&s2);
  EXPECT_LE(s2.bytes_mapped, s0.bytes_mapped + (std::size_t{64} << 20));
}

// libtailor's configuration, read at its first call (as the first malloc would).
const tailor::alloc::Config& config() {
  tailor_config(nullptr, 0);
  return tailor::alloc::g_config;
}


// Blocks above LARGE_MAX have mappings of their own; a freed one stays mapped
// in the huge cache, so the next block of a similar size gets its pages
// without faulting them in again (huge_cache.h).
TEST(Memory, FreedHugeBlockPagesAreReusedWithoutFaults) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "page faults under a sanitizer count its shadow memory";
#endif
  if (config().purge_delay_ms == 0 || config().huge_cache_bytes == 0)
    GTEST_SKIP() << "huge cache off";
  const std::size_t big = config().large_max + (4u << 20);
  auto* a = static_cast<char*>(tailor_malloc(big));
  ASSERT_NE(a, nullptr);
  std::memset(a, 1, big);
  tailor_free(a);
  const long before = minor_faults();
  auto* b = static_cast<char*>(tailor_malloc(big - (1u << 20)));  // a little smaller: reused as it is
  ASSERT_NE(b, nullptr);
  std::memset(b, 2, big - (1u << 20));
  const long faults = minor_faults() - before;
  EXPECT_LT(faults, 64) << "a fresh mapping would fault " << (big >> 12) << " pages";
  tailor_free(b);
  tailor_collect();
}

// What comes out of the huge cache is not zero: calloc must clear it.
TEST(Memory, CallocOfReusedHugeBlockIsZero) {
  const std::size_t big = config().large_max + (2u << 20);
  auto* a = static_cast<unsigned char*>(tailor_malloc(big));
  ASSERT_NE(a, nullptr);
  std::memset(a, 0xab, big);
  tailor_free(a);
  auto* b = static_cast<unsigned char*>(tailor_calloc(1, big));
  ASSERT_NE(b, nullptr);
  for (std::size_t i = 0; i < big; i += 4093) ASSERT_EQ(b[i], 0) << "byte " << i;
  ASSERT_EQ(b[big - 1], 0);
  tailor_free(b);
  tailor_collect();
}

// A huge block from the huge cache that the program touched at a few pages:
// calloc writes zeros over those and leaves the rest of the mapping, holes
// that read as zero, unfaulted (a memset would fault in all of them).
TEST(Memory, CallocOfAReusedHugeBlockZeroesOnlyItsBackedPages) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "page faults under a sanitizer count its shadow memory";
#endif
  if (config().purge_delay_ms == 0 || config().huge_cache_bytes == 0) GTEST_SKIP() << "huge cache off";
  const std::size_t big = config().large_max + (4u << 20);
  auto* a = static_cast<unsigned char*>(tailor_calloc(1, big));  // fresh: holes
  ASSERT_NE(a, nullptr);
  for (std::size_t i = 0; i < big; i += 256 * 4096) a[i] = 0xab;
  a[big - 1] = 0xab;
  tailor_free(a);  // into the huge cache, mapped
  const long before = minor_faults();
  auto* b = static_cast<unsigned char*>(tailor_calloc(1, big));
  ASSERT_EQ(b, a);
  for (std::size_t i = 0; i < big; i += 256 * 4096) EXPECT_EQ(b[i], 0) << "byte " << i;
  EXPECT_EQ(b[big - 1], 0);
  EXPECT_LT(minor_faults() - before, 64) << "faults: the mapping's " << (big >> 12) << " pages were written";
  tailor_free(b);
  tailor_collect();
}

// calloc of a large block used before (calloc_zero.h): zero whichever way
// it is cleared, by purging while the program leaves most of such blocks
// untouched (no fault for the pages it does not touch), by writing once it
// fills them.
TEST(Memory, CallocOfReusedLargeBlockIsZeroAndPurgedWhileTheProgramTouchesLittle) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "page faults under a sanitizer count its shadow memory";
#endif
  const std::size_t n = 4u << 20;  // 1024 OS pages
  auto reused = [&](bool fill) {
    auto* a = static_cast<unsigned char*>(tailor_malloc(n));
    std::memset(a, 0xab, n);
    tailor_free(a);  // stays resident in the heap's free spans
    const long before = minor_faults();
    auto* b = static_cast<unsigned char*>(tailor_calloc(1, n - 100));
    EXPECT_EQ(b, a);  // the same span again
    for (std::size_t i = 0; i < n - 100; i += 4093) EXPECT_EQ(b[i], 0) << "byte " << i;
    EXPECT_EQ(b[n - 101], 0);
    if (fill) std::memset(b, 1, n - 100);
    const long faults = minor_faults() - before;
    tailor_free(b);
    return faults;
  };
  // A block the program touches at three words: purged, its other pages
  // leave RSS (written with zeros, all 1024 would stay resident).
  auto sparse = [&] {
    auto* a = static_cast<unsigned char*>(tailor_malloc(n));
    std::memset(a, 0xab, n);
    tailor_free(a);  // resident in the heap's free spans
    const long rss_before = rss_kb();
    auto* b = static_cast<unsigned char*>(tailor_calloc(1, n));
    EXPECT_EQ(b[0], 0);
    EXPECT_EQ(b[n - 1], 0);
    b[n / 2] = 1;
    const long dropped = rss_before - rss_kb();
    tailor_free(b);
    return dropped;
  };
  EXPECT_GT(sparse(), 3 << 10) << "KiB: the block's untouched pages stayed resident";
  EXPECT_GT(sparse(), 3 << 10);
  // A program that fills its zeroed blocks: after a few, calloc writes
  // zeros into the resident pages instead of faulting them in again.
  for (int i = 0; i < 8; ++i) reused(true);
  EXPECT_LT(reused(true), 64) << "purged although the program fills its blocks";
}

// A zeroed block the program touched at a few pages, freed and zeroed again:
// calloc writes zeros over those pages and leaves the rest as they are,
// holes that read as zero. Nothing faults when the program touches the same
// pages again (purging would fault each in again; writing the whole would
// fault in all 1024), and the old data is gone.
TEST(Memory, CallocOfASparselyTouchedBlockZeroesOnlyItsBackedPages) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "page faults under a sanitizer count its shadow memory";
#endif
  const std::size_t n = 4u << 20;  // 1024 OS pages
  tailor_collect();  // free spans given back: the block starts as holes
  auto* a = static_cast<unsigned char*>(tailor_calloc(1, n));
  for (std::size_t i = 0; i < n; i += 16 * 4096) a[i + 8] = 0xab;  // 64 pages
  a[n - 1] = 0xab;
  tailor_free(a);
  for (int round = 0; round < 3; ++round) {
    const long before = minor_faults();
    auto* b = static_cast<unsigned char*>(tailor_calloc(1, n));
    ASSERT_EQ(b, a);  // the same span again
    for (std::size_t i = 0; i < n; i += 16 * 4096) {
      EXPECT_EQ(b[i + 8], 0) << "byte " << i + 8;
      b[i + 8] = 0xab;
    }
    EXPECT_EQ(b[n - 1], 0);
    b[n - 1] = 0xab;
    EXPECT_LT(minor_faults() - before, 16) << "faults: the touched pages were purged, or the holes written";
    unsigned char backed[1024];
    if (tailor::alloc::os::backed_map(b, n, backed)) {
      std::size_t count = 0;
      for (unsigned char v : backed) count += v;
      EXPECT_EQ(count, 65u) << "pages with memory behind them";
    }
    tailor_free(b);
  }
}

// A program that fills every zeroed block: calloc writes zeros, and the
// purges it still tries now and then, to notice if the program changes,
// become rarer each time one finds the block filled again (each costs a
// fault per page of the block).
TEST(Memory, CallocProbesPurgingLessOftenWhileTheProgramFillsItsBlocks) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "page faults under a sanitizer count its shadow memory";
#endif
  const std::size_t n = 512u << 10;  // kCallocPurgeMin: 128 OS pages
  auto filled = [&](int blocks) {
    const long before = minor_faults();
    for (int i = 0; i < blocks; ++i) {
      auto* b = static_cast<unsigned char*>(tailor_calloc(1, n));
      EXPECT_EQ(b[n / 2], 0);
      std::memset(b, 1, n);
      tailor_free(b);
    }
    return minor_faults() - before;
  };
  filled(600);  // the policy learns that the program fills them
  // One probe in 128 would be 15 blocks' 1,920 pages faulted in again; at
  // half the rate after each, 4 blocks (512 pages).
  EXPECT_LT(filled(2000), 1000) << "faults: purged as often as at first although every block is filled";
}

// The cached huge mappings go back to the OS after the purge delay, like
// free spans: RSS drops without tailor_collect.
TEST(Memory, CachedHugeBlocksAreUnmappedAfterPurgeDelay) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "RSS under AddressSanitizer counts its shadow memory";
#endif
  if (config().purge_delay_ms < 0) GTEST_SKIP() << "TAILOR_PURGE_DELAY=-1";
  tailor_collect();
  const long before = rss_kb();
  const std::size_t big = config().large_max + (8u << 20);
  auto* a = static_cast<char*>(tailor_malloc(big));
  ASSERT_NE(a, nullptr);
  std::memset(a, 1, big);
  tailor_free(a);
  EXPECT_GT(rss_kb() - before, static_cast<long>(big / 2048)) << "the freed block stays resident in the cache";
  std::this_thread::sleep_for(std::chrono::milliseconds(config().purge_delay_ms + 50));
  tailor_free(tailor_malloc(300000));  // the next span operation checks the deadlines
  EXPECT_LT(rss_kb() - before, 8 * 1024);
}

// Repeated large blocks of changing sizes in one heap reuse the spans freed
// before them (coalesced), so their pages are not faulted in again: the
// accounting of resident free memory counts only slices that were handed
// out, not the untouched rest of a segment they merge with, and does not
// purge everything early (HEAP_CACHE).
TEST(Memory, LargeBlockChurnReusesResidentSpans) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "page faults under a sanitizer count its shadow memory";
#endif
  const std::size_t lo = 5u << 20, hi = config().large_max;
  if (hi <= lo) GTEST_SKIP() << "LARGE_MAX below 5 MiB";
  void* live[8] = {};
  std::uint64_t x = 12345;
  long faults = 0, touched = 0;
  for (int step = 0; step < 200; ++step) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const int k = static_cast<int>((x >> 33) % 8);
    const std::size_t n = lo + (x >> 20) % (hi - lo);
    tailor_free(live[k]);
    const long before = minor_faults();
    live[k] = tailor_malloc(n);
    ASSERT_NE(live[k], nullptr);
    std::memset(live[k], 3, n);
    if (step >= 50) {  // after the warm-up, most pages come back resident
      faults += minor_faults() - before;
      touched += static_cast<long>(n >> 12);
    }
  }
  for (void* p : live) tailor_free(p);
  tailor_collect();
  EXPECT_LT(faults, touched / 4) << faults << " faults for " << touched << " pages written";
}

// TAILOR_HUGE_PAGES=1: a fresh mapping is advised for transparent huge
// pages, and the kernel backs the touched block with them (where THP is not
// disabled: "never" skips).
TEST(Memory, HugePagesBackABlockWhenAsked) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "a sanitizer's allocator serves the block";
#endif
  char mode[128] = {};
  if (FILE* f = std::fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r")) {
    if (std::fgets(mode, sizeof mode, f) == nullptr) mode[0] = '\0';
    std::fclose(f);
  }
  if (std::strstr(mode, "[never]") != nullptr || mode[0] == '\0') GTEST_SKIP() << "transparent huge pages are off";
  auto& c = const_cast<tailor::alloc::Config&>(config());
  const bool saved = c.huge_pages;
  c.huge_pages = true;
  const std::size_t size = c.large_max + (std::size_t{8} << 20);  // a mapping of its own, made now
  auto* p = static_cast<char*>(tailor_malloc(size));
  c.huge_pages = saved;
  ASSERT_NE(p, nullptr);
  std::memset(p, 1, size);
  // AnonHugePages of the mapping holding p, from /proc/self/smaps.
  long huge_kb = -1;
  if (FILE* f = std::fopen("/proc/self/smaps", "r")) {
    char line[512];
    bool inside = false;
    while (std::fgets(line, sizeof line, f)) {
      unsigned long lo, hi;
      if (std::sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && std::strchr(line, '-') < std::strchr(line, ' ')) {
        inside = reinterpret_cast<unsigned long>(p) >= lo && reinterpret_cast<unsigned long>(p) < hi;
      } else if (inside && std::sscanf(line, "AnonHugePages: %ld kB", &huge_kb) == 1) {
        break;
      }
    }
    std::fclose(f);
  }
  tailor_free(p);
  EXPECT_GT(huge_kb, 0) << "no huge page backs a " << size << "-byte block asked for with huge pages";
}

}  // namespace
