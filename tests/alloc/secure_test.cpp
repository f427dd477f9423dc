// SPDX-License-Identifier: MIT
// Secure mode (TAILOR_SECURE=1, src/alloc/secure.h) with libtailor as the
// process's allocator: each guarantee of docs/allocator.md "Secure mode" as
// a test (canaries, trailers, the trailer below a block, freed-block
// clearing and its check, the quarantine, guard pages of large blocks, no
// links in quarantined blocks, exact sizes), plus threads
// freeing each other's blocks and huge sizes. ctest sets TAILOR_SECURE=1
// (the configuration is read at the first malloc, before main).
#include <gtest/gtest.h>
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>
#include <vector>

#include "tailor/tailor.h"

extern "C" void free_sized(void*, size_t);

namespace {

template <class T>
T* opaque(T* p) {
  asm volatile("" : "+r"(p));
  return p;
}

unsigned char* bytes(std::size_t n) {
  auto* p = static_cast<unsigned char*>(malloc(n));
  if (p == nullptr) abort();
  std::memset(p, 0x5a, n);
  return opaque(p);
}

TEST(Secure, IsActive) {
  tailor_secure_stats s;
  tailor_secure_get_stats(&s);
  ASSERT_EQ(s.active, 1) << "run with TAILOR_SECURE=1";
  EXPECT_GT(s.quarantined, 0u);
  EXPECT_GT(s.metadata_bytes, 0u);
  EXPECT_EQ(s.unguarded, 0u);
}

TEST(Secure, AThreadThatGotAHeapStillAllocatesSecurely) {
  tailor_collect();  // sets a heap up for the thread
  struct mallinfo2 mi = mallinfo2();
  (void)mi;
  void* p = malloc(100);
  EXPECT_EQ(malloc_usable_size(p), 100u);  // exact: a secure block, not a size class
  free(p);
}

TEST(Secure, EveryByteAskedForIsUsableAndNoMore) {
  for (std::size_t n = 0; n < (std::size_t{3} << 20); n = n < 300 ? n + 1 : n * 5 / 4) {
    unsigned char* p = bytes(n);
    EXPECT_EQ(malloc_usable_size(p), n);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 16, 0u);
    std::memset(p, 0xff, n);  // the whole block, up to the canary
    p = static_cast<unsigned char*>(realloc(p, n + 7));
    ASSERT_NE(p, nullptr);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(p[i], 0xff) << n;
    std::memset(p, 0, n + 7);
    free(p);
  }
}

TEST(Secure, AlignedBlocksKeepTheirChecks) {
  for (std::size_t align : {32, 64, 4096, 65536}) {
    void* p = nullptr;
    ASSERT_EQ(posix_memalign(&p, align, 1000), 0);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % align, 0u);
    std::memset(p, 1, 1000);
    free(p);
    EXPECT_DEATH(
        {
          void* q = nullptr;
          if (posix_memalign(&q, align, 1000) != 0) abort();
          static_cast<unsigned char*>(opaque(q))[1000] = 0;
          free(q);
        },
        "tailor: free\\(\\): heap overflow past the end of 0x[0-9a-f]+ \\(the block of 1000 bytes");
  }
}

TEST(Secure, OverflowByOneIsCaughtOnFreeAndRealloc) {
  for (std::size_t n : {1, 24, 40, 1000, 5000, 100000}) {
    EXPECT_DEATH(
        {
          unsigned char* p = bytes(n);
          p[n] = 0;
          free(p);
        },
        "tailor: free\\(\\): heap overflow past the end of 0x[0-9a-f]+ \\(the block of [0-9]+ bytes: the byte right after it");
    EXPECT_DEATH(
        {
          unsigned char* p = bytes(n);
          p[n] = 0xff;
          p = static_cast<unsigned char*>(realloc(p, 2 * n + 100000));
        },
        "tailor: realloc\\(\\): heap overflow past the end of");
  }
}

