// SPDX-License-Identifier: MIT
// Growing reallocs: 64 buffers grow side by side by 16-272 bytes per step
// (a string builder, a vector without capacity doubling) up to 16 KiB-8 MiB
// each, then are freed and start again. Rewards in-place growth.
#include <cstdlib>

#include "mt_common.h"

int main(int argc, char** argv) {
  ab::Args a = ab::parse(argc, argv, 10, 1, "growing reallocs; --size: rounds");
  wl::Rng rng(a.seed);
  constexpr int kBufs = 64;
  unsigned char* buf[kBufs] = {};
  std::size_t len[kBufs] = {}, limit[kBufs] = {};
  std::uint64_t sum = 0;
  for (std::uint64_t round = 0; round < a.size; ++round) {
    for (int b = 0; b < kBufs; ++b) limit[b] = std::size_t{16384} << (rng.next() % 10);
    bool growing = true;
    while (growing) {
      growing = false;
      for (int b = 0; b < kBufs; ++b) {
        if (len[b] >= limit[b]) continue;
        growing = true;
        std::size_t n = len[b] + 16 + rng.next() % 257;
        auto* p = static_cast<unsigned char*>(std::realloc(buf[b], n));
        if (p == nullptr) ab::oom("realloc_grow");
        if (len[b] > 0 && p[len[b] - 1] != static_cast<unsigned char>(len[b])) {
          std::fprintf(stderr, "realloc_grow: contents lost\n");
          return 1;
        }
        p[n - 1] = static_cast<unsigned char>(n);
        buf[b] = p;
        len[b] = n;
      }
    }
    for (int b = 0; b < kBufs; ++b) {
      sum += len[b];
      std::free(buf[b]);
      buf[b] = nullptr;
      len[b] = 0;
    }
  }
  std::printf("result: %llu\n", static_cast<unsigned long long>(sum));
}
