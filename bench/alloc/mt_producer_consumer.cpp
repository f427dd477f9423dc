// SPDX-License-Identifier: MIT
// Producer/consumer with cross-thread frees: threads come in pairs; the
// producer allocates messages of 16-1024 bytes, fills them and passes them
// through a bounded single-producer/single-consumer ring; the consumer reads
// and frees them. Every free is a free of another thread's block.
#include <atomic>
#include <cstdlib>
#include <thread>
#include <vector>

#include "mt_common.h"

namespace {

constexpr std::size_t kRing = 4096;

struct alignas(64) Ring {
  std::atomic<std::uint64_t> head{0};  // written by the consumer
  alignas(64) std::atomic<std::uint64_t> tail{0};  // written by the producer
  alignas(64) void* slot[kRing];
};

void produce(Ring& ring, const ab::Args& a, std::uint64_t id, ab::StartLine& start) {
  wl::Rng rng(a.seed * 77 + id);
  start.arrive_and_wait();
  for (std::uint64_t i = 0; i < a.size; ++i) {
    std::size_t n = 16 + rng.next() % 1009;
    auto* p = static_cast<std::uint64_t*>(std::malloc(n));
    if (p == nullptr) ab::oom("mt_producer_consumer");
    p[0] = i;
    p[1] = n;
    std::uint64_t t = ring.tail.load(std::memory_order_relaxed);
    while (t - ring.head.load(std::memory_order_acquire) >= kRing) std::this_thread::yield();
    ring.slot[t % kRing] = p;
    ring.tail.store(t + 1, std::memory_order_release);
  }
}

std::uint64_t consume(Ring& ring, const ab::Args& a, ab::StartLine& start) {
  std::uint64_t sum = 0;
  start.arrive_and_wait();
  for (std::uint64_t i = 0; i < a.size; ++i) {
    std::uint64_t h = ring.head.load(std::memory_order_relaxed);
    while (ring.tail.load(std::memory_order_acquire) == h) std::this_thread::yield();
    auto* p = static_cast<std::uint64_t*>(ring.slot[h % kRing]);
    ring.head.store(h + 1, std::memory_order_release);
    if (p[0] != i) {
      std::fprintf(stderr, "mt_producer_consumer: message out of order\n");
      std::exit(1);
    }
    sum += p[1];
    std::free(p);
  }
  return sum;
}

}  // namespace

int main(int argc, char** argv) {
  ab::Args a = ab::parse(argc, argv, 5000000, 2, "producer/consumer pairs; --size: messages per pair; --threads: even");
  std::uint64_t pairs = a.threads < 2 ? 1 : a.threads / 2;
  ab::StartLine start(pairs * 2);
  std::vector<Ring> rings(pairs);
  std::vector<std::uint64_t> sums(pairs);
  std::vector<std::thread> ts;
  for (std::uint64_t k = 0; k < pairs; ++k) {
    ts.emplace_back([&, k] { produce(rings[k], a, k, start); });
    ts.emplace_back([&, k] { sums[k] = consume(rings[k], a, start); });
  }
  for (auto& t : ts) t.join();
  std::uint64_t total = 0;
  for (auto s : sums) total += s;
  std::printf("pairs: %llu\nresult: %llu\n", static_cast<unsigned long long>(pairs), static_cast<unsigned long long>(total));
}
