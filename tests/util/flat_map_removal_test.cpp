// SPDX-License-Identifier: MIT
// FlatMap (src/util/flat_map.h) as a map of live blocks by address, against
// std::unordered_map under random insertions and removals of block-like
// addresses, through growth, long probe runs and wrap-around.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <unordered_map>
#include <vector>

#include "same_as_unordered_map.h"
#include "util/flat_map.h"

namespace {

using tailor::util::FlatMap;
using tailor::test::expect_same;

TEST(FlatMapRemoval, AgreesWithUnorderedMapUnderChurn) {
  for (std::uint64_t pool : {100ull, 5000ull, 300000ull}) {  // few and many live blocks (growth past 2^16 slots)
    SCOPED_TRACE(pool);
    std::mt19937_64 rng(pool);
    FlatMap<std::uint64_t> map(std::size_t{1} << 16);
    std::unordered_map<std::uint64_t, std::uint64_t> want;
    for (int step = 0; step < 600000; ++step) {
      const std::uint64_t address = 0x7f0000000000ull + 16 * (1 + rng() % pool);
      if (rng() % 2) {
        auto [value, fresh] = map.try_emplace(address);
        EXPECT_EQ(fresh, !want.contains(address));
        if (fresh) {
          EXPECT_EQ(*value, 0u);
        }
        *value = rng();
        want[address] = *value;
      } else if (want.contains(address)) {
        if (rng() % 2) {
          map.erase(address);
        } else {
          std::uint64_t taken = 0;
          EXPECT_TRUE(map.take(address, taken));
          EXPECT_EQ(taken, want[address]);
        }
        want.erase(address);
      } else {
        EXPECT_EQ(map.find(address), nullptr);
        std::uint64_t untouched = 7;
        EXPECT_FALSE(map.take(address, untouched));
        EXPECT_EQ(untouched, 7u);
      }
    }
    expect_same(map, want);
  }
}

TEST(FlatMapRemoval, DenseTableAndRemovalInsideRuns) {
  // 32000 addresses in the first 65536 slots, just under the growth
  // threshold: long probe runs, some wrapping past the last slot, then every
  // third address removed from inside them and the rest still found.
  FlatMap<std::uint64_t> map(std::size_t{1} << 16);
  std::unordered_map<std::uint64_t, std::uint64_t> want;
  std::mt19937_64 rng(42);
  std::vector<std::uint64_t> addresses;
  while (addresses.size() < 32000) {
    const std::uint64_t a = 1 + (rng() & 0xffffffffff0ull);
    if (want.emplace(a, a / 3).second) addresses.push_back(a);
  }
  for (std::uint64_t a : addresses) *map.try_emplace(a).first = a / 3;
  for (std::size_t i = 0; i < addresses.size(); i += 3) {
    map.erase(addresses[i]);
    want.erase(addresses[i]);
  }
  expect_same(map, want);
}

TEST(FlatMapRemoval, KeyZeroIsRemovedAndTakenLikeAnyOther) {
  FlatMap<std::uint64_t> map;
  std::uint64_t out = 9;
  EXPECT_FALSE(map.take(0, out));
  EXPECT_EQ(out, 9u);
  map[0] = 3;
  map[16] = 4;
  EXPECT_TRUE(map.take(0, out));
  EXPECT_EQ(out, 3u);
  EXPECT_EQ(map.find(0), nullptr);
  EXPECT_EQ(map.size(), 1u);
  map[0] = 5;
  map.erase(0);
  EXPECT_EQ(map.find(0), nullptr);
  ASSERT_NE(map.find(16), nullptr);
  EXPECT_EQ(*map.find(16), 4u);
  EXPECT_EQ(map.size(), 1u);
}

}  // namespace