TEST(Secure, EveryCanaryByteIsChecked) {
  // Sizes whose canary is 1 to 16 bytes long (the blocks of 32 to 96
  // bytes), each byte of it changed alone: the first, the last and one
  // between, so that both words of the check and the mask of a short tail
  // are exercised. The bytes are flipped, so the byte changes whatever the
  // pattern held there.
  for (std::size_t n = 1; n <= 80; ++n) {
    // The canary runs to the block's end or 16 bytes, whichever is first:
    // up to 128 bytes, blocks are 16 + n + 1 rounded up to 16 (32 at least).
    const std::size_t block = std::max<std::size_t>(32, (16 + n + 1 + 15) / 16 * 16);
    const std::size_t len = std::min<std::size_t>(16, block - 16 - n);
    for (std::size_t at : {std::size_t{0}, len / 2, len - 1}) {
      EXPECT_DEATH(
          {
            unsigned char* p = bytes(n);
            p[n + at] ^= 0xa5;
            free(p);
          },
          "tailor: free\\(\\): heap overflow past the end of")
          << "size " << n << ", canary byte " << at << " of " << len;
    }
  }
}

TEST(Secure, UnderflowIsCaught) {
  // Any changed byte of the word before a heap block (the trailer of the
  // block below it, or zero if that one is free), found at the block's
  // free: the bits are flipped, so the byte changes whatever it held. The
  // first block of the test's page has no block below it, so a block is
  // allocated first.
  for (std::size_t n : {24, 5000, 100000})
    for (std::ptrdiff_t at : {-1, -5, -8}) {
      EXPECT_DEATH(
          {
            // Two blocks in a row (the second one's slot right above the first).
            unsigned char* below = bytes(n);
            unsigned char* p = bytes(n);
            for (int k = 0; k < 16 && !(p > below && p - below <= static_cast<std::ptrdiff_t>(n + n / 4 + 64)); ++k) {
              below = p;
              p = bytes(n);
            }
            p[at] ^= 0xa5;
            free(p);
          },
          "tailor: free\\(\\): heap underflow before 0x[0-9a-f]+ \\(the block of [0-9]+ bytes: the word before it");
    }
  // A large block's 16-byte header.
  for (std::ptrdiff_t at : {-1, -8, -9, -16})
    EXPECT_DEATH(
        {
          unsigned char* p = bytes(200000);
          p[at] ^= 0xa5;
          free(p);
        },
        "tailor: free\\(\\): heap underflow or corruption before 0x[0-9a-f]+ \\(the block's 16-byte header");
}

TEST(Secure, WriteAfterFreeIsCaughtAsTheBlockLeavesTheQuarantine) {
  // A freed block is cleared; a byte written after the free (its bits
  // flipped, so never zero) is found when the block leaves the quarantine.
  EXPECT_DEATH(
      {
        unsigned char* p = bytes(48);
        free(p);
        opaque(p)[8] ^= 0xa5;
        for (int i = 0; i < 200; ++i) free(bytes(48));  // past the quarantine (64 frees)
      },
      "tailor: free\\(\\): write after free in the block at 0x[0-9a-f]+ \\(its byte 8 changed after it was freed, found as it left the quarantine");
  // Anywhere in the block, not only its first bytes (SECURE_ZERO: the whole
  // block is zeroed at free and checked as it leaves the quarantine).
  EXPECT_DEATH(
      {
        unsigned char* p = bytes(3000);
        free(p);
        opaque(p)[2990] = 0x41;
        for (int i = 0; i < 200; ++i) free(bytes(3000));
      },
      "tailor: free\\(\\): write after free in the block at 0x[0-9a-f]+ \\(its byte 2990 changed");
}

TEST(Secure, AFreedBlockIsNotHandedOutAgainAtOnce) {
  // The quarantine (SECURE_QUARANTINE, 64 by default): the thread's next 63
  // frees of any size keep it out; it comes back after that.
  unsigned char* p = bytes(48);
  free(p);
  for (int i = 0; i < 63; ++i) {
    unsigned char* q = bytes(48);
    ASSERT_NE(q, p) << "handed out again after " << i << " frees";
    free(q);
  }
  bool back = false;
  for (int i = 0; i < 1000 && !back; ++i) {
    unsigned char* q = bytes(48);
    back = q == p;
    free(q);
  }
  EXPECT_TRUE(back) << "a quarantined block never left the quarantine";
  // A large block's region waits for two more large frees.
  unsigned char* big = bytes(1 << 20);
  free(big);
  unsigned char* next = bytes(1 << 20);
  EXPECT_NE(next, big);
  free(next);
}

