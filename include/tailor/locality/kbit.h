// SPDX-License-Identifier: MIT
// The K-Bit partition of the Defero paper: two addresses are equivalent when
// their K high-order bits are equal, so each equivalence class (a K-class) is
// an aligned region of 2^(64-K) bytes, its index the address shifted right by
// 64-K. This file holds that arithmetic, the default K, and kclass: the
// heap's record of the free chunks of one size class inside one K-class,
// which is also what allocation predicates look at (predicates.h).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

#include "rb_tree_core.h"

namespace tailor::locality {

/// K may range over [kMinK, kMaxK]: K-classes from 16 MiB down to 64 bytes.
inline constexpr unsigned kMinK = 40;
inline constexpr unsigned kMaxK = 58;

/// The default K makes one K-class one virtual page (K = 52 for 4 KiB pages):
/// Defero's choice, measured again in docs/locality.md.
constexpr unsigned default_k(std::size_t page_size) noexcept {
  return 64 - static_cast<unsigned>(std::countr_zero(page_size));
}

/// The bytes of one K-class.
constexpr std::size_t kclass_span(unsigned k) noexcept { return std::size_t{1} << (64 - k); }

/// The K-class index of an address.
constexpr std::uint64_t kclass_index(std::uintptr_t address, unsigned k) noexcept {
  return static_cast<std::uint64_t>(address) >> (64 - k);
}

/// The free chunks of one size class in one K-class: a LIFO list of freed
/// chunks plus the part of the slab not carved yet (bump .. bump_end). Lives
/// in the size class's red-black tree, ordered by index, while it has a free
/// chunk; removed (and its node recycled) when it has none.
class kclass : public rb_node {
 public:
  std::uint64_t index() const noexcept { return index_; }
  /// The address range of the K-class (the whole class, not only its free chunks).
  std::uintptr_t first_address() const noexcept { return first_; }
  std::uintptr_t last_address() const noexcept { return last_; }
  /// Freed chunks on the list plus chunks not carved yet.
  std::size_t free_chunks() const noexcept { return listed_ + static_cast<std::size_t>(bump_end_ - bump_) / chunk_; }

 private:
  template <class>
  friend class basic_locality_heap;
  std::uint64_t index_ = 0;
  std::uintptr_t first_ = 0, last_ = 0;
  void* free_ = nullptr;  // freed chunks, linked through their first word
  char* bump_ = nullptr;
  char* bump_end_ = nullptr;
  std::uint32_t chunk_ = 16;
  std::uint32_t listed_ = 0;  // chunks on free_
};

}  // namespace tailor::locality
