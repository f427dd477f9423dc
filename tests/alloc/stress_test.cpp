// SPDX-License-Identifier: MIT
// Multithreaded stress of the core: threads allocate, write, hand blocks to
// each other through queues and free what they receive (cross-thread frees),
// threads exit and their heaps are adopted by new ones. Built also under TSan
// (make test-tsan). Every block carries a pattern checked at free time.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "tailor/tailor.h"

namespace {

struct Mailbox {
  std::mutex m;
  std::vector<void*> items;
};

std::uint64_t next_rand(std::uint64_t& s) {
  s ^= s << 13;
  s ^= s >> 7;
  s ^= s << 17;
  return s;
}

std::size_t pick_size(std::uint64_t r) {
  switch (r % 16) {
    case 0: return 2000 + r % 30000;
    case 1: return r % 300000 < 1000 ? 300000 : 64 + r % 4000;
    default: return 1 + r % 200;
  }
}

// n >= 16: the size in the first 8 bytes, a tag derived from it in the last 4.
void stamp(void* p, std::size_t n) {
  std::uint32_t tag = static_cast<std::uint32_t>(n * 2654435761u);
  std::memcpy(p, &n, sizeof n);
  std::memcpy(static_cast<char*>(p) + n - 4, &tag, 4);
}
bool verify(void* p) {
  std::size_t n;
  std::memcpy(&n, p, sizeof n);
  std::uint32_t tag, want = static_cast<std::uint32_t>(n * 2654435761u);
  std::memcpy(&tag, static_cast<char*>(p) + n - 4, 4);
  return tag == want;
}

void worker(int id, int nthreads, std::vector<Mailbox>& boxes, int rounds, std::atomic<long>& errors) {
  std::uint64_t rng = 0x9e3779b97f4a7c15ull * static_cast<std::uint64_t>(id + 1);
  std::vector<void*> mine;
  for (int r = 0; r < rounds; ++r) {
    std::size_t n = pick_size(next_rand(rng));
    if (n < 16) n = 16;  // room for the size and the tag
    void* p = tailor_malloc(n);
    if (p == nullptr) { errors++; continue; }
    stamp(p, n);
    if (next_rand(rng) % 2) {
      Mailbox& b = boxes[static_cast<std::size_t>((id + 1 + static_cast<int>(next_rand(rng) % static_cast<std::uint64_t>(nthreads - 1))) % nthreads)];
      std::lock_guard<std::mutex> g(b.m);
      b.items.push_back(p);
    } else {
      mine.push_back(p);
    }
    if (mine.size() > 500 || r % 97 == 0) {
      for (void* q : mine) {
        if (!verify(q)) errors++;
        tailor_free(q);
      }
      mine.clear();
    }
    if (r % 31 == 0) {
      std::vector<void*> got;
      {
        std::lock_guard<std::mutex> g(boxes[static_cast<std::size_t>(id)].m);
        got.swap(boxes[static_cast<std::size_t>(id)].items);
      }
      for (void* q : got) {
        if (!verify(q)) errors++;
        tailor_free(q);
      }
    }
  }
  for (void* q : mine) {
    if (!verify(q)) errors++;
    tailor_free(q);
  }
}

TEST(Stress, CrossThreadFrees) {
  constexpr int kThreads = 4;
  std::vector<Mailbox> boxes(kThreads);
  std::atomic<long> errors{0};
  for (int generation = 0; generation < 3; ++generation) {  // later generations adopt heaps
    std::vector<std::thread> ts;
    for (int i = 0; i < kThreads; ++i) ts.emplace_back(worker, i, kThreads, std::ref(boxes), 30000, std::ref(errors));
    for (auto& t : ts) t.join();
  }
  for (auto& b : boxes)
    for (void* q : b.items) {
      if (!verify(q)) errors++;
      tailor_free(q);
    }
  EXPECT_EQ(errors.load(), 0);
  tailor_dmm_stats d;
  tailor_dmm_get_stats(&d);
  if (d.active) return;  // one DMM serves every thread (TAILOR_DMM): no heaps to adopt
  tailor_secure_stats sec;
  tailor_secure_get_stats(&sec);
  if (sec.active) return;  // secure mode (TAILOR_SECURE): threads have no heaps
  tailor_stats s;
  tailor_get_stats(&s);
  EXPECT_GE(s.heaps_adopted, 1u);
}

// Larson-style hand-overs with threads ending mid-exchange: each of
// kSlots arrays of blocks goes from thread to thread; a new thread frees
// blocks of the one that just ended before it allocates anything (so it
// adopts that heap where it lies on the idle stack, heap.cpp), replaces
// random blocks, and hands the array on, while the other slots' threads
// start and end around it. Under TSan (make test-tsan) this checks the
// idle stack's claims against its pops.
TEST(Stress, NewThreadsFreeTheBlocksOfThreadsThatJustEnded) {
  constexpr int kSlots = 3, kGenerations = 40, kBlocks = 400, kReplace = 1500;
  std::atomic<long> errors{0};
  std::vector<std::vector<void*>> arrays(kSlots);
  for (auto& a : arrays)
    for (int k = 0; k < kBlocks; ++k) {
      a.push_back(tailor_malloc(16 + static_cast<std::size_t>(k) % 700));
      stamp(a.back(), 16 + static_cast<std::size_t>(k) % 700);
    }
  auto generation = [&](std::vector<void*>& a, std::uint64_t seed) {
    std::uint64_t rng = seed * 0x9e3779b97f4a7c15ull + 1;
    for (int i = 0; i < kReplace; ++i) {
      const std::size_t k = next_rand(rng) % a.size();
      if (!verify(a[k])) errors++;
      tailor_free(a[k]);
      const std::size_t n = 16 + next_rand(rng) % 1000;
      a[k] = tailor_malloc(n);
      if (a[k] == nullptr) {
        errors++;
        a[k] = tailor_malloc(16);
        stamp(a[k], 16);
        continue;
      }
      stamp(a[k], n);
    }
  };
  std::vector<std::thread> running(kSlots);
  for (int g = 0; g < kGenerations; ++g)
    for (int s = 0; s < kSlots; ++s) {
      if (running[static_cast<std::size_t>(s)].joinable()) running[static_cast<std::size_t>(s)].join();
      running[static_cast<std::size_t>(s)] =
          std::thread(generation, std::ref(arrays[static_cast<std::size_t>(s)]), static_cast<std::uint64_t>(g * kSlots + s));
    }
  for (auto& t : running) t.join();
  for (auto& a : arrays)
    for (void* q : a) {
      if (!verify(q)) errors++;
      tailor_free(q);
    }
  EXPECT_EQ(errors.load(), 0);
}

TEST(Stress, ProducerConsumer) {
  // One thread allocates, another frees: every free is remote.
  constexpr int kBlocks = 200000;
  std::vector<std::atomic<void*>> slots(1024);
  std::atomic<long> errors{0};
  std::thread producer([&] {
    for (int i = 0; i < kBlocks; ++i) {
      std::size_t n = 16 + static_cast<std::size_t>(i % 100);
      void* p = tailor_malloc(n);
      stamp(p, n);
      auto& s = slots[static_cast<std::size_t>(i) % slots.size()];
      void* expected = nullptr;
      while (!s.compare_exchange_weak(expected, p, std::memory_order_release)) {
        expected = nullptr;
        std::this_thread::yield();
      }
    }
  });
  std::thread consumer([&] {
    for (int i = 0; i < kBlocks; ++i) {
      auto& s = slots[static_cast<std::size_t>(i) % slots.size()];
      void* p;
      while ((p = s.exchange(nullptr, std::memory_order_acquire)) == nullptr) std::this_thread::yield();
      if (!verify(p)) errors++;
      tailor_free(p);
    }
  });
  producer.join();
  consumer.join();
  EXPECT_EQ(errors.load(), 0);
}

TEST(Stress, ThreadsDoNotShareCacheLines) {
  constexpr int kThreads = 4;
  std::vector<std::uintptr_t> lines[kThreads];
  std::vector<std::thread> ts;
  std::atomic<int> ready{0};
  for (int i = 0; i < kThreads; ++i)
    ts.emplace_back([&, i] {
      std::vector<void*> v;
      for (int k = 0; k < 2000; ++k) {
        void* p = tailor_malloc(8 + static_cast<std::size_t>(k % 7) * 8);
        v.push_back(p);
        lines[i].push_back(reinterpret_cast<std::uintptr_t>(p) / 64);
      }
      ready++;
      while (ready.load() < kThreads) std::this_thread::yield();
      for (void* p : v) tailor_free(p);
    });
  for (auto& t : ts) t.join();
  std::vector<std::pair<std::uintptr_t, int>> all;
  for (int i = 0; i < kThreads; ++i)
    for (auto l : lines[i]) all.emplace_back(l, i);
  std::sort(all.begin(), all.end());
  for (std::size_t k = 1; k < all.size(); ++k)
    if (all[k].first == all[k - 1].first) {
      ASSERT_EQ(all[k].second, all[k - 1].second) << "line shared";
    }
}

}  // namespace
