// SPDX-License-Identifier: MIT
// Threads that allocate in bursts, keep some objects long, pass some to each
// other and free the rest (mstress-like). --rounds times, --threads new
// threads start; each runs --size bursts of 64 x --scale objects of mostly
// small sizes (24-256 B, with one in eight up to 4 KiB and one in sixty-four
// up to 32 KiB; with --big N, N in a million are large, 64 KiB up to
// --big-max KiB, zeroed by calloc as mimalloc's stress test makes them). An object is kept (replacing a random one of the thread's
// 256 x --scale long-lived objects, which is freed), passed (swapped into a
// random slot of a process-wide transfer array of 1024 x --scale, freeing
// whatever was there: usually another thread's object, possibly of a thread
// that has exited), or freed when the burst ends. Long-lived objects die
// with their thread; the transfer array lives through the rounds. Every
// object carries its size and a tag, checked when it is freed.
#include <atomic>
#include <cstdlib>
#include <thread>
#include <vector>

#include "mt_common.h"

namespace {

struct Object {
  std::uint64_t size;
  std::uint64_t tag;  // size ^ kMagic
};
constexpr std::uint64_t kMagic = 0x5eedf00dcafe1234ULL;

struct Shape {
  std::uint64_t bursts, scale, keep, pass;  // keep, pass: per 1000 objects
  std::uint64_t big, big_max;               // large objects per million; their largest size (bytes)
};

std::vector<std::atomic<Object*>>* g_transfer;

Object* make(wl::Rng& rng, const Shape& s) {
  std::uint64_t r = rng.next();
  std::size_t n;
  bool big = false;
  if (s.big != 0 && (r >> 40) % 1000000 < s.big) {
    big = true;
    n = 65536 + (r >> 8) % (s.big_max - 65536 + 1);
  } else if (r % 64 == 0) n = 4096 + (r >> 8) % (28 * 1024);
  else if (r % 8 == 0) n = 256 + (r >> 8) % 3840;
  else n = 24 + (r >> 8) % 233;  // room for the header and the end mark
  auto* o = static_cast<Object*>(big ? std::calloc(1, n) : std::malloc(n));
  if (o == nullptr) ab::oom("mt_burst_pass");
  o->size = n;
  o->tag = n ^ kMagic;
  static_cast<unsigned char*>(static_cast<void*>(o))[n - 1] = 0x5a;
  return o;
}

void release(Object* o) {
  if (o == nullptr) return;
  if (o->tag != (o->size ^ kMagic) || static_cast<unsigned char*>(static_cast<void*>(o))[o->size - 1] != 0x5a)
    wl::fail("mt_burst_pass", "an object was overwritten");
  std::free(o);
}

std::uint64_t run(std::uint64_t seed, const Shape& s) {
  wl::Rng rng(seed);
  std::vector<Object*> kept(256 * s.scale, nullptr);
  std::vector<Object*> burst;
  burst.reserve(64 * s.scale);
  std::vector<std::atomic<Object*>>& transfer = *g_transfer;
  std::uint64_t sum = 0;
  for (std::uint64_t b = 0; b < s.bursts; ++b) {
    for (std::uint64_t i = 0; i < 64 * s.scale; ++i) {
      Object* o = make(rng, s);
      sum += o->size;
      const std::uint64_t fate = rng.below(1000);
      if (fate < s.keep) {
        Object*& slot = kept[rng.below(kept.size())];
        release(slot);
        slot = o;
      } else if (fate < s.keep + s.pass) {
        release(transfer[rng.below(transfer.size())].exchange(o, std::memory_order_acq_rel));
      } else {
        burst.push_back(o);
      }
    }
    for (Object* o : burst) release(o);
    burst.clear();
  }
  for (Object* o : kept) release(o);
  return sum;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t rounds = 10, scale = 4, keep = 100, pass = 250, big = 0, big_max_kib = 4096;
  ab::Args a = ab::parse(argc, argv, 300, 4,
                         "bursts of allocations, some kept long, some passed between threads; --size: bursts per "
                         "thread and round",
                         {{"rounds", &rounds, "times a new set of threads starts"},
                          {"scale", &scale, "multiplies burst, long-lived and transfer sizes"},
                          {"keep", &keep, "objects kept long, per 1000"},
                          {"pass", &pass, "objects passed to the transfer array, per 1000"},
                          {"big", &big, "large objects (64 KiB to --big-max KiB, calloc'd), per million"},
                          {"big-max", &big_max_kib, "largest large object, KiB"}});
  ab::require_range(argv[0], "rounds", rounds, 1, 100000);
  ab::require_range(argv[0], "scale", scale, 1, 100000);
  ab::require_range(argv[0], "keep", keep, 0, 1000);
  ab::require_range(argv[0], "pass", pass, 0, 1000 - keep);
  ab::require_range(argv[0], "big", big, 0, 1000000);
  ab::require_range(argv[0], "big-max", big_max_kib, 64, 1 << 20);
  const Shape shape{a.size, scale, keep, pass, big, big_max_kib * 1024};
  std::vector<std::atomic<Object*>> transfer(1024 * scale);
  for (auto& t : transfer) t.store(nullptr);
  g_transfer = &transfer;
  std::vector<std::uint64_t> sums(a.threads, 0);
  for (std::uint64_t r = 0; r < rounds; ++r) {
    std::vector<std::thread> ts;
    for (std::uint64_t t = 0; t < a.threads; ++t)
      ts.emplace_back([&, t, r] { sums[t] += run(a.seed * 1000003 + r * 1009 + t, shape); });
    for (auto& t : ts) t.join();
  }
  for (auto& t : transfer) release(t.exchange(nullptr));
  std::uint64_t total = 0;
  for (auto s : sums) total += s;
  std::printf("threads: %llu\nresult: %llu\n", static_cast<unsigned long long>(a.threads),
              static_cast<unsigned long long>(total));
}
