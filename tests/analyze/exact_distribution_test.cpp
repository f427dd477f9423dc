// SPDX-License-Identifier: MIT
// ExactDistribution (src/analyze/exact_distribution.h) against the figures of
// every value kept and selected (what tailor stats computed before it):
// count, mean, min, p50/p90/p99, max and the power-of-two histogram, on
// values below, at and above the dense bound, and on sums past 2^64.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "analyze/exact_distribution.h"

namespace {

using tailor::analyze::Distribution;
using tailor::analyze::ExactDistribution;
using tailor::analyze::Log2Histogram;

// The reference: one value per object, a long double sum in arrival order,
// the order statistics by sorting.
Distribution reference(std::vector<std::uint64_t> v) {
  Distribution d;
  d.count = v.size();
  if (v.empty()) return d;
  long double sum = 0;
  for (auto x : v) sum += static_cast<long double>(x);
  d.mean = static_cast<double>(sum / static_cast<long double>(v.size()));
  std::sort(v.begin(), v.end());
  auto at = [&v](double q) { return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))]; };
  d.min = v.front();
  d.max = v.back();
  d.p50 = at(0.50);
  d.p90 = at(0.90);
  d.p99 = at(0.99);
  return d;
}

void expect_same(const std::vector<std::uint64_t>& values, std::size_t dense) {
  ExactDistribution got(dense);
  Log2Histogram want_histogram;
  for (auto v : values) {
    got.add(v);
    want_histogram.add(v);
  }
  EXPECT_EQ(got.count(), values.size());
  EXPECT_EQ(got.histogram().counts, want_histogram.counts);
  const Distribution w = reference(values), g = got.summarize();
  EXPECT_EQ(g.count, w.count);
  EXPECT_EQ(g.mean, w.mean);  // bit for bit
  EXPECT_EQ(g.min, w.min);
  EXPECT_EQ(g.p50, w.p50);
  EXPECT_EQ(g.p90, w.p90);
  EXPECT_EQ(g.p99, w.p99);
  EXPECT_EQ(g.max, w.max);
}

TEST(ExactDistribution, SameFiguresAsEveryValueSorted) {
  std::mt19937_64 rng(5);
  for (std::size_t n : {1u, 2u, 3u, 7u, 100u, 101u, 5000u, 200000u}) {
    for (std::uint64_t range : {10ull, 1000ull, 5000ull, 1ull << 40}) {  // all dense, at the bound, mostly large
      SCOPED_TRACE(std::to_string(n) + " values below " + std::to_string(range));
      std::vector<std::uint64_t> v(n);
      // Skewed like lifetimes: mostly small, a tail of large ones.
      for (auto& x : v) x = rng() % 4 ? rng() % std::min<std::uint64_t>(range, 64) : rng() % range;
      expect_same(v, 4096);
      expect_same(v, 1);   // every value but 0 kept one by one
      expect_same(v, 64);  // the bound inside the values
    }
  }
}

TEST(ExactDistribution, QuantilesFallOnEitherSideOfTheBound) {
  // Half the values below the bound, half above: p50 is the last dense
  // value or the first large one depending on the count's parity.
  for (std::size_t n : {10u, 11u, 100u, 1000u, 1001u}) {
    std::vector<std::uint64_t> v;
    for (std::size_t i = 0; i < n; ++i) v.push_back(i < n / 2 ? 99 : 100 + i);
    expect_same(v, 100);
  }
}

TEST(ExactDistribution, EmptyAndSumsPast64Bits) {
  ExactDistribution empty(16);
  const Distribution d = empty.summarize();
  EXPECT_EQ(d.count, 0u);
  EXPECT_EQ(d.mean, 0.0);
  EXPECT_TRUE(empty.histogram().counts.empty());
  // Values near 2^63: the sum leaves 64 bits at the third; from there it is
  // rounded in long double as the reference rounds it.
  std::mt19937_64 rng(9);
  std::vector<std::uint64_t> v = {1, 2};
  for (int i = 0; i < 1000; ++i) v.push_back((1ull << 63) + (rng() >> 2) + (i % 2 ? 3 : 0));
  expect_same(v, 16);
}

}  // namespace
