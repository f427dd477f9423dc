// SPDX-License-Identifier: MIT
// util/statistics.h and util/random.h: the median of an even and an odd
// count, ranks with ties, Spearman's correlation on known series, and
// splitmix64 against the published reference outputs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "util/random.h"
#include "util/statistics.h"

namespace {

using namespace tailor::util;

TEST(Statistics, MedianOfOddEvenAndEmpty) {
  EXPECT_EQ(median({3, 1, 2}), 2.0);
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(median({7}), 7.0);
  EXPECT_TRUE(std::isnan(median({})));
}

TEST(Statistics, RanksAverageTies) {
  const std::vector<double> r = ranks({10, 30, 20, 30});
  EXPECT_EQ(r, (std::vector<double>{1, 3.5, 2, 3.5}));
}

TEST(Statistics, SpearmanOfKnownSeries) {
  EXPECT_DOUBLE_EQ(spearman({1, 2, 3, 4}, {10, 20, 30, 40}), 1.0);
  EXPECT_DOUBLE_EQ(spearman({1, 2, 3, 4}, {4, 3, 2, 1}), -1.0);
  // Ranks {1,2,3,4,5} against {2,1,4,3,5}: sum of squared differences 4, so 1 - 6*4/(5*24) = 0.8.
  EXPECT_NEAR(spearman({1, 2, 3, 4, 5}, {0.2, 0.1, 0.4, 0.3, 0.5}), 0.8, 1e-12);
  EXPECT_TRUE(std::isnan(spearman({1, 1, 1}, {1, 2, 3})));  // a constant series
  EXPECT_TRUE(std::isnan(spearman({1}, {1})));
  EXPECT_TRUE(std::isnan(spearman({1, 2}, {1, 2, 3})));
}

TEST(Random, Splitmix64MatchesTheReferenceSequence) {
  // The first outputs of splitmix64 seeded with 0 (the reference C code by Vigna).
  std::uint64_t state = 0;
  const std::uint64_t want[] = {0xe220a8397b1dcdafULL, 0x6e789e6aa1b965f4ULL, 0x06c45d188009454fULL};
  for (std::uint64_t w : want) {
    EXPECT_EQ(splitmix64(state), w);
    state += kGoldenGamma;
  }
  EXPECT_EQ(splitmix64_mix(kGoldenGamma), want[0]);
}

}  // namespace
