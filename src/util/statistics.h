// SPDX-License-Identifier: MIT
// The statistics the measuring layers share: the median of repeated runs
// (replay, tune, validate report medians of interleaved rounds) and
// Spearman's rank correlation (validate: does the simulator rank DMMs as
// reality does). One definition each, so that every table agrees on what a
// median of an even count or a tie in a ranking is.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numeric>
#include <vector>

namespace tailor::util {

/// The median (the mean of the middle two for an even count); NaN when empty.
inline double median(std::vector<double> v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// The ranks of `v` (1 = least), ties given the mean of their ranks.
inline std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<std::size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    const double rank = (static_cast<double>(i) + static_cast<double>(j)) / 2 + 1;
    for (std::size_t k = i; k <= j; ++k) r[order[k]] = rank;
    i = j + 1;
  }
  return r;
}

/// Spearman's rank correlation of two series of one length (ties
/// averaged); NaN when a series is constant or shorter than two.
inline double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  const auto ra = ranks(a), rb = ranks(b);
  if (ra.size() < 2 || ra.size() != rb.size()) return std::numeric_limits<double>::quiet_NaN();
  const double n = static_cast<double>(ra.size());
  const double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / n, mb = std::accumulate(rb.begin(), rb.end(), 0.0) / n;
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < ra.size(); ++i) {
    sab += (ra[i] - ma) * (rb[i] - mb);
    saa += (ra[i] - ma) * (ra[i] - ma);
    sbb += (rb[i] - mb) * (rb[i] - mb);
  }
  return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace tailor::util
