// SPDX-License-Identifier: MIT
// splitmix64 (Steele, Lea and Flood; the generator Java's SplittableRandom
// and xoshiro's seeding use): a 64-bit state advanced by a constant and
// mixed by a finalizer. The search derives its islands' seeds with it and the
// simulator its object samples; one definition, so that a seed means the
// same stream everywhere. libtailor keeps its own copy (it uses libc only).
#pragma once

#include <cstdint>

namespace tailor::util {

inline constexpr std::uint64_t kGoldenGamma = 0x9e3779b97f4a7c15ULL;  ///< splitmix64's increment

/// splitmix64's finalizer: a bijection of 64-bit words that mixes every bit into every other.
constexpr std::uint64_t splitmix64_mix(std::uint64_t z) noexcept {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// The output of splitmix64 whose state was `state` before the step.
constexpr std::uint64_t splitmix64(std::uint64_t state) noexcept { return splitmix64_mix(state + kGoldenGamma); }

}  // namespace tailor::util
