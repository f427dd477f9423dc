// SPDX-License-Identifier: MIT
// Estimates from a sampled trace (`tailor record --sample`,
// Header::sample_interval). The recorder keeps an allocation of n bytes
// with probability p(n) = 1 - exp(-n / interval), independently of the
// others, and the release of every block it kept. Weighing each kept block
// by 1 / p(n) (Horvitz and Thompson's estimator, as tcmalloc's and
// jemalloc's heap profilers do) gives unbiased estimates of any sum over
// blocks: allocations, bytes allocated, bytes in use at a moment, by call
// site or stack. The variance of such an estimate is estimated by the sum of
// (1 - p) / p^2 times the square of each kept block's value; its square root
// is the standard error reported beside the estimate. For blocks much
// smaller than the interval the relative error of an amount of B bytes is
// about sqrt(interval / B): a sample of 512 KiB estimates 50 MB in use to
// within about 10% (one standard error), 500 MB to within about 3%.
#pragma once

#include <cmath>
#include <cstdint>

namespace tailor::analyze {

class SampleWeights {
 public:
  /// `interval` 0: an exact trace, every weight 1 and every variance 0.
  explicit SampleWeights(std::uint64_t interval) : interval_(static_cast<double>(interval)) {}

  bool sampled() const noexcept { return interval_ > 0; }
  /// Allocations of `bytes` bytes that one kept allocation of that size stands for.
  double count(std::uint64_t bytes) const noexcept {
    if (interval_ == 0 || bytes == 0) return 1;
    return 1 / -std::expm1(-static_cast<double>(bytes) / interval_);
  }
  /// Bytes it stands for, rounded (exact traces: `bytes`).
  std::uint64_t bytes(std::uint64_t n) const noexcept {
    if (interval_ == 0) return n;
    return static_cast<std::uint64_t>(std::llround(static_cast<double>(n) * count(n)));
  }
  /// Its contribution to the variance of an estimated count and of an
  /// estimated sum of bytes.
  double count_variance(std::uint64_t n) const noexcept {
    const double w = count(n);
    return w * (w - 1);
  }
  double bytes_variance(std::uint64_t n) const noexcept {
    const double b = static_cast<double>(n);
    return b * b * count_variance(n);
  }

 private:
  double interval_;
};

}  // namespace tailor::analyze
