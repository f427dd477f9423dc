// SPDX-License-Identifier: MIT
// Threads that come and go, under whatever malloc the program runs on
// (ctest preloads libtailor.so).
//
//   thread_churn churn --threads N [--concurrent K] [--blocks B]
//     N short-lived threads, K at a time; each allocates B blocks of 16 B -
//     4 KiB, frees half of the blocks earlier threads handed over, hands
//     half of its own to later threads and frees the rest. RSS is read after
//     the first second and at the end; fails if the end is above 1.2x the
//     first reading (+1 MiB).
//   thread_churn abandon [--threads T] [--mib M]
//     T threads each allocate M MiB of small blocks, hand them all to the
//     main thread and exit; no thread starts again. The main thread frees
//     every block (into the heaps of threads that are gone), then keeps
//     allocating and freeing a little for a second. Fails unless RSS comes
//     back down to within a quarter of what the threads had allocated.
#include <pthread.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/process_memory.h"

namespace {

using tailor::test::rss_kb;
using Clock = std::chrono::steady_clock;

long arg(int argc, char** argv, const char* name, long def) {
  for (int i = 2; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::strtol(argv[i + 1], nullptr, 10);
  return def;
}

// Blocks handed from one thread to the next (a bounded ring, allocated once).
struct Handoff {
  std::mutex mu;
  std::vector<void*> ring;
  std::size_t head = 0, count = 0;
  explicit Handoff(std::size_t cap) : ring(cap) {}
  bool put(void* p) {
    std::lock_guard<std::mutex> l(mu);
    if (count == ring.size()) return false;
    ring[(head + count++) % ring.size()] = p;
    return true;
  }
  void* take() {
    std::lock_guard<std::mutex> l(mu);
    if (count == 0) return nullptr;
    void* p = ring[head];
    head = (head + 1) % ring.size();
    --count;
    return p;
  }
};

int churn(long threads, long concurrent, long blocks) {
  Handoff handoff(static_cast<std::size_t>(blocks * concurrent * 2));
  const auto start = Clock::now();
  long first_rss = -1, peak = 0;
  std::vector<std::thread> running;
  for (long t = 0; t < threads;) {
    for (long k = 0; k < concurrent && t < threads; ++k, ++t) {
      running.emplace_back([&handoff, blocks, t] {
        std::mt19937 rng(static_cast<unsigned>(t));
        void* mine[512];
        const long n = blocks < 512 ? blocks : 512;
        for (long i = 0; i < n; ++i) {
          std::size_t size = 16u << (rng() % 9);
          mine[i] = std::malloc(size);
          std::memset(mine[i], 1, size < 64 ? size : 64);
        }
        for (long i = 0; i < n / 2; ++i)
          if (void* p = handoff.take()) std::free(p);
        for (long i = 0; i < n; ++i)
          if (i % 2 != 0 || !handoff.put(mine[i])) std::free(mine[i]);
      });
    }
    for (auto& th : running) th.join();
    running.clear();
    if (first_rss < 0 && Clock::now() - start >= std::chrono::seconds(1)) first_rss = rss_kb();
    long r = rss_kb();
    peak = r > peak ? r : peak;
  }
  while (void* p = handoff.take()) std::free(p);
  const long end_rss = rss_kb();
  if (first_rss < 0) first_rss = end_rss;  // ran for less than a second
  const double secs = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("churn: %ld threads in %.1f s, RSS after 1 s %ld KiB, peak %ld KiB, end %ld KiB (%.2fx)\n", threads,
              secs, first_rss, peak, end_rss, static_cast<double>(end_rss) / static_cast<double>(first_rss));
  if (end_rss > first_rss * 12 / 10 + 1024) {
    std::printf("FAIL: RSS grew by more than 1.2x\n");
    return 1;
  }
  return 0;
}

int abandon(long threads, long mib) {
  const long base = rss_kb();
  const std::size_t per_thread = static_cast<std::size_t>(mib) << 20;
  constexpr std::size_t kBlock = 2000;
  std::vector<std::vector<void*>> handed(static_cast<std::size_t>(threads));
  for (auto& v : handed) v.reserve(per_thread / kBlock + 1);
  std::vector<std::thread> ts;
  for (long t = 0; t < threads; ++t)
    ts.emplace_back([&, t] {
      auto& out = handed[static_cast<std::size_t>(t)];
      for (std::size_t done = 0; done < per_thread; done += kBlock) {
        void* p = std::malloc(kBlock);
        std::memset(p, 3, kBlock);
        out.push_back(p);
      }
    });
  for (auto& th : ts) th.join();
  const long loaded = rss_kb();
  for (auto& v : handed)
    for (void* p : v) std::free(p);  // into the heaps of threads that are gone
  for (auto& v : handed) std::vector<void*>().swap(v);
  const long freed = rss_kb();
  // The main thread goes on with a little work of its own (two pages' worth
  // of blocks, allocated and freed) for a second; no thread starts.
  const auto start = Clock::now();
  std::vector<void*> mine(2000);
  while (Clock::now() - start < std::chrono::seconds(1)) {
    for (auto& p : mine) p = std::malloc(100);
    for (auto& p : mine) std::free(p);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const long after = rss_kb();
  const long allocated = loaded - base;
  std::printf("abandon: %ld threads x %ld MiB; RSS KiB: before %ld, allocated %ld, all freed %ld, 1 s later %ld\n",
              threads, mib, base, loaded, freed, after);
  if (after - base > allocated / 4) {
    std::printf("FAIL: the memory of the exited threads stayed resident (%ld KiB above the start)\n", after - base);
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "churn") == 0)
    return churn(arg(argc, argv, "--threads", 100000), arg(argc, argv, "--concurrent", 4),
                 arg(argc, argv, "--blocks", 64));
  if (argc >= 2 && std::strcmp(argv[1], "abandon") == 0)
    return abandon(arg(argc, argv, "--threads", 8), arg(argc, argv, "--mib", 16));
  std::fprintf(stderr, "usage: thread_churn churn|abandon [options]\n");
  return 2;
}
