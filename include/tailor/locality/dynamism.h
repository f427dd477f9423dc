// SPDX-License-Identifier: MIT
// Dynamism (the Defero paper, section 4): how much of a container's work changes it.
// D = M / (M + NM) * 100, with M the modifying operations (an element
// inserted or erased, a sort, splice, merge, reverse or unique) and NM the
// non-modifying ones (a step of an iterator, a lookup: find, count,
// contains, lower_bound, upper_bound, equal_range, front, back, at).
// tailor::list, set and map take a Dynamism parameter: no_dynamism (the
// default) is empty and its calls compile to nothing, so counting costs
// nothing unless asked for with count_dynamism. docs/locality.md turns D into
// a choice of K and predicate.
#pragma once

#include <cstdint>

namespace tailor {

struct dynamism_counts {
  std::uint64_t modifying = 0;
  std::uint64_t non_modifying = 0;
  /// D in percent (0 before any operation).
  double dynamism() const noexcept {
    const std::uint64_t total = modifying + non_modifying;
    return total == 0 ? 0.0 : 100.0 * static_cast<double>(modifying) / static_cast<double>(total);
  }
};

/// Counting off: no state, no code.
struct no_dynamism {
  static constexpr bool enabled = false;
  void modify(std::uint64_t = 1) noexcept {}
  void access(std::uint64_t = 1) noexcept {}
  dynamism_counts counts() const noexcept { return {}; }
  std::uint64_t* step_counter() noexcept { return nullptr; }
  void reset() noexcept {}
};

/// Counting on: two counters per container (iterators add to non_modifying).
struct count_dynamism {
  static constexpr bool enabled = true;
  void modify(std::uint64_t n = 1) noexcept { c_.modifying += n; }
  void access(std::uint64_t n = 1) noexcept { c_.non_modifying += n; }
  dynamism_counts counts() const noexcept { return c_; }
  std::uint64_t* step_counter() noexcept { return &c_.non_modifying; }
  void reset() noexcept { c_ = {}; }

 private:
  dynamism_counts c_;
};

namespace locality::detail {

/// What an iterator carries to count its steps: nothing, or a counter.
template <bool Counted>
struct step_counter {
  step_counter() = default;
  explicit step_counter(std::uint64_t*) noexcept {}
  void tick() const noexcept {}
  std::uint64_t* get() const noexcept { return nullptr; }
};
template <>
struct step_counter<true> {
  step_counter() = default;
  explicit step_counter(std::uint64_t* c) noexcept : c_(c) {}
  void tick() const noexcept {
    if (c_ != nullptr) ++*c_;
  }
  std::uint64_t* get() const noexcept { return c_; }

 private:
  std::uint64_t* c_ = nullptr;
};

}  // namespace locality::detail
}  // namespace tailor