TEST(Secure, FreedMemoryIsClearedAndFreshMemoryIsZero) {
  for (std::size_t n : {std::size_t{40}, std::size_t{3000}, std::size_t{8000}, std::size_t{300000}}) {
    unsigned char* p = bytes(n);
    std::memset(p, 0xc5, n);
    free(p);
    bool reused = false;
    for (int k = 0; k < 300; ++k) {
      auto* q = static_cast<unsigned char*>(malloc(n));
      ASSERT_NE(q, nullptr);
      reused |= q == p;
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(q[i], 0) << "byte " << i << " of a block of " << n;
      std::memset(q, 0xc5, n);
      free(q);
    }
    EXPECT_TRUE(reused) << n;
  }
  // A freed large block reads as zeros at once (its region is cleared at
  // the free), and a write into it is reported when the region is reused.
  unsigned char* big = bytes(1 << 20);
  free(big);
  for (std::size_t i = 0; i < (1 << 20); i += 4096)
    ASSERT_EQ(static_cast<volatile unsigned char*>(opaque(big))[i + 100], 0) << "byte " << i + 100 << " of a freed large block";
  EXPECT_DEATH(
      {
        unsigned char* p = bytes(1 << 20);
        free(p);
        opaque(p)[300000] = 0x41;
        for (int i = 0; i < 8; ++i) free(bytes(1 << 20));  // past the large blocks' reuse delay
      },
      "tailor: malloc\\(\\): write after free in the large block region at 0x[0-9a-f]+ \\(its byte [0-9]+ changed after its block was freed");
}

TEST(Secure, LargeBlocksTouchedSparselyAreClearedByPurgingNotWritten) {
  // A program that touches a word of each 1 MiB block: clearing a reused
  // block by a memset would make all of it resident for nothing;
  // calloc_zero.h's policy purges it at its free instead (zero when
  // touched again), once the blocks seen show it.
  constexpr std::size_t kBlock = 1 << 20;
  // 1000 blocks: 256,000 pages, past the policy's decay (65,536 pages), so
  // that blocks other tests of this process filled weigh little.
  for (int i = 0; i < 1000; ++i) {
    auto* p = static_cast<unsigned char*>(malloc(kBlock));
    ASSERT_NE(p, nullptr);
    p[kBlock / 2] = 1;
    free(opaque(p));
  }
  const long ps = sysconf(_SC_PAGESIZE);
  std::vector<unsigned char> vec(kBlock / static_cast<std::size_t>(ps) + 2);
  int resident_blocks = 0;
  for (int i = 0; i < 8; ++i) {
    auto* p = static_cast<unsigned char*>(malloc(kBlock));
    ASSERT_NE(p, nullptr);
    auto* page = reinterpret_cast<unsigned char*>(reinterpret_cast<std::uintptr_t>(p) & ~static_cast<std::uintptr_t>(ps - 1));
    ASSERT_EQ(mincore(page, kBlock, vec.data()), 0);
    std::size_t resident = 0;
    for (std::size_t k = 0; k < kBlock / static_cast<std::size_t>(ps); ++k) resident += vec[k] & 1;
    resident_blocks += resident * 2 > kBlock / static_cast<std::size_t>(ps);
    for (std::size_t k = 0; k < kBlock; k += 4096) ASSERT_EQ(p[k], 0);
    free(p);
  }
  EXPECT_LE(resident_blocks, 1) << "reused blocks cleared by a memset (one probe in 128 may be)";
}

TEST(Secure, DoubleAndInvalidFrees) {
  EXPECT_DEATH(
      {
        unsigned char* p = bytes(40);
        free(p);
        free(opaque(p));
      },
      "tailor: free\\(\\): double free of 0x[0-9a-f]+ \\(block of [0-9]+ bytes, already free\\)");
  EXPECT_DEATH(
      {
        unsigned char* p = bytes(1 << 20);
        free(p);
        free(opaque(p));
      },
      "tailor: free\\(\\): double or invalid free of 0x[0-9a-f]+ \\(in no live block of secure mode");
  EXPECT_DEATH(free(opaque(bytes(100) + 32)), "tailor: free\\(\\): (invalid pointer|heap underflow)");
  EXPECT_DEATH(free(opaque(bytes(1 << 20) + 4096)), "tailor: free\\(\\): invalid pointer 0x[0-9a-f]+ \\(not the start of a block: 4096 bytes into a large block\\)");
  int on_stack = 0;
  EXPECT_DEATH(free(opaque(&on_stack)), "tailor: free\\(\\): invalid pointer");
}

