// SPDX-License-Identifier: MIT
// The check that the open-addressing maps of src/analyze (AddressMap, FlatMap)
// hold what a std::unordered_map fed the same operations holds: both maps'
// tests compare them so, through the same find / for_each interface.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <unordered_map>

namespace tailor::test {

/// Every key of `want` is found in `map` with its value, and for_each visits exactly those keys.
template <class Map>
void expect_same(Map& map, const std::unordered_map<std::uint64_t, std::uint64_t>& want) {
  ASSERT_EQ(map.size(), want.size());
  for (const auto& [key, value] : want) {
    const std::uint64_t* got = map.find(key);
    ASSERT_NE(got, nullptr) << key;
    EXPECT_EQ(*got, value) << key;
  }
  std::size_t visited = 0;
  map.for_each([&](std::uint64_t key, const std::uint64_t& value) {
    ++visited;
    auto it = want.find(key);
    ASSERT_NE(it, want.end()) << key;
    EXPECT_EQ(it->second, value);
  });
  EXPECT_EQ(visited, want.size());
}

}  // namespace tailor::test
