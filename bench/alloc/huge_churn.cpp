// SPDX-License-Identifier: MIT
// Churn of blocks of several MiB: --live buffers of --min to --max bytes
// (uniform), one replaced at random per step, each new buffer zeroed in full
// as `new char[n]()` and std::vector do. With --new-first 1 (the default) the
// new buffer is allocated before the old one is released, as
// `buf[k] = std::make_unique<char[]>(n)` does; 0 releases first. The live set is a few hundred MiB,
// but every step hands a block of 5-25 MiB back and asks for another:
// whether the allocator keeps those pages (and for how long) or gives them
// to the OS and faults them in again decides the time.
#include <cstdlib>

#include "mt_common.h"

int main(int argc, char** argv) {
  std::uint64_t live = 4, min = 5 << 20, max = 25 << 20, new_first = 1;
  ab::Args a = ab::parse(argc, argv, 400, 1, "churn of multi-MiB buffers, each zeroed; --size: replacements",
                         {{"live", &live, "buffers alive at once"},
                          {"min", &min, "smallest buffer (bytes)"},
                          {"max", &max, "largest buffer (bytes)"},
                          {"new-first", &new_first, "1: allocate the new buffer before releasing the old one"}});
  ab::require_range(argv[0], "live", live, 1, 4096);
  ab::require_range(argv[0], "min", min, 2, std::uint64_t{1} << 40);
  ab::require_range(argv[0], "max", max, min, std::uint64_t{1} << 40);
  ab::require_range(argv[0], "new-first", new_first, 0, 1);
  wl::Rng rng(a.seed);
  auto** buf = static_cast<unsigned char**>(std::calloc(live, sizeof(unsigned char*)));
  auto* len = static_cast<std::size_t*>(std::calloc(live, sizeof(std::size_t)));
  if (buf == nullptr || len == nullptr) ab::oom("huge_churn");
  std::uint64_t sum = 0;
  for (std::uint64_t step = 0; step < a.size; ++step) {
    const std::size_t k = rng.below(live);
    unsigned char* old = buf[k];
    const std::size_t old_len = len[k];
    if (old != nullptr && (old[old_len / 2] != 0 || old[old_len - 1] != static_cast<unsigned char>(k)))
      wl::fail("huge_churn", "buffer %zu was overwritten", k);
    if (old != nullptr && new_first == 0) delete[] old;
    const std::size_t n = min + rng.below(max - min + 1);
    auto* p = new unsigned char[n]();  // operator new[], then zeroed: never folded into calloc
    p[n - 1] = static_cast<unsigned char>(k);
    if (old != nullptr && new_first != 0) delete[] old;
    sum += old_len;
    buf[k] = p;
    len[k] = n;
  }
  for (std::uint64_t k = 0; k < live; ++k) delete[] buf[k];
  std::free(buf);
  std::free(len);
  std::printf("result: %llu\n", static_cast<unsigned long long>(sum));
}
