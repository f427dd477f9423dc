// SPDX-License-Identifier: MIT
// SizeClasses: the size-class map of a segregated mechanism. A class is a
// range (lower, upper] of request sizes, sizes being the requested bytes
// rounded up to kWord (8, the metadata word) with any alignment slack
// included (segregated_size in segregated_lists.h); class i's upper bound is
// bounds[i], its lower bound bounds[i - 1] (0 for the first). The last class
// may be open: (bounds.back(), infinity). Classes are found by a direct table
// for sizes up to kTableLimit (one load) and by binary search above.
//
// Two constructions serve the built-ins:
//  - powers_of_two(4, 12, open): (0,16], (16,32], ..., (2048,4096] and, open,
//    (4096, inf): S10's ten lists;
//  - exact(sizes): one class per distinct size (sizes rounded to kWord),
//    (previous size, size], plus an open class above the largest: EXA.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace tailor::simulate {

class SizeClasses {
 public:
  static constexpr std::uint64_t kWord = 8;
  static constexpr std::uint64_t kOpen = UINT64_MAX;       ///< upper bound of an open last class
  static constexpr std::uint32_t kNone = UINT32_MAX;       ///< no class holds the size
  static constexpr std::uint64_t kTableLimit = 32 * 1024;  ///< sizes up to this are found by table

  /// `bounds`: strictly increasing non-zero multiples of kWord, the inclusive
  /// upper bound of each class; `open_last` adds a class above the last bound.
  SizeClasses(std::vector<std::uint64_t> bounds, bool open_last) : upper_(std::move(bounds)) {
    if (upper_.empty() && !open_last) throw std::invalid_argument("SizeClasses: no class");
    for (std::size_t i = 0; i < upper_.size(); ++i) {
      if (upper_[i] == 0 || upper_[i] % kWord != 0 || (i > 0 && upper_[i] <= upper_[i - 1]))
        throw std::invalid_argument("SizeClasses: bound " + std::to_string(i) + " (" + std::to_string(upper_[i]) +
                                    ") is not a multiple of 8 above the previous one");
    }
    if (open_last) upper_.push_back(kOpen);
    const std::uint64_t top = std::min(upper_.back(), kTableLimit);
    table_.resize(top / kWord);
    std::uint32_t c = 0;
    for (std::uint64_t k = 0; k < table_.size(); ++k) {
      while ((k + 1) * kWord > upper_[c]) ++c;
      table_[k] = c;
    }
  }

  /// S10's map: classes (0, 2^first], (2^first, 2^(first+1)], ..., (2^(last-1), 2^last], and (2^last, inf) if open.
  static SizeClasses powers_of_two(unsigned first_log2, unsigned last_log2, bool open_last) {
    if (first_log2 < 3 || last_log2 < first_log2 || last_log2 > 62)
      throw std::invalid_argument("SizeClasses::powers_of_two: bad exponents");
    std::vector<std::uint64_t> b;
    for (unsigned k = first_log2; k <= last_log2; ++k) b.push_back(std::uint64_t{1} << k);
    return SizeClasses(std::move(b), open_last);
  }

  /// EXA's map: one class per distinct size (each rounded up to kWord; 0 counts as 8), plus an open last class.
  static SizeClasses exact(std::vector<std::uint64_t> sizes) {
    for (auto& s : sizes) s = s == 0 ? kWord : (s + kWord - 1) & ~(kWord - 1);
    std::sort(sizes.begin(), sizes.end());
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    return SizeClasses(std::move(sizes), true);
  }

  std::uint32_t count() const noexcept { return static_cast<std::uint32_t>(upper_.size()); }
  /// Inclusive upper bound of class c (kOpen for an open last class).
  std::uint64_t upper(std::uint32_t c) const noexcept { return upper_[c]; }
  /// Exclusive lower bound of class c.
  std::uint64_t lower(std::uint32_t c) const noexcept { return c == 0 ? 0 : upper_[c - 1]; }

  /// Class of a size (a non-zero multiple of kWord), or kNone if above every class.
  std::uint32_t class_of(std::uint64_t size) const noexcept {
    if (size <= table_.size() * kWord) [[likely]]
      return table_[(size - 1) / kWord];
    const auto it = std::lower_bound(upper_.begin(), upper_.end(), size);
    return it == upper_.end() ? kNone : static_cast<std::uint32_t>(it - upper_.begin());
  }

 private:
  std::vector<std::uint64_t> upper_;
  std::vector<std::uint32_t> table_;  // class of size (k + 1) * kWord
};

}  // namespace tailor::simulate