TEST(Secure, SizedFreesNeedTheExactSize) {
  unsigned char* p = bytes(100);
  free_sized(p, 100);
  p = bytes(100);
  ::operator delete(p, std::size_t{100});
  EXPECT_DEATH(free_sized(bytes(100), 99), "tailor: free_sized\\(\\): wrong size for 0x[0-9a-f]+ \\(99 bytes given, block of 100 bytes\\)");
  EXPECT_DEATH(::operator delete(bytes(100), std::size_t{101}), "wrong size for 0x[0-9a-f]+ \\(101 bytes given, block of 100 bytes\\)");
}

// malloc(0) gives a distinct address in a no-access region: any read or
// write through it faults, before and after its free; the calls that take
// a block take it (usable size 0, realloc copies nothing, sized frees of 0).
TEST(Secure, ZeroSizeBlocksAreDistinctAndFaultOnAccess) {
  std::vector<void*> zs;
  for (int i = 0; i < 70000; ++i) zs.push_back(malloc(0));  // more than two 512 KiB regions of them
  zs.push_back(calloc(0, 8));
  zs.push_back(aligned_alloc(16, 0));
  for (void* z : zs) {
    ASSERT_NE(z, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(z) % 16, 0u);
    EXPECT_EQ(malloc_usable_size(z), 0u);
  }
  std::vector<void*> sorted = zs;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end()) << "two zero-size blocks at one address";
  auto* grown = static_cast<unsigned char*>(realloc(zs[0], 24));
  ASSERT_NE(grown, nullptr);
  EXPECT_EQ(malloc_usable_size(grown), 24u);
  std::memset(grown, 1, 24);
  free(grown);
  EXPECT_EQ(realloc(zs[1], 0), nullptr);
  free_sized(zs[2], 0);
  for (std::size_t i = 3; i < zs.size(); ++i) free(zs[i]);
  delete[] opaque(new char[0]);
  auto fault = [](int what) {
    volatile unsigned char* z = static_cast<unsigned char*>(opaque(malloc(0)));
    if (what == 2) free(const_cast<unsigned char*>(z));
    if (what == 0) std::printf("%d", z[0]);
    else z[0] = 1;
    std::_Exit(0);
  };
  EXPECT_EXIT(fault(0), testing::KilledBySignal(SIGSEGV), "");  // read
  EXPECT_EXIT(fault(1), testing::KilledBySignal(SIGSEGV), "");  // write
  EXPECT_EXIT(fault(2), testing::KilledBySignal(SIGSEGV), "");  // write after free
  EXPECT_DEATH(free(static_cast<char*>(opaque(malloc(0))) + 8),
               "tailor: free\\(\\): invalid pointer 0x[0-9a-f]+ \\(not a zero-size block: [0-9]+ bytes into their no-access region\\)");
  EXPECT_DEATH(
      {
        void* z = malloc(0);
        free(z);
        free(opaque(z));
      },
      "tailor: free\\(\\): double free of 0x[0-9a-f]+ \\(zero-size block, already free\\)");
  EXPECT_DEATH(
      {
        void* z = malloc(0);
        free(z);
        void* q = realloc(opaque(z), 8);
        free(q);
      },
      "tailor: realloc\\(\\): block already freed: 0x[0-9a-f]+ \\(zero-size block, already free\\)");
  EXPECT_DEATH(free_sized(opaque(malloc(0)), 1), "wrong size for 0x[0-9a-f]+ \\(1 bytes given, block of 0 bytes\\)");
}

TEST(Secure, GuardPagesStopLongOverflows) {
  // A large block (above MIDDLE_MAX) ends at most 16 bytes before its guard page.
  EXPECT_EXIT(
      {
        volatile unsigned char* p = bytes(200000);
        for (std::size_t i = 200000; i < 200000 + 17; ++i) p[i] = 1;
        std::_Exit(0);
      },
      testing::KilledBySignal(SIGSEGV), "");
}

