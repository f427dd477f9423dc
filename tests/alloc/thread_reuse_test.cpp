// SPDX-License-Identifier: MIT
// What libtailor does with memory that crosses threads (docs/allocator.md,
// "Other threads' frees" and "Threads, fork, start-up"): a thread that frees
// another thread's block of a line-sized class reuses it for its own next
// malloc of that class (the stash), never a block of a class that could
// share a cache line, and hands one in eight back to an owner that does
// not allocate all the same; the owner gets stashed blocks back when the stashing thread exits;
// a new thread whose first free is of an ended thread's block adopts that
// thread's heap; and a thread that adopts an ended thread's heap finds its
// free pages still resident, without faulting them in again, also the
// pages of blocks that another thread held and freed after the owner ended,
// and allocates in its predecessor's empty pages; waves of new threads
// adopt the idle heaps, also while a sweep holds them; and a thread that
// frees the blocks of several owners in turn hands each its own back, in
// batches with an index or as chains, also one that never allocates.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "alloc/config.h"
#include "alloc/heap.h"
#include "common/process_memory.h"
#include "tailor/tailor.h"

namespace {

std::vector<void*> allocate(std::size_t n, std::size_t size) {
  std::vector<void*> v(n);
  for (auto& p : v) {
    p = tailor_malloc(size);
    EXPECT_NE(p, nullptr);
    std::memset(p, 0x5a, size);
  }
  return v;
}

bool contains(const std::vector<void*>& v, void* p) { return std::find(v.begin(), v.end(), p) != v.end(); }

// Bytes in the live blocks of the calling thread's heap.
std::uint64_t used() {
  tailor_stats s;
  tailor_get_stats(&s);
  return s.thread_used_bytes;
}

// Runs `with_blocks` on a second thread while the thread that allocated
// `blocks` is still alive (an ended thread's heap would be adopted by the
// next new thread, and its blocks would not be foreign any more).
template <class F>
void while_owner_lives(std::size_t n, std::size_t size, F with_blocks) {
  std::atomic<int> stage{0};
  std::vector<void*> owned;
  std::thread owner([&] {
    owned = allocate(n, size);
    stage = 1;
    while (stage.load() != 2) std::this_thread::yield();
  });
  while (stage.load() != 1) std::this_thread::yield();
  std::thread other([&] { with_blocks(owned); });
  other.join();
  stage = 2;
  owner.join();
}

TEST(ThreadReuse, FreeingThreadReusesLineSizedForeignBlocksMostRecentFirst) {
  // 7 blocks of 256 bytes (a multiple of the line; fewer than 8: once their
  // owner is found dormant, one block in eight goes back) after blocks of
  // 48 bytes (not stashed: they go back to the owner), kDeferMax foreign
  // frees in all: the last one makes the thread look at all it set aside
  // (heap.h, Heap::deferred), the 256-byte ones into its stash in the order
  // they were freed. (Its next slow path would too, but a thread that
  // adopted an earlier test's heap may not take one.)
  constexpr std::size_t kLine = 7, kOther = tailor::alloc::kDeferMax - kLine;
  std::atomic<int> stage{0};
  std::vector<void*> other, owned;
  std::thread owner([&] {
    other = allocate(kOther, 48);
    owned = allocate(kLine, 256);
    stage = 1;
    while (stage.load() != 2) std::this_thread::yield();
  });
  while (stage.load() != 1) std::this_thread::yield();
  std::thread([&] {
    tailor_free(tailor_malloc(256));  // this thread's heap exists before the foreign frees
    for (void* p : other) tailor_free(p);
    for (void* p : owned) tailor_free(p);
    for (std::size_t i = kLine; i-- > 0;) {
      void* q = tailor_malloc(256);
      EXPECT_EQ(q, owned[i]) << "the block freed last comes back first";
      if (q != owned[i]) tailor_free(q);
    }
    for (void* p : owned) tailor_free(p);  // still the owner's blocks: into this thread's stash again
  }).join();
  stage = 2;
  owner.join();
}

// A thread that sets foreign frees aside hands them back when it ends,
// also those of classes that are not stashed and fewer than it looks at
// at a time (32).
TEST(ThreadReuse, ForeignFreesSetAsideGoBackWhenTheFreeingThreadEnds) {
  tailor_collect();
  std::vector<void*> owned = allocate(10, 48);  // 48: not stashed, handed back to the owner
  const std::uint64_t with = used();
  std::thread freer([&] {
    tailor_free(tailor_malloc(48));  // a heap of its own: its next foreign frees are set aside
    for (void* p : owned) tailor_free(p);
  });
  freer.join();
  tailor_collect();  // drains the remote list
  EXPECT_EQ(with - used(), 10u * 48) << "the ended thread's set-aside frees did not come back to the owner";
}

// And a live thread hands them back when it collects (tailor_collect,
// malloc_trim), whatever their number.
TEST(ThreadReuse, ForeignFreesSetAsideGoBackWhenTheFreeingThreadCollects) {
  tailor_collect();
  std::vector<void*> owned = allocate(10, 48);
  const std::uint64_t with = used();
  std::atomic<int> stage{0};
  std::thread freer([&] {
    tailor_free(tailor_malloc(48));
    for (void* p : owned) tailor_free(p);
    tailor_collect();
    stage = 1;
    while (stage.load() != 2) std::this_thread::yield();
  });
  while (stage.load() != 1) std::this_thread::yield();
  tailor_collect();
  const std::uint64_t after = used();
  stage = 2;
  freer.join();
  EXPECT_EQ(with - after, 10u * 48) << "tailor_collect did not hand the set-aside frees back";
}

TEST(ThreadReuse, ALiveOwnersBlocksDoNotStayInTheStashesForGood) {
  // A thread that keeps replacing the blocks of another thread, alive but
  // not allocating: every stashed block comes back to it at its next
  // malloc, so without the hand-back of one stashed block in eight to a
  // dormant owner the array would hold the owner's blocks for ever, each
  // free of them a remote one.
  while_owner_lives(64, 256, [](const std::vector<void*>& owned) {
    std::vector<void*> a = owned;
    for (int pass = 0; pass < 200; ++pass)
      for (void*& p : a) {
        tailor_free(p);
        p = tailor_malloc(256);
      }
    long still = 0;
    for (void* p : a) still += contains(owned, p) ? 1 : 0;
    EXPECT_EQ(still, 0) << "blocks of the owner still circulate through this thread's stash";
    for (void* p : a) tailor_free(p);
  });
}

TEST(ThreadReuse, ANewThreadAdoptsTheHeapWhoseBlockItFreesFirst) {
  // Two threads end, each leaving blocks behind; the one that ended last
  // is on top of the idle stack. A new thread whose first call frees a
  // block of the first one's gets that heap, not the top one.
  std::vector<void*> left1, left2;
  std::uint64_t used1 = 0, used2 = 0;
  std::atomic<int> stage{0};
  // Alive at once, so that they have heaps of their own; the first ends first.
  std::thread first([&] {
    left1 = allocate(10, 4096);
    used1 = used();
    stage = 1;
    while (stage.load() != 2) std::this_thread::yield();
  });
  std::thread second([&] {
    while (stage.load() != 1) std::this_thread::yield();
    left2 = allocate(30, 4096);
    used2 = used();
    stage = 2;
    first.join();
  });
  second.join();
  ASSERT_NE(used1, used2);
  std::uint64_t adopted = 0;
  std::thread([&] {
    tailor_free(left1.back());  // before anything else: the thread has no heap yet
    adopted = used();
  }).join();
  left1.pop_back();
  EXPECT_EQ(adopted, used1 - 4096) << "the thread did not adopt the heap of the block it freed first";
  for (void* p : left1) tailor_free(p);
  for (void* p : left2) tailor_free(p);
}

TEST(ThreadReuse, ClassesThatMayShareALineGoBackToTheirOwner) {
  while_owner_lives(64, 48, [](const std::vector<void*>& owned) {  // 48-byte blocks straddle lines
    tailor_free(tailor_malloc(48));
    for (void* p : owned) tailor_free(p);
    std::vector<void*> mine = allocate(64, 48);
    for (void* q : mine) EXPECT_FALSE(contains(owned, q)) << "a 48-byte block of another heap was reused";
    for (void* q : mine) tailor_free(q);
  });
}

// A thread whose mallocs its own frees serve never takes the slow path,
// where other threads' frees come back to it: every kFreeBeat-th own free
// (256, heap.h) takes them back instead, at every beat, not only the first
// (a counter that was not reset to the beat's length stopped after one).
TEST(ThreadReuse, AThreadServedByItsOwnFreesTakesOthersFreesBackAtEveryHeartbeat) {
  constexpr int kBeat = 256;
  const auto own_cycles = [](int n) {
    for (int i = 0; i < n; ++i) tailor_free(tailor_malloc(32));  // fast paths only, after the first
  };
  own_cycles(3 * kBeat);  // past the first beats
  for (int round = 0; round < 3; ++round) {
    std::vector<void*> given = allocate(2000, 48);  // a class that goes back to its owner (not stashed)
    const std::uint64_t before = used();
    std::thread([&] {
      for (void* p : given) tailor_free(p);
    }).join();  // its batches reach this heap's remote list at the latest when it ends
    EXPECT_GE(used(), before) << "round " << round << ": taken back without a beat";
    own_cycles(kBeat + 1);
    EXPECT_LE(used() + 2000 * 48, before) << "round " << round << ": other threads' frees not taken back after "
                                          << kBeat + 1 << " own frees";
  }
}

TEST(ThreadReuse, StashedBlocksGoBackToTheOwnerWhenTheStashingThreadEnds) {
  // The owner keeps running, so its heap is not adopted by the freer. A
  // stashed block still counts as in use in the owner's pages until the
  // stash hands it back and the owner drains its remote list.
  tailor_collect();  // blocks this thread stashed before would not count as its own
  std::vector<void*> owned = allocate(16, 512);
  const std::uint64_t with = used();
  std::thread freer([&] {
    tailor_free(tailor_malloc(512));
    for (void* p : owned) tailor_free(p);  // all stashed (at most 32 per class)
  });
  freer.join();
  tailor_collect();  // drains the remote list
  EXPECT_EQ(with - used(), 16u * 512) << "the ended thread's stash did not come back to the owner";
}

using tailor::test::minor_faults;

TEST(ThreadReuse, AdoptedHeapKeepsRecentFreePagesResident) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "page faults under a sanitizer count its shadow memory";
#endif
  // 4 MiB of small blocks, freed before the thread ends: their pages go back
  // to the heap's free spans, which stay resident (at most 8 MiB) for the
  // thread that adopts the heap.
  auto churn = [] {
    std::vector<void*> v = allocate(4096, 1000);
    for (void* p : v) tailor_free(p);
  };
  std::thread(churn).join();
  long faults = 0;
  std::thread([&] {
    const long before = minor_faults();
    std::vector<void*> v = allocate(4096, 1000);
    faults = minor_faults() - before;
    for (void* p : v) tailor_free(p);
  }).join();
  EXPECT_LT(faults, 200) << "4 MiB faulted in afresh would be about 1000 faults";
}

}  // namespace

