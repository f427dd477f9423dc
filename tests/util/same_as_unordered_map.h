// SPDX-License-Identifier: MIT
// The check that util::FlatMap holds what a std::unordered_map fed the same
// operations holds, through its find / for_each interface: the tests of its
// counting use (any key, 0 included) and of its live-block use (insertions
// and removals of addresses) compare it so.
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
