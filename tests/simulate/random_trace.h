// SPDX-License-Identifier: MIT
// A random trace for simulator tests: sizes 1..100000 (mostly small) or
// another distribution a test passes, random lifetimes, calloc, realloc and
// aligned calls; addresses reused after release as a real malloc does.
// Deterministic for a seed. One generator for every test that wants such a
// trace, so that they do not each carry a copy.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "tailor/trace/event.h"

namespace tailor::test {

/// The sizes random_events() draws unless told otherwise: 1..100000, three in four up to 256.
struct SmallSizes {
  std::uint64_t operator()(std::mt19937_64& rng) const { return 1 + rng() % (rng() % 4 == 0 ? 100000 : 256); }
};

/// `count` events, sizes drawn by `sizes` (called with the generator).
template <class Sizes = SmallSizes>
std::vector<trace::Event> random_events(std::uint64_t seed, std::size_t count, Sizes sizes = {}) {
  std::mt19937_64 rng(seed);
  std::vector<trace::Event> v;
  std::vector<std::uint64_t> live, freed;
  std::uint64_t next_address = 0x10000;
  auto size = [&] { return sizes(rng); };
  auto address = [&] {
    if (!freed.empty() && rng() % 2) {
      const std::size_t k = rng() % freed.size();
      const std::uint64_t a = freed[k];
      freed[k] = freed.back();
      freed.pop_back();
      return a;
    }
    return next_address += 0x1000;
  };
  while (v.size() < count) {
    trace::Event e;
    const std::uint64_t r = rng() % 100;
    if (live.empty() || r < 50) {
      e.op = trace::Op::Malloc, e.size = size(), e.address = address();
      if (r < 5) e.op = trace::Op::Calloc, e.aux = 1 + rng() % 8;
      if (r == 5) e.op = trace::Op::Memalign, e.aux = std::uint64_t{8} << (rng() % 12);
      live.push_back(e.address);
    } else {
      const std::size_t k = rng() % live.size();
      const std::uint64_t old = live[k];
      if (r < 55) {
        e.op = trace::Op::Realloc, e.size = size(), e.address = address(), e.aux = old;
        live[k] = e.address;
      } else {
        e.op = trace::Op::Free, e.address = old;
        live[k] = live.back();
        live.pop_back();
      }
      if (e.address != old) freed.push_back(old);
    }
    e.time_ns = v.size() + 1;
    v.push_back(e);
  }
  return v;
}

}  // namespace tailor::test
