// SPDX-License-Identifier: MIT
// What the locality kernels (locality_kernels.cpp) and the placement bound
// (layout_bound.cpp) share, so that both build the same tree from the same
// keys and time it the same way.
#pragma once

#include <time.h>

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace tailor::bench {

/// splitmix64: a small deterministic generator.
struct Rng {
  std::uint64_t s;
  std::uint64_t next() noexcept {
    std::uint64_t z = (s += 0x9e3779b97f4a7c15);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
    z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
    return z ^ (z >> 31);
  }
  std::size_t below(std::size_t n) noexcept { return static_cast<std::size_t>(next() % n); }
};

/// The tree kernel's N random keys and N probes picked among them, from the
/// kernel's seed.
inline void tree_keys(std::uint64_t seed, std::size_t n, std::vector<int>& keys, std::vector<int>& probes) {
  Rng key_rng{seed + 1};
  keys.resize(n);
  for (auto& k : keys) k = static_cast<int>(key_rng.next() >> 33);
  probes.resize(n);
  for (auto& p : probes) p = keys[key_rng.below(keys.size())];
}

/// CPU time of this thread: unlike wall time, it leaves out the time the
/// machine gave to other work (this machine is shared).
inline double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

/// Ends a run whose command line is wrong: "<program>: <why>", then the
/// usage text, on stderr, and exit status 2.
[[noreturn]] inline void usage_error(const char* program, const std::string& why, const char* usage) {
  std::fprintf(stderr, "%s: %s\n%s", program, why.c_str(), usage);
  std::exit(2);
}

/// The argument after the option argv[i], moving i onto it; when argv[i] is
/// the last argument, usage("missing value after <option>") instead.
template <class Usage>
const char* option_value(int argc, char** argv, int& i, Usage usage) {
  if (i + 1 >= argc) usage("missing value after " + std::string(argv[i]));
  return argv[++i];
}

/// The whole of `text` as a number of type T (an unsigned integer or a
/// double), or usage("<option>: '<text>' is not a number") instead: a
/// mistyped value ends the run with the usage, never with an exception.
template <class T, class Usage>
T number_value(const char* option, const char* text, Usage usage) {
  T v{};
  const char* end = text + std::strlen(text);
  const auto [ptr, ec] = std::from_chars(text, end, v);
  if (ec != std::errc() || ptr != end || *text == '\0')
    usage(std::string(option) + ": '" + text + "' is not a number");
  return v;
}

}  // namespace tailor::bench
