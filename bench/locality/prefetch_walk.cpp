// SPDX-License-Identifier: MIT
// Does software prefetching pay in the walks of tailor::list and tailor::set
// (the pool allocation paper's second half, docs/pools.md)? Walks each container with three
// loops and prints the median time per element of each, interleaved:
//
//   none    the plain iterator loop;
//   next    also prefetches the node two ahead (an iterator kept two steps
//           in front: the greedy pointer-chasing prefetch an iterator could do);
//   stride  also prefetches the address 5 cache lines past the current node
//           (the pool allocation paper's p = 5 * b + s, which assumes nodes laid out in
//           traversal order, as pools lay them out when the walk follows
//           the allocation order).
//
// Layouts: list "order" (push_back of N nodes: the walk follows allocation
// order), list "sorted" (the same nodes relinked by list::sort of random
// keys: the walk jumps across the heap), set "tree" (N random keys: in-order
// walk of nodes allocated in random key order). Nodes come from malloc
// (std::allocator), so LD_PRELOAD chooses the allocator (glibc, libtailor,
// TAILOR_POOLS=1).
//
//   prefetch_walk [--n N] [--rounds R]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "tailor/list.h"
#include "tailor/set.h"

namespace {

using Clock = std::chrono::steady_clock;

template <class It>
std::uint64_t walk_none(It b, It e) {
  std::uint64_t s = 0;
  for (It i = b; i != e; ++i) s += *i;
  return s;
}

template <class It>
std::uint64_t walk_next(It b, It e) {
  std::uint64_t s = 0;
  It ahead = b;
  for (int k = 0; k < 2 && ahead != e; ++k) ++ahead;
  for (It i = b; i != e; ++i) {
    if (ahead != e) {
      __builtin_prefetch(&*ahead);
      ++ahead;
    }
    s += *i;
  }
  return s;
}

template <class It>
std::uint64_t walk_stride(It b, It e) {
  std::uint64_t s = 0;
  for (It i = b; i != e; ++i) {
    __builtin_prefetch(reinterpret_cast<const char*>(&*i) + 5 * 64);
    s += *i;
  }
  return s;
}

template <class C>
void measure(const char* name, const C& c, std::size_t n, int rounds) {
  std::vector<double> t[3];
  std::uint64_t sums[3] = {};
  for (int r = 0; r < rounds; ++r) {
    for (int v = 0; v < 3; ++v) {
      const auto start = Clock::now();
      const std::uint64_t s = v == 0 ? walk_none(c.begin(), c.end())
                              : v == 1 ? walk_next(c.begin(), c.end())
                                       : walk_stride(c.begin(), c.end());
      t[v].push_back(std::chrono::duration<double, std::nano>(Clock::now() - start).count() / static_cast<double>(n));
      sums[v] = s;
    }
  }
  if (sums[0] != sums[1] || sums[0] != sums[2]) {
    std::fprintf(stderr, "prefetch_walk: %s: the walks disagree\n", name);
    std::exit(1);
  }
  double med[3];
  for (int v = 0; v < 3; ++v) {
    std::sort(t[v].begin(), t[v].end());
    med[v] = t[v][t[v].size() / 2];
  }
  std::printf("%-12s none %6.2f ns  next %6.2f ns (%.3f)  stride %6.2f ns (%.3f)\n", name, med[0], med[1],
              med[0] / med[1], med[2], med[0] / med[2]);
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t n = 1000000;
  int rounds = 7;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--n") == 0) n = std::strtoull(argv[i + 1], nullptr, 10);
    else if (std::strcmp(argv[i], "--rounds") == 0) rounds = std::atoi(argv[i + 1]);
  }
  std::uint64_t x = 88172645463325252ULL;
  auto rnd = [&x] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  std::printf("prefetch_walk: n %zu, median of %d interleaved rounds; in parentheses: speedup over none\n", n, rounds);
  {
    tailor::list<std::uint64_t> l;
    for (std::size_t i = 0; i < n; ++i) l.push_back(rnd() >> 8);
    measure("list order", l, n, rounds);
    l.sort();
    measure("list sorted", l, n, rounds);
  }
  {
    tailor::set<std::uint64_t> s;
    while (s.size() < n) s.insert(rnd());
    measure("set tree", s, n, rounds);
  }
  return 0;
}
