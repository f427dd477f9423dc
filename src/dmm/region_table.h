// SPDX-License-Identifier: MIT
// RegionTable: disjoint address ranges ordered by address: a mechanism's
// own record of the regions it obtained from the system, so that it can
// tell whether a free block spans a whole region and give that region back
// (segregated_fit.h with `returns`), and an address space's holes
// (address_space.h). A sorted array in the memory's arena (memory.h) rather than a
// std::map, because inside libtailor the mechanism runs within malloc. It
// grows by doubling; lookups are binary searches, insertion and erasure
// shift the tail (regions are few: each is at least a chunk).
#pragma once

#include <cstddef>
#include <cstdint>

#include "dmm/fixed_array.h"
#include "dmm/memory.h"

namespace tailor::dmm {

struct RegionRecord {
  Address start = 0;
  std::uint64_t bytes = 0;
};

template <Arena A>
class RegionTable {
 public:
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

  std::size_t size() const noexcept { return count_; }
  const RegionRecord& operator[](std::size_t i) const noexcept { return items_[i]; }
  /// Entry i, to move its bounds (the caller keeps the order and disjointness).
  RegionRecord& at(std::size_t i) noexcept { return items_[i]; }
  std::size_t state_bytes() const noexcept { return items_.size() * sizeof(RegionRecord); }

  /// Records [start, start + bytes); false if the arena has no room (nothing changes).
  bool insert(Address start, std::uint64_t bytes) { return insert_at(lower(start), {start, bytes}); }

  /// Inserts `r` at index i (which must keep the order); false if the arena has no room.
  bool insert_at(std::size_t i, RegionRecord r) {
    if (count_ == items_.size() && !items_.resize(items_.empty() ? 16 : 2 * items_.size())) return false;
    for (std::size_t k = count_; k > i; --k) items_[k] = items_[k - 1];
    items_[i] = r;
    ++count_;
    return true;
  }

  /// Index of the region starting at `start`, or kNone.
  std::size_t find(Address start) const noexcept {
    const std::size_t i = lower(start);
    return i < count_ && items_[i].start == start ? i : kNone;
  }

  /// Index of the region holding `address`, or kNone.
  std::size_t containing(Address address) const noexcept {
    const std::size_t i = lower(address + 1);  // first region starting after address
    if (i == 0) return kNone;
    const RegionRecord& r = items_[i - 1];
    return address - r.start < r.bytes ? i - 1 : kNone;
  }

  void erase(std::size_t i) noexcept {
    if (i >= count_) return;
    for (std::size_t k = i + 1; k < count_; ++k) items_[k - 1] = items_[k];
    --count_;
  }

  /// First index whose start is >= address.
  std::size_t lower(Address address) const noexcept {
    std::size_t lo = 0, hi = count_;
    while (lo < hi) {
      const std::size_t mid = (lo + hi) / 2;
      if (items_[mid].start < address)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo;
  }

 private:
  FixedArray<RegionRecord, A> items_;
  std::size_t count_ = 0;
};

}  // namespace tailor::dmm
