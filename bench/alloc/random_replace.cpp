// SPDX-License-Identifier: MIT
// Random replacement in a large array of live blocks whose sizes are spread
// log-uniformly from --min to --max bytes (as many blocks of 16-32 bytes as
// of 4-8 KiB), each written in full when allocated: the shape of programs
// that keep big tables of strings and buffers and turn them over. Each of
// --threads threads owns --blocks slots and, --size times, frees a random
// slot and refills it. Sizes above 1 KiB are a large share of the bytes, so
// the size-class lookup and the refill paths of the middle classes are hot,
// and each new block touches all its memory.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "mt_common.h"

namespace {

struct Shape {
  std::uint64_t blocks, min, max;
};

std::uint64_t run(std::uint64_t id, const ab::Args& a, const Shape& shape, ab::StartLine& start) {
  wl::Rng rng(a.seed * 104729 + id);
  const double lo = std::log(static_cast<double>(shape.min));
  const double span = std::log(static_cast<double>(shape.max) + 1) - lo;
  auto draw = [&] { return static_cast<std::size_t>(std::exp(lo + span * rng.uniform())); };
  std::vector<unsigned char*> slot(shape.blocks);
  std::vector<std::uint32_t> size(shape.blocks);
  auto fill = [&](std::size_t k) {
    const std::size_t n = draw();
    auto* p = static_cast<unsigned char*>(std::malloc(n));
    if (p == nullptr) ab::oom("random_replace");
    std::memset(p, static_cast<int>(k & 0xff), n);
    slot[k] = p;
    size[k] = static_cast<std::uint32_t>(n);
  };
  for (std::size_t k = 0; k < shape.blocks; ++k) fill(k);
  std::uint64_t sum = 0;
  start.arrive_and_wait();
  for (std::uint64_t i = 0; i < a.size; ++i) {
    const std::size_t k = rng.below(shape.blocks);
    const unsigned char* old = slot[k];
    const std::uint32_t n = size[k];
    if (old[0] != (k & 0xff) || old[n / 2] != (k & 0xff) || old[n - 1] != (k & 0xff))
      wl::fail("random_replace", "thread %llu: block %zu was overwritten", static_cast<unsigned long long>(id), k);
    sum += n;
    std::free(slot[k]);
    fill(k);
  }
  for (auto* p : slot) std::free(p);
  return sum;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t blocks = 100000, min = 16, max = 8192;
  ab::Args a = ab::parse(argc, argv, 2000000, 1,
                         "random replacement of log-uniform blocks written in full; --size: replacements per thread",
                         {{"blocks", &blocks, "live blocks per thread"},
                          {"min", &min, "smallest block (bytes)"},
                          {"max", &max, "largest block (bytes)"}});
  ab::require_range(argv[0], "blocks", blocks, 1, 100000000);
  ab::require_range(argv[0], "min", min, 1, 1 << 30);
  ab::require_range(argv[0], "max", max, min, 1 << 30);
  const Shape shape{blocks, min, max};
  ab::StartLine start(a.threads);
  std::vector<std::uint64_t> sums(a.threads);
  std::vector<std::thread> ts;
  for (std::uint64_t t = 0; t < a.threads; ++t) ts.emplace_back([&, t] { sums[t] = run(t, a, shape, start); });
  for (auto& t : ts) t.join();
  std::uint64_t total = 0;
  for (auto s : sums) total += s;
  std::printf("threads: %llu\nresult: %llu\n", static_cast<unsigned long long>(a.threads),
              static_cast<unsigned long long>(total));
}
