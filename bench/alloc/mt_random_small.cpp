// SPDX-License-Identifier: MIT
// Many threads of random small allocations and frees (xmalloc / larson
// style, without hand-offs): each thread keeps 2000 slots and, --size times,
// frees a random slot and refills it with 8-256 bytes that it writes. Scales
// with threads if the allocator has no shared state on this path.
#include <pthread.h>

#include <cstdlib>
#include <thread>
#include <vector>

#include "mt_common.h"

namespace {
constexpr int kSlots = 2000;

std::uint64_t run(std::uint64_t id, const ab::Args& a, ab::StartLine& start) {
  wl::Rng rng(a.seed * 1000 + id);
  void* slots[kSlots] = {};
  std::uint64_t sum = 0;
  start.arrive_and_wait();
  for (std::uint64_t i = 0; i < a.size; ++i) {
    std::uint64_t r = rng.next();
    int k = static_cast<int>(r % kSlots);
    if (slots[k]) {
      sum += *static_cast<unsigned char*>(slots[k]);
      std::free(slots[k]);
    }
    std::size_t n = 8 + (r >> 32) % 249;
    auto* p = static_cast<unsigned char*>(std::malloc(n));
    if (p == nullptr) ab::oom("mt_random_small");
    p[0] = static_cast<unsigned char>(r >> 8);
    p[n - 1] = 1;
    slots[k] = p;
  }
  for (void* p : slots) std::free(p);
  return sum;
}
}  // namespace

int main(int argc, char** argv) {
  ab::Args a = ab::parse(argc, argv, 20000000, 2, "random small malloc/free per thread; --size: operations per thread");
  ab::StartLine start(a.threads);
  std::vector<std::uint64_t> sums(a.threads);
  std::vector<std::thread> ts;
  for (std::uint64_t t = 0; t < a.threads; ++t) ts.emplace_back([&, t] { sums[t] = run(t, a, start); });
  for (auto& t : ts) t.join();
  std::uint64_t total = 0;
  for (auto s : sums) total += s;
  std::printf("threads: %llu\nresult: %llu\n", static_cast<unsigned long long>(a.threads), static_cast<unsigned long long>(total));
}
