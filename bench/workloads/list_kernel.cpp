// list_kernel: the list micro-kernel of Jula & Rauchwerger, "Custom Memory
// Allocation for Free" (Defero), section on micro-kernels.
//
// Warm-up: a std::list of 2N integers is allocated and N of its elements are
// erased at random positions, leaving a heap full of holes (the survivors stay
// live until the end).  Kernel, repeated a few rounds: build a list of N random
// integers alternating push_back and push_front, list::sort, std::for_each
// incrementing every element, then clear.  Allocation behaviour: std::list
// nodes through std::allocator (operator new, 24-byte requests on LP64), all
// the same size, allocated in long bursts and freed in long bursts, with the
// kernel's nodes landing in the holes left by the warm-up.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <list>
#include <vector>

#include "workload_common.h"

namespace {

constexpr const char* kProg = "wl_list_kernel";
constexpr int kRounds = 3;
constexpr wl::ProgramInfo kInfo{kProg,
                                "Defero list micro-kernel: fragmenting warm-up, then "
                                "push_back/push_front, sort, for_each, clear.",
                                "list length N (warm-up allocates 2N)", 500000, 1, 50000000};

}  // namespace

int main(int argc, char** argv) {
  auto [opt, rng] = wl::start(argc, argv, kInfo);
  const std::size_t n = opt.size;

  // Warm-up: 2N allocations, then N random erasures.
  std::list<int> warm;
  for (std::size_t i = 0; i < 2 * n; ++i) warm.push_back(static_cast<int>(rng.next32() >> 1));
  {
    std::vector<std::list<int>::iterator> its;
    its.reserve(warm.size());
    for (auto it = warm.begin(); it != warm.end(); ++it) its.push_back(it);
    // Partial Fisher-Yates: the first n entries become a random n-subset.
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t j = i + static_cast<std::size_t>(rng.below(its.size() - i));
      std::swap(its[i], its[j]);
      warm.erase(its[i]);
    }
  }
  if (warm.size() != n) wl::fail(kProg, "warm-up list has %zu elements, expected %zu", warm.size(), n);
  std::int64_t warm_sum = 0;
  for (int v : warm) warm_sum += v;
  std::printf("warm-up: %zu allocated, %zu erased at random, survivors sum %lld\n", 2 * n, n,
              static_cast<long long>(warm_sum));

  wl::Checksum check;
  std::int64_t last_sum = 0;
  int last_min = 0, last_max = 0, last_median = 0;
  for (int round = 0; round < kRounds; ++round) {
    std::list<int> list;
    std::int64_t sum_before = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const int v = static_cast<int>(rng.next32() >> 2);  // < 2^30: increments cannot overflow
      sum_before += v;
      if (i % 2 == 0) {
        list.push_back(v);
      } else {
        list.push_front(v);
      }
    }
    list.sort();
    if (!std::is_sorted(list.begin(), list.end())) wl::fail(kProg, "round %d: list::sort left the list unsorted", round);

    std::int64_t sum_after = 0;
    std::for_each(list.begin(), list.end(), [&sum_after](int& x) {
      ++x;
      sum_after += x;
    });
    if (sum_after != sum_before + static_cast<std::int64_t>(n)) {
      wl::fail(kProg, "round %d: sum after for_each %lld, expected %lld", round,
               static_cast<long long>(sum_after),
               static_cast<long long>(sum_before + static_cast<std::int64_t>(n)));
    }
    if (list.size() != n) wl::fail(kProg, "round %d: list has %zu elements, expected %zu", round, list.size(), n);

    std::size_t pos = 0;
    for (int x : list) {
      if (pos == n / 2) last_median = x;
      if ((pos & 1023) == 0) check.add(static_cast<std::uint64_t>(x));
      ++pos;
    }
    last_min = list.front();
    last_max = list.back();
    last_sum = sum_after;
    check.add_signed(sum_after);
    list.clear();
    if (!list.empty()) wl::fail(kProg, "round %d: clear left elements", round);
  }
  if (opt.verbose) {
    std::fprintf(stderr, "%s: %zu warm-up nodes, %zu kernel nodes (%d rounds)\n", kProg, 2 * n,
                 static_cast<std::size_t>(kRounds) * n, kRounds);
  }
  std::printf("kernel: %d rounds of %zu push_back/push_front, sort, for_each(++), clear\n",
              kRounds, n);
  std::printf("last round: min %d, median %d, max %d, sum %lld\n", last_min, last_median, last_max,
              static_cast<long long>(last_sum));
  wl::print_result_hex(check.value());
  return 0;
}
