// SPDX-License-Identifier: MIT
// FlatMap (src/util/flat_map.h) against std::unordered_map under random
// insertions and lookups of keys that include 0, through growth.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <unordered_map>

#include "same_as_unordered_map.h"
#include "util/flat_map.h"

namespace {

using tailor::util::FlatMap;
using tailor::test::expect_same;

TEST(FlatMap, AgreesWithUnorderedMapOnRandomOperations) {
  // Few keys (sizes of one program), many (call sites of a large one, growth
  // well past the first 64 slots), and keys sharing their low bits.
  for (std::uint64_t pool : {20ull, 3000ull, 200000ull}) {
    for (std::uint64_t stride : {1ull, 16ull, 4096ull}) {
      SCOPED_TRACE(std::to_string(pool) + " keys, stride " + std::to_string(stride));
      std::mt19937_64 rng(pool * stride);
      FlatMap<std::uint64_t> map;
      std::unordered_map<std::uint64_t, std::uint64_t> want;
      for (int step = 0; step < 400000; ++step) {
        const std::uint64_t key = stride * (rng() % pool);  // 0 included
        switch (rng() % 3) {
          case 0: {  // insert or update
            auto [value, fresh] = map.try_emplace(key);
            ASSERT_EQ(fresh, !want.contains(key)) << key;
            if (fresh) {
              ASSERT_EQ(*value, 0u);
            }
            *value = rng();
            want[key] = *value;
            break;
          }
          case 1:  // count, as tailor stats does
            ++map[key];
            ++want[key];
            break;
          default: {  // look up
            const std::uint64_t* got = map.find(key);
            auto it = want.find(key);
            ASSERT_EQ(got != nullptr, it != want.end()) << key;
            if (got) {
              ASSERT_EQ(*got, it->second) << key;
            }
          }
        }
      }
      expect_same(map, want);
    }
  }
}

TEST(FlatMap, KeyZeroHasItsOwnSlot) {
  FlatMap<std::uint64_t> map;
  EXPECT_EQ(map.find(0), nullptr);
  EXPECT_EQ(map.size(), 0u);
  auto [zero, fresh] = map.try_emplace(0);
  EXPECT_TRUE(fresh);
  EXPECT_EQ(*zero, 0u);
  *zero = 7;
  EXPECT_FALSE(map.try_emplace(0).second);
  for (std::uint64_t k = 1; k <= 1000; ++k) map[k] = k;  // growth leaves key 0 alone
  ASSERT_NE(map.find(0), nullptr);
  EXPECT_EQ(*map.find(0), 7u);
  EXPECT_EQ(map.size(), 1001u);
  std::uint64_t keys = 0, values = 0;
  map.for_each([&](std::uint64_t k, std::uint64_t v) {
    keys += k;
    values += v;
  });
  EXPECT_EQ(keys, 500500u);
  EXPECT_EQ(values, 500507u);
}

TEST(FlatMap, ExtremeKeys) {
  FlatMap<std::uint64_t> map;
  std::unordered_map<std::uint64_t, std::uint64_t> want;
  for (std::uint64_t k : {~0ull, ~0ull - 1, 1ull << 63, 1ull, 0ull, 0x9e3779b97f4a7c15ull}) {
    map[k] = k ^ 5;
    want[k] = k ^ 5;
  }
  expect_same(map, want);
}

}  // namespace