namespace {

// A thread that ends while another thread still holds its blocks: the
// holder frees them (to the ended thread's heap, which went idle), and the
// next new thread, which adopts that heap, allocates in the same pages
// again instead of faulting in new ones.
TEST(ThreadReuse, PagesOfAnEndedThreadsBlocksFreedByOthersAreReusedWithoutFaults) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "page faults under a sanitizer count its shadow memory";
#endif
  tailor_free(tailor_malloc(8));  // this thread has a heap of its own (a first free would adopt theirs)
  for (const std::size_t size : {48u, 1000u}) {
    const std::size_t n = (4u << 20) / size;  // 4 MiB of blocks
    std::vector<void*> held;
    std::thread([&] { held = allocate(n, size); }).join();
    for (void* p : held) tailor_free(p);  // this thread is not their owner
    long faults = 0;
    std::thread([&] {
      const long before = minor_faults();
      std::vector<void*> v = allocate(n, size);
      faults = minor_faults() - before;
      for (void* p : v) tailor_free(p);
    }).join();
    EXPECT_LT(faults, 200) << size << "-byte blocks: 4 MiB faulted in afresh would be about 1000 faults";
  }
}

}  // namespace

namespace {

// Waves of threads that start while the heaps of the last wave are idle:
// each new thread adopts one of them, also while a live thread's sweep
// (heap.cpp, idle_sweep_maybe) holds them off the idle stack for their
// upkeep. Each thread starts by taking many slow paths (new pages of many
// classes), where the sweeps happen, at most one per 50 ms. A new thread
// that made a heap of its own there kept it, and its pages, for good.
TEST(ThreadReuse, WavesOfThreadsReuseTheIdleHeapsWhileTheyAreSwept) {
  constexpr int kThreads = 4, kWaves = 40;
  auto work = [] {
    std::vector<void*> v;
    for (std::size_t i = 0; i < 3000; ++i) v.push_back(tailor_malloc(16 + (i * 40) % 2000));
    for (void* p : v) tailor_free(p);
  };
  auto wave = [&] {
    std::vector<std::thread> ts;
    for (int t = 0; t < kThreads; ++t) ts.emplace_back(work);
    for (auto& t : ts) t.join();
  };
  {  // kThreads idle heaps at least: the first wave's threads hold heaps at once
    std::atomic<int> started{0};
    std::vector<std::thread> ts;
    for (int t = 0; t < kThreads; ++t)
      ts.emplace_back([&] {
        tailor_free(tailor_malloc(16));
        started.fetch_add(1);
        while (started.load() != kThreads) std::this_thread::yield();
        work();
      });
    for (auto& t : ts) t.join();
  }
  tailor_stats before;
  tailor_get_stats(&before);
  for (int w = 0; w < kWaves; ++w) {
    std::this_thread::sleep_for(std::chrono::milliseconds(60));  // the next wave's first slow path sweeps
    wave();
  }
  tailor_stats after;
  tailor_get_stats(&after);
  EXPECT_EQ(after.heaps_created, before.heaps_created) << "new heaps made while idle ones were there to adopt";
  EXPECT_GE(after.heaps_adopted - before.heaps_adopted, std::uint64_t{kThreads} * kWaves);
}

}  // namespace

