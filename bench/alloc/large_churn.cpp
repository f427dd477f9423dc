// SPDX-License-Identifier: MIT
// Large-object churn: a working set of 48 blocks of 64 KiB-16 MiB
// (log-uniform), one replaced at random per step; each new block has one
// byte per page written (so its memory is really used). Measures the cost of
// getting large blocks to and from the OS.
#include <cstdlib>

#include "mt_common.h"

int main(int argc, char** argv) {
  ab::Args a = ab::parse(argc, argv, 30000, 1, "large-object churn; --size: replacements");
  wl::Rng rng(a.seed);
  constexpr int kLive = 48;
  unsigned char* live[kLive] = {};
  std::size_t size[kLive] = {};
  std::uint64_t sum = 0;
  for (std::uint64_t step = 0; step < a.size; ++step) {
    int k = static_cast<int>(rng.next() % kLive);
    if (live[k]) {
      sum += live[k][size[k] - 1];
      std::free(live[k]);
    }
    std::size_t n = (std::size_t{65536} << (rng.next() % 8)) + rng.next() % 65536;
    auto* p = static_cast<unsigned char*>(std::malloc(n));
    if (p == nullptr) ab::oom("large_churn");
    for (std::size_t i = 0; i < n; i += 4096) p[i] = static_cast<unsigned char>(i >> 12);
    p[n - 1] = static_cast<unsigned char>(step);
    live[k] = p;
    size[k] = n;
  }
  for (auto* p : live) std::free(p);
  std::printf("result: %llu\n", static_cast<unsigned long long>(sum));
}