TEST(Secure, QuarantinedBlocksHoldNoPointers) {
  // Cleared whole at their free; fewer than the quarantine's 64, so none
  // has gone back to a free list (where the heap's link is its first word).
  std::vector<unsigned char*> v;
  for (int i = 0; i < 50; ++i) v.push_back(bytes(64));
  for (auto* p : v) free(p);
  const auto lo = reinterpret_cast<std::uintptr_t>(v[0]) - (std::uintptr_t{1} << 30);
  const auto hi = lo + (std::uintptr_t{2} << 30);
  for (auto* p : v) {
    for (std::size_t off = 0; off + 8 <= 64; off += 8) {
      std::uintptr_t w;
      std::memcpy(&w, p + off, 8);  // a freed block's memory, as an attacker would read it
      EXPECT_FALSE(w >= lo && w < hi) << "a pointer in a freed block: " << std::hex << w;
    }
  }
}

TEST(Secure, ThreadsFreeEachOthersBlocks) {
  tailor_secure_stats before;
  tailor_secure_get_stats(&before);
  const struct mallinfo2 before_mi = mallinfo2();
  constexpr int kThreads = 4, kBlocks = 50000;
  std::vector<std::vector<void*>> handed(kThreads, std::vector<void*>(kBlocks));
  std::vector<std::thread> ts;
  std::atomic<int> made{0};
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([&, t] {
      unsigned x = 12345u + static_cast<unsigned>(t);
      for (auto& p : handed[t]) {
        x = x * 1103515245u + 12345u;
        const std::size_t n = (x >> 8) % 3000;
        p = malloc(n);
        std::memset(p, t, n);
      }
      made.fetch_add(1);
      while (made.load() < kThreads) std::this_thread::yield();
      for (void* p : handed[(t + 1) % kThreads]) free(p);  // the next thread's blocks
    });
  for (auto& t : ts) t.join();
  tailor_secure_stats after;
  tailor_secure_get_stats(&after);
  EXPECT_EQ(after.quarantined, before.quarantined);  // each thread's quarantine emptied at its exit
  malloc_trim(0);  // the exited threads' idle heaps take back the blocks freed to them
  const struct mallinfo2 mi = mallinfo2();
  // Every block back (200,000 were live, 300 MB) but the test's own lists.
  EXPECT_LT(mi.uordblks, before_mi.uordblks + kThreads * kBlocks * sizeof(void*) + (std::size_t{1} << 20));
}

// A thread exits while three others free its blocks: those frees go
// through the freeing threads' quarantines to the exited thread's idle
// heap, and every block must come back, none twice (secure mode itself
// aborts on a double free or a write after free).
TEST(Secure, AnExitingThreadsBlocksFreedByOthersAllComeBack) {
  tailor_secure_stats before;
  tailor_secure_get_stats(&before);
  const struct mallinfo2 before_mi = mallinfo2();
  constexpr int kFreers = 3, kBlocks = 60000;
  for (int round = 0; round < 8; ++round) {
    std::vector<void*> blocks(kBlocks);
    std::atomic<int> taken{0};
    std::atomic<bool> made{false};
    std::thread owner([&] {
      for (auto& p : blocks) p = malloc(200);
      made.store(true);
      while (taken.load() < kBlocks / 4) std::this_thread::yield();  // exits while the frees go on
    });
    std::vector<std::thread> freers;
    for (int t = 0; t < kFreers; ++t)
      freers.emplace_back([&] {
        while (!made.load()) std::this_thread::yield();
        for (int i; (i = taken.fetch_add(1)) < kBlocks;) free(blocks[static_cast<std::size_t>(i)]);
      });
    owner.join();
    for (auto& t : freers) t.join();
  }
  tailor_secure_stats after;
  tailor_secure_get_stats(&after);
  EXPECT_EQ(after.quarantined, before.quarantined);  // the freeing threads' quarantines emptied at their exit
  malloc_trim(0);  // the exited owner's idle heap takes back the blocks freed to it
  const struct mallinfo2 mi = mallinfo2();
  EXPECT_LT(mi.uordblks, before_mi.uordblks + (std::size_t{1} << 20));  // each round held 60,000 blocks of 200 bytes (13 MB)
}