namespace {

// One thread frees the blocks of three live threads in turn, of classes that
// go back to their owners (not multiples of the line): each owner's blocks
// travel in a batch of their own (heap.h, RemoteBatch), and a batch of
// three blocks or more goes back with an index in its roomiest block, which
// the owner reads and clears (heap.cpp, flush_batch and drain_remote). Each
// owner gets every block back, exactly once (a block taken back twice, or
// an index taken for a block, would free more than was allocated, or
// corrupt a page's lists: the debug build's checks).
void several_owners_in_turn(bool freer_ends, const std::vector<std::size_t>& kSizes) {
  constexpr int kOwners = 3;
  constexpr std::size_t kPerSize = 200;
  std::atomic<int> ready{0}, go_back{0};
  std::vector<void*> owned[kOwners];
  std::uint64_t before[kOwners] = {}, after[kOwners] = {};
  for (auto& v : owned) v.reserve(kSizes.size() * kPerSize);
  std::vector<std::thread> owners;
  for (int o = 0; o < kOwners; ++o)
    owners.emplace_back([&, o] {
      for (std::size_t i = 0; i < kPerSize; ++i)
        for (std::size_t size : kSizes) owned[o].push_back(tailor_malloc(size));
      before[o] = used();
      ready++;
      while (go_back.load() == 0) std::this_thread::yield();
      tailor_collect();  // drains the remote list
      after[o] = used();
    });
  while (ready.load() != kOwners) std::this_thread::yield();
  std::thread freer([&] {
    tailor_free(tailor_malloc(8));  // a heap of its own
    for (std::size_t i = 0; i < owned[0].size(); ++i)
      for (auto& v : owned) tailor_free(v[i]);
    if (!freer_ends) {
      tailor_collect();  // hands its batches back while it lives on
      go_back = 1;
    }
  });
  if (freer_ends) {
    freer.join();  // hands its batches back as it ends
    go_back = 1;
  }
  for (auto& t : owners) t.join();
  if (!freer_ends) freer.join();
  std::uint64_t bytes = 0;
  for (std::size_t size : kSizes) bytes += kPerSize * size;
  for (int o = 0; o < kOwners; ++o)
    EXPECT_EQ(before[o] - after[o], bytes) << "owner " << o << " did not get its blocks back, once each";
}

// 224-byte blocks have room for an index of 23 others; 32, 48 and 80-byte
// ones for none, two and six: batches of those go back as chains.
TEST(ThreadReuse, BlocksOfSeveralOwnersFreedInTurnGoBackToEachWhenTheFreerEnds) {
  several_owners_in_turn(true, {48, 160, 224, 80, 32});
}

TEST(ThreadReuse, BlocksOfSeveralOwnersFreedInTurnGoBackToEachWhenTheFreerCollects) {
  several_owners_in_turn(false, {48, 160, 224, 80, 32});
}

TEST(ThreadReuse, BatchesWithNoRoomForAnIndexGoBackAsChains) { several_owners_in_turn(true, {32, 48, 80}); }

// A thread that ends with its pages empty leaves each class's first page to
// the thread that adopts its heap, which allocates in the same blocks: its
// first blocks of each class land where its predecessor's did, on pages
// already faulted in, whatever order it asks for its classes in. (Freed at
// exit, the pages' spans coalesced and each new thread cut its pages at
// other offsets, so that every wave of threads faulted more of them in.)
TEST(ThreadReuse, AnAdopterAllocatesInItsPredecessorsEmptyPagesWithoutFaults) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "page faults under a sanitizer count its shadow memory";
#endif
  tailor_free(tailor_malloc(8));  // this thread has a heap of its own
  std::vector<std::size_t> sizes;
  for (std::size_t s = 16; s <= 32768; s += s / 4) sizes.push_back(s);  // about one per class
  auto work = [&](bool reverse) {
    std::vector<void*> v;
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      const std::size_t size = sizes[reverse ? sizes.size() - 1 - k : k];
      for (int i = 0; i < 4; ++i) {
        v.push_back(tailor_malloc(size));
        std::memset(v.back(), 0x5a, size);
      }
    }
    for (void* p : v) tailor_free(p);
  };
  std::thread([&] { work(false); }).join();
  long faults = 0;
  std::thread([&] {
    const long before = minor_faults();
    work(true);
    faults = minor_faults() - before;
  }).join();
  EXPECT_LT(faults, 20) << "the adopter faulted in pages its predecessor had not touched";
}

}  // namespace

