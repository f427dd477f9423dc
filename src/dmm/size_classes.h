// SPDX-License-Identifier: MIT
// SizeClasses: the size-class map of a segregated mechanism. A class is a
// range (lower, upper] of request sizes, sizes being the requested bytes
// rounded up to kWord (8, the metadata word) with any alignment slack
// included (segregated_size in segregated_lists.h); class i's upper bound is
// bounds[i], its lower bound bounds[i - 1] (0 for the first). The last class
// may be open: (bounds.back(), infinity). Classes are found by a direct table
// for sizes up to the last bound or kTableLimit, whichever is less (one
// load), and by binary search above.
//
// Three ways to fill one (each false if the arena has no room; check() says
// whether bounds are valid before):
//  - assign(bounds, n, open): the given bounds;
//  - assign_powers_of_two(4, 12, open): (0,16], (16,32], ..., (2048,4096]
//    and, open, (4096, inf): S10's ten lists;
//  - assign_exact(sizes, n): one class per distinct size (sizes rounded to
//    kWord), (previous size, size], plus an open class above the largest: EXA.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "dmm/fixed_array.h"
#include "dmm/memory.h"

namespace tailor::dmm {

/// Sizes are counted in metadata words: every class bound is a multiple of it.
inline constexpr std::uint64_t kSizeWord = 8;

template <Arena A>
class SizeClasses {
 public:
  static constexpr std::uint64_t kWord = kSizeWord;
  static constexpr std::uint64_t kOpen = UINT64_MAX;       ///< upper bound of an open last class
  static constexpr std::uint32_t kNone = UINT32_MAX;       ///< no class holds the size
  static constexpr std::uint64_t kTableLimit = 4096;  ///< sizes up to this are found by table (2 KiB of entries at most)
  static constexpr std::size_t kMaxClasses = std::size_t{1} << 32;  ///< class indexes are 32-bit

  /// Why `bounds` cannot make classes, or nullptr if they can: they must be
  /// strictly increasing non-zero multiples of kWord, and some class must exist.
  static const char* check(const std::uint64_t* bounds, std::size_t n, bool open_last) noexcept {
    if (n == 0 && !open_last) return "no class";
    for (std::size_t i = 0; i < n; ++i)
      if (bounds[i] == 0 || bounds[i] % kWord != 0 || (i > 0 && bounds[i] <= bounds[i - 1]))
        return "bounds must be increasing non-zero multiples of 8";
    return nullptr;
  }

  /// `bounds` must pass check().
  bool assign(const std::uint64_t* bounds, std::size_t n, bool open_last) {
    if (n > kMaxClasses || !upper_.assign(n + (open_last ? 1 : 0))) return false;
    std::uint64_t last = 0;
    for (std::size_t i = 0; i < n; ++i) upper_[i] = last = bounds[i];
    if (open_last) upper_.back() = kOpen;
    // The table covers the bounded classes (up to kTableLimit): an open last
    // class needs no entries of its own, and the table is the largest part
    // of a real DMM's own state (2 KiB at the limit).
    const std::uint64_t top = std::min(last, kTableLimit);
    if (!table_.assign(top / kWord)) return false;
    std::uint32_t c = 0;
    for (std::uint64_t k = 0; k < table_.size(); ++k) {
      while ((k + 1) * kWord > upper_[c]) ++c;
      table_[k] = c;
    }
    return true;
  }

  /// S10's map: (0, 2^first], (2^first, 2^(first+1)], ..., (2^(last-1), 2^last], and (2^last, inf) if open.
  /// 3 <= first <= last <= 62.
  bool assign_powers_of_two(unsigned first_log2, unsigned last_log2, bool open_last) {
    std::uint64_t b[64];
    std::size_t n = 0;
    for (unsigned k = first_log2; k <= last_log2; ++k) b[n++] = std::uint64_t{1} << k;
    return assign(b, n, open_last);
  }

  /// EXA's map: one class per distinct size (each rounded up to kWord; 0
  /// counts as 8), plus an open last class.
  bool assign_exact(const std::uint64_t* sizes, std::size_t n) {
    FixedArray<std::uint64_t, A> s;
    if (!s.assign(n)) return false;
    for (std::size_t i = 0; i < n; ++i) s[i] = sizes[i] == 0 ? kWord : (sizes[i] + kWord - 1) & ~(kWord - 1);
    std::sort(s.begin(), s.end());
    const std::size_t distinct = static_cast<std::size_t>(std::unique(s.begin(), s.end()) - s.begin());
    return assign(s.data(), distinct, true);
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
    const std::uint64_t* it = std::lower_bound(upper_.begin(), upper_.end(), size);
    return it == upper_.end() ? kNone : static_cast<std::uint32_t>(it - upper_.begin());
  }

  /// Bytes of private state it holds.
  std::size_t state_bytes() const noexcept {
    return upper_.size() * sizeof(std::uint64_t) + table_.size() * sizeof(std::uint32_t);
  }

 private:
  FixedArray<std::uint64_t, A> upper_;
  FixedArray<std::uint32_t, A> table_;  // class of size (k + 1) * kWord
};

}  // namespace tailor::dmm