// Two threads hand each other blocks all the time (as mt_server does):
// each frees the other's blocks (cleared in their first 64 bytes only, the
// rest by the owner's next malloc of them) while their owner allocates. A
// block handed out twice, or cleared wrongly, shows: each block carries its
// owner and a serial number, checked by whoever frees it, and secure mode
// itself aborts on the double free or the write after free that follows.
TEST(Secure, BlocksHandedBetweenThreadsAllTheTime) {
  struct Box {
    std::atomic<bool> locked{false};
    std::vector<std::uint64_t*> items;
  };
  Box boxes[2];
  std::atomic<std::uint64_t> bad{0};
  auto worker = [&](int me) {
    std::uint64_t x = 0x9e3779b97f4a7c15u * static_cast<std::uint64_t>(me + 1), serial = 0;
    std::vector<std::uint64_t*> mine, drained;
    auto check_and_free = [&](std::uint64_t* p) {
      if (p[1] != ~p[0]) bad.fetch_add(1);
      std::free(p);
    };
    for (int i = 0; i < 1500000; ++i) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      const std::size_t n = 16 + (x >> 40) % 2000;  // blocks both under and over 72 bytes (cleared whole, or in part)
      auto* p = static_cast<std::uint64_t*>(std::malloc(n));
      ASSERT_NE(p, nullptr);
      p[0] = (static_cast<std::uint64_t>(me) << 56) | ++serial;
      p[1] = ~p[0];
      if (x % 3 == 0) {
        mine.push_back(p);
      } else {
        Box& b = boxes[1 - me];
        while (b.locked.exchange(true)) std::this_thread::yield();
        b.items.push_back(p);
        b.locked.store(false);
      }
      if (mine.size() > 64) {
        check_and_free(mine.front());
        mine.erase(mine.begin());
      }
      if (i % 32 == 31) {
        Box& b = boxes[me];
        while (b.locked.exchange(true)) std::this_thread::yield();
        drained.swap(b.items);
        b.locked.store(false);
        for (auto* q : drained) check_and_free(q);
        drained.clear();
      }
    }
    for (auto* q : mine) check_and_free(q);
  };
  std::thread a(worker, 0), b(worker, 1);
  a.join();
  b.join();
  for (Box& box : boxes)
    for (auto* q : box.items) std::free(q);
  EXPECT_EQ(bad.load(), 0u);
}

// mallinfo2 counts secure mode's memory as glibc's meanings say: bytes in
// use grow and shrink with the program's blocks (in block sizes, so at
// least what was asked for), and the system bytes cover them.
TEST(Secure, Mallinfo2CountsSecureBlocks) {
  std::vector<void*> v;
  v.reserve(2001);  // its own buffer in every snapshot
  const struct mallinfo2 before = mallinfo2();
  for (int i = 0; i < 2000; ++i) v.push_back(bytes(100));
  v.push_back(bytes(1 << 20));
  const struct mallinfo2 during = mallinfo2();
  EXPECT_GE(during.uordblks, before.uordblks + 2000 * 100 + (1 << 20));
  EXPECT_LE(during.uordblks, before.uordblks + 2000 * 256 + (3 << 20));
  EXPECT_GE(during.arena, during.uordblks);
  for (void* p : v) free(p);
  const struct mallinfo2 after = mallinfo2();
  // This thread's frees are counted at once, but for the blocks its
  // quarantine holds (64 of these, in 112-byte blocks).
  EXPECT_LE(after.uordblks, before.uordblks + 64 * 112 + 4096);
  EXPECT_GE(after.arena, after.uordblks);
}

TEST(Secure, HugeAndImpossibleSizes) {
  const std::size_t big = std::size_t{300} << 20;  // more than a segment: a mapping of its own
  auto* p = static_cast<unsigned char*>(malloc(big));
  ASSERT_NE(p, nullptr);
  p[0] = 1;
  p[big - 1] = 2;
  EXPECT_EQ(malloc_usable_size(p), big);
  free(p);
  volatile std::size_t huge = SIZE_MAX - 4096;
  errno = 0;
  EXPECT_EQ(malloc(huge), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  EXPECT_EQ(calloc(huge, 2), nullptr);
  auto* z = static_cast<unsigned char*>(calloc(1000, 3));
  for (int i = 0; i < 3000; ++i) ASSERT_EQ(z[i], 0);
  free(z);
}

}  // namespace
