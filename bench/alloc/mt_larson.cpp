// SPDX-License-Identifier: MIT
// Server threads that hand their work to the next thread (larson-style):
// each of --threads slots keeps an array of --blocks blocks of random sizes
// in [--min, --max]. A thread of a slot replaces --size random elements
// (free the old block, allocate a new one, write its first and last bytes),
// then starts the slot's next thread, hands it the array and exits; a slot
// goes through --generations threads. The main thread fills the arrays, so
// the first generation frees the main thread's blocks, and every later one
// frees blocks of a thread that has exited: almost every free is of another
// thread's block, and every thread is new. Measures cross-thread frees and
// the cost of threads that come and go.
#include <pthread.h>

#include <cstdlib>
#include <new>
#include <semaphore>
#include <vector>

#include "mt_common.h"

namespace {

struct alignas(64) Slot {
  std::uint64_t id = 0;
  std::uint64_t generation = 0;
  wl::Rng rng{0};
  std::vector<unsigned char*> blocks;
  std::vector<std::uint32_t> sizes;
  std::uint64_t sum = 0;
  pthread_t previous{};                // the thread to join (it has started this one)
  bool has_previous = false;
  pthread_t last{};                    // the slot's final thread, for main to join
  std::binary_semaphore done{0};       // released by the slot's final thread
};

struct Shape {
  std::uint64_t ops, generations, min, max;
  bool sized;  // operator new / sized operator delete instead of malloc / free
};
Shape g_shape;

unsigned char* make(Slot& s, std::size_t k) {
  const std::size_t n = g_shape.min + s.rng.below(g_shape.max - g_shape.min + 1);
  auto* p = static_cast<unsigned char*>(g_shape.sized ? ::operator new(n) : std::malloc(n));
  if (p == nullptr) ab::oom("mt_larson");
  p[0] = static_cast<unsigned char>(n);
  p[n - 1] = static_cast<unsigned char>(k);
  s.sizes[k] = static_cast<std::uint32_t>(n);
  return p;
}

void release(unsigned char* p, std::size_t n) {
  if (g_shape.sized)
    ::operator delete(p, n);
  else
    std::free(p);
}

void* generation(void* arg) {
  auto& s = *static_cast<Slot*>(arg);
  if (s.has_previous) pthread_join(s.previous, nullptr);
  const std::size_t count = s.blocks.size();
  for (std::uint64_t i = 0; i < g_shape.ops; ++i) {
    const std::size_t k = s.rng.below(count);
    unsigned char* old = s.blocks[k];
    const std::uint32_t n = s.sizes[k];
    if (old[0] != static_cast<unsigned char>(n) || old[n - 1] != static_cast<unsigned char>(k))
      wl::fail("mt_larson", "slot %llu: block %zu was overwritten", static_cast<unsigned long long>(s.id), k);
    s.sum += n;
    release(old, n);
    s.blocks[k] = make(s, k);
  }
  if (++s.generation < g_shape.generations) {
    s.previous = pthread_self();
    s.has_previous = true;
    pthread_t next;
    if (pthread_create(&next, nullptr, generation, &s) != 0) wl::fail("mt_larson", "cannot start a thread");
    return nullptr;
  }
  s.last = pthread_self();
  s.done.release();
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t blocks = 5000, generations = 100, min = 8, max = 1024, sized = 0;
  ab::Args a = ab::parse(argc, argv, 4000, 4,
                         "larson-style server threads handing their arrays on; --size: replacements per thread",
                         {{"blocks", &blocks, "live blocks per slot"},
                          {"generations", &generations, "threads per slot, one after another"},
                          {"min", &min, "smallest block (bytes)"},
                          {"max", &max, "largest block (bytes)"},
                          {"sized", &sized, "1: operator new and sized operator delete instead of malloc and free"}});
  ab::require_range(argv[0], "blocks", blocks, 1, 100000000);
  ab::require_range(argv[0], "generations", generations, 1, 1000000);
  ab::require_range(argv[0], "min", min, 2, 1 << 30);
  ab::require_range(argv[0], "max", max, min, 1 << 30);
  ab::require_range(argv[0], "sized", sized, 0, 1);
  g_shape = {a.size, generations, min, max, sized == 1};
  std::vector<Slot> slots(a.threads);
  for (std::uint64_t t = 0; t < a.threads; ++t) {
    Slot& s = slots[t];
    s.id = t;
    s.rng.reseed(a.seed * 7919 + t);
    s.blocks.resize(blocks);
    s.sizes.resize(blocks);
    for (std::size_t k = 0; k < blocks; ++k) s.blocks[k] = make(s, k);
  }
  for (auto& s : slots) {
    pthread_t first;
    // Joined by the slot's second thread, or by main as the slot's last.
    if (pthread_create(&first, nullptr, generation, &s) != 0) wl::fail("mt_larson", "cannot start a thread");
  }
  std::uint64_t total = 0;
  for (auto& s : slots) {
    s.done.acquire();
    pthread_join(s.last, nullptr);
    for (std::size_t k = 0; k < s.blocks.size(); ++k) release(s.blocks[k], s.sizes[k]);
    total += s.sum;
  }
  std::printf("threads: %llu\nresult: %llu\n", static_cast<unsigned long long>(a.threads),
              static_cast<unsigned long long>(total));
}
