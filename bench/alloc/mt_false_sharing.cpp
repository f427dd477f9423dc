// SPDX-License-Identifier: MIT
// False sharing through the allocator (Hoard's active-false and
// passive-false tests together): the main thread allocates one small object
// per thread back to back and hands them out (passive); each thread frees
// what it was handed, then, round after round, allocates an 8-64 byte object,
// writes it many times and frees it (active). An allocator that puts two
// threads' objects in one cache line makes the writes ping-pong the line.
#include <cstdlib>
#include <thread>
#include <vector>

#include "mt_common.h"

namespace {
constexpr int kWrites = 1000;

std::uint64_t run(void* handed, std::uint64_t id, const ab::Args& a, ab::StartLine& start) {
  wl::Rng rng(a.seed * 13 + id);
  start.arrive_and_wait();
  auto* obj = static_cast<volatile unsigned char*>(handed);
  for (int k = 0; k < kWrites * 4; ++k) obj[k % 8] = static_cast<unsigned char>(obj[k % 8] + 1);
  std::free(handed);
  std::uint64_t sum = 0;
  for (std::uint64_t round = 0; round < a.size; ++round) {
    std::size_t n = 8 + rng.next() % 57;
    auto* p = static_cast<volatile unsigned char*>(std::malloc(n));
    if (p == nullptr) ab::oom("mt_false_sharing");
    p[0] = 0;
    for (int k = 0; k < kWrites; ++k) p[0] = static_cast<unsigned char>(p[0] + 1);
    sum += p[0];
    std::free(const_cast<unsigned char*>(p));
  }
  return sum;
}
}  // namespace

int main(int argc, char** argv) {
  ab::Args a = ab::parse(argc, argv, 200000, 2, "false sharing; --size: rounds per thread");
  std::vector<void*> handed(a.threads);
  for (auto& h : handed) {
    h = std::calloc(1, 8);
    if (h == nullptr) ab::oom("mt_false_sharing");
  }
  ab::StartLine start(a.threads);
  std::vector<std::uint64_t> sums(a.threads);
  std::vector<std::thread> ts;
  for (std::uint64_t t = 0; t < a.threads; ++t) ts.emplace_back([&, t] { sums[t] = run(handed[t], t, a, start); });
  for (auto& t : ts) t.join();
  std::uint64_t total = 0;
  for (auto s : sums) total += s;
  std::printf("threads: %llu\nresult: %llu\n", static_cast<unsigned long long>(a.threads), static_cast<unsigned long long>(total));
}