namespace {

// A thread that never allocates (a queue's consumer) and frees a live
// thread's blocks gets a heap at its first free, to gather them in batches
// (heap.h, RemoteBatch): the owner gets them back a batch at a time, and the
// rest when the freer ends, not one push each (the owner then walked a
// chain of blocks last written by another core, a miss each). Until it
// allocates, it stashes nothing: blocks of a line-sized class (128 bytes)
// go back too, not into stashes it would never use.
TEST(ThreadReuse, AThreadThatOnlyFreesHandsBlocksBackInBatchesAndStashesNone) {
  constexpr std::size_t kBlocks = 150, kSize = 128;  // two full batches of the default 64, and a rest
  tailor_config(nullptr, 0);  // reads the configuration
  const std::size_t batch = tailor::alloc::g_config.remote_batch;
  if (batch <= 1 || batch > kBlocks) GTEST_SKIP() << "REMOTE_BATCH " << batch;
  std::atomic<int> stage{0};
  std::vector<void*> owned;
  std::uint64_t start = 0, while_freer_lives = 0, after_freer = 0;
  std::thread owner([&] {
    owned = allocate(kBlocks, kSize);
    start = used();
    stage = 1;
    while (stage.load() != 2) std::this_thread::yield();
    tailor_collect();  // drains the remote list
    while_freer_lives = used();
    stage = 3;
    while (stage.load() != 4) std::this_thread::yield();
    tailor_collect();
    after_freer = used();
  });
  while (stage.load() != 1) std::this_thread::yield();
  std::thread freer([&] {
    for (void* p : owned) tailor_free(p);  // its first calls: no heap yet
    stage = 2;
    while (stage.load() != 3) std::this_thread::yield();
  });
  freer.join();  // hands its last batch back as it ends
  stage = 4;
  owner.join();
  EXPECT_EQ(start - while_freer_lives, kBlocks / batch * batch * kSize) << "not the full batches alone";
  EXPECT_EQ(start - after_freer, kBlocks * kSize) << "blocks kept after the freer ended";
}

}  // namespace
