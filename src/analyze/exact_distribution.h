// SPDX-License-Identifier: MIT
// The exact distribution of a stream of unsigned values (tailor stats'
// lifetimes): count, mean, min, the p50/p90/p99 order statistics, max, and
// the power-of-two histogram, without one stored value per object when the
// values are small. Values below `dense` are counted in an array indexed by
// value (lifetimes are mostly short: a few events, a few microseconds); the
// others are kept one by one and selected among at the end. The figures are
// the same as sorting every value: the sum is exact in 64 bits and, past
// 2^64, continues in long double in arrival order, as a long double sum of
// the values in that order would.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "analyze/trace_stats.h"

namespace tailor::analyze {

class ExactDistribution {
 public:
  explicit ExactDistribution(std::size_t dense) : counts_(dense) {}

  [[gnu::always_inline]] void add(std::uint64_t v) {
    ++n_;
    std::uint64_t s;
    if (v < counts_.size() && !wide_ && !__builtin_add_overflow(sum_, v, &s)) [[likely]] {
      ++counts_[v];
      sum_ = s;
    } else {
      add_slow(v);
    }
  }

  std::uint64_t count() const noexcept { return n_; }

  [[gnu::noinline]] void add_slow(std::uint64_t v) {
    if (v < counts_.size())
      ++counts_[v];
    else
      large_.push_back(v);
    std::uint64_t s;
    if (!wide_ && !__builtin_add_overflow(sum_, v, &s)) {
      sum_ = s;
    } else {
      if (!wide_) {  // every partial sum so far was exact in long double too
        wide_ = true;
        wide_sum_ = static_cast<long double>(sum_);
      }
      wide_sum_ += static_cast<long double>(v);
    }
  }

  /// The summary; p is the value of rank floor(q x (count - 1)) in ascending order.
  /// Reorders the large values (call once, at the end).
  Distribution summarize() {
    Distribution d;
    d.count = n_;
    if (n_ == 0) return d;
    const long double sum = wide_ ? wide_sum_ : static_cast<long double>(sum_);
    d.mean = static_cast<double>(sum / static_cast<long double>(n_));
    std::uint64_t dense_count = 0;
    bool any_dense = false;
    for (std::size_t v = 0; v < counts_.size(); ++v)
      if (counts_[v]) {
        if (!any_dense) d.min = v;
        any_dense = true;
        d.max = v;
        dense_count += counts_[v];
      }
    if (!large_.empty()) {
      const auto [lo, hi] = std::minmax_element(large_.begin(), large_.end());
      if (!any_dense) d.min = *lo;
      d.max = *hi;
    }
    // The three ranks, increasing: one walk over the counts, then selections
    // among the large values, each above the last.
    const double qs[3] = {0.50, 0.90, 0.99};
    std::uint64_t* out[3] = {&d.p50, &d.p90, &d.p99};
    std::size_t v = 0;
    std::uint64_t below = 0;  // values counted before v
    std::size_t from = 0;
    for (int j = 0; j < 3; ++j) {
      const auto k = static_cast<std::uint64_t>(qs[j] * static_cast<double>(n_ - 1));
      if (k < dense_count) {
        while (below + counts_[v] <= k) below += counts_[v++];
        *out[j] = v;
      } else {
        const auto r = static_cast<std::size_t>(k - dense_count);
        std::nth_element(large_.begin() + static_cast<std::ptrdiff_t>(from), large_.begin() + static_cast<std::ptrdiff_t>(r),
                         large_.end());
        from = r;
        *out[j] = large_[r];
      }
    }
    return d;
  }

  /// The power-of-two histogram of every value (Log2Histogram::add of each).
  Log2Histogram histogram() const {
    Log2Histogram h;
    for (std::size_t v = 0; v < counts_.size(); ++v)
      if (counts_[v]) h.add(v, counts_[v]);
    for (std::uint64_t x : large_) h.add(x);
    return h;
  }

 private:
  std::vector<std::uint64_t> counts_;  // by value, below the dense bound
  std::vector<std::uint64_t> large_;   // the values at or above it
  std::uint64_t n_ = 0;
  std::uint64_t sum_ = 0;
  bool wide_ = false;
  long double wide_sum_ = 0;
};

}  // namespace tailor::analyze
