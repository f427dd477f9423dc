// SPDX-License-Identifier: MIT
// The byte sampler's intervals (sampler.h): per thread, a xorshift64*
// generator and exponential draws of mean sample_interval.
#include "record/sampler.h"

#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace tailor::record {

std::uint64_t sample_interval = 0;

namespace {

std::uint64_t seed = 0;
std::atomic<std::uint64_t> threads_seeded{0};

std::uint64_t splitmix(std::uint64_t x) noexcept {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Bytes to the next sample: an exponential draw of mean sample_interval, at least 1.
std::uint64_t draw() noexcept {
  std::uint64_t x = tls.sample_rng;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  tls.sample_rng = x;
  const double u = static_cast<double>(((x * 0x2545F4914F6CDD1Dull) >> 11) + 1) * 0x1.0p-53;  // (0, 1]
  const double bytes = -std::log(u) * static_cast<double>(sample_interval);
  return bytes < 1.8e19 ? static_cast<std::uint64_t>(bytes) + 1 : UINT64_MAX;
}

void say(const char* text) noexcept {
  ssize_t ignored = ::write(STDERR_FILENO, text, __builtin_strlen(text));
  (void)ignored;
}

}  // namespace

bool sampler_init() noexcept {
  const char* text = getenv("TAILOR_RECORD_SAMPLE");
  if (!text || !*text) return true;
  char* end = nullptr;
  const unsigned long long bytes = std::strtoull(text, &end, 10);
  if (*end != '\0' || bytes == 0 || text[0] == '-') {
    say("tailor-record: TAILOR_RECORD_SAMPLE must be a positive number of bytes; nothing is recorded\n");
    return false;
  }
  if (!sampled_set::init()) {
    say("tailor-record: no memory for the set of sampled blocks; nothing is recorded\n");
    return false;
  }
  if (const char* s = getenv("TAILOR_RECORD_SEED"); s && *s) {
    seed = std::strtoull(s, nullptr, 10);
  } else {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    seed = static_cast<std::uint64_t>(ts.tv_nsec) ^ (static_cast<std::uint64_t>(ts.tv_sec) << 20) ^
           (static_cast<std::uint64_t>(getpid()) << 40);
  }
  sample_interval = bytes;
  return true;
}

bool sample_this(std::size_t n) noexcept {
  if (__builtin_expect(tls.sample_rng == 0, 0)) {
    // The thread's first allocation: its first interval starts here.
    std::uint64_t s = splitmix(seed ^ splitmix(threads_seeded.fetch_add(1, std::memory_order_relaxed)));
    tls.sample_rng = s ? s : 1;
    tls.sample_left = draw();
    if (passes_unrecorded(n)) return false;
  }
  tls.sample_left = draw();
  return true;
}

void keep_sample(trace::Op op, std::uint8_t flags, std::uint64_t size, const void* p, std::uint64_t aux,
                 const void* caller) noexcept {
  if (sampled_set::insert(p))
    record(op, flags, size, reinterpret_cast<std::uint64_t>(p), aux, caller, sample_time());
  else
    note_dropped(1);
}

void forget_sample(trace::Op op, std::uint8_t flags, std::uint64_t size, const void* p, std::uint64_t aux,
                   const void* caller) noexcept {
  if (!sampled_set::remove(p) || tls.busy || !active()) return;
  BusyScope busy;
  record(op, flags, size, reinterpret_cast<std::uint64_t>(p), aux, caller, sample_time());
}

void sampler_after_fork_child() noexcept {
  if (!sample_interval) return;
  sampled_set::after_fork_child();
  seed ^= splitmix(static_cast<std::uint64_t>(getpid()));  // the child draws intervals of its own
  tls.sample_rng = 0;
  tls.sample_left = 0;
}

}  // namespace tailor::record
