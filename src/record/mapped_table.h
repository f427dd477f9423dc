// SPDX-License-Identifier: MIT
// Open-addressing tables in mappings of their own, for the recorder, which
// runs inside malloc and so cannot allocate (the stack trie's wide nodes,
// the unwinder's rules): growing one doubles it and moves every entry to
// its slot in the new mapping.
#pragma once

#include <sys/mman.h>

#include <cstddef>

namespace tailor::record {

/// Grows `table` (`capacity` entries, a power of two; nullptr and 0 at
/// first) to twice its capacity, or to `first` entries: each entry that
/// `used` says holds one goes to the first free slot from
/// `slot(entry, new capacity)`. False, the table unchanged, if no mapping
/// can be had.
template <class Entry, class Used, class Slot>
bool grow_mapped_table(Entry*& table, std::size_t& capacity, std::size_t first, Used used, Slot slot) noexcept {
  const std::size_t grown = capacity ? 2 * capacity : first;
  void* m = mmap(nullptr, grown * sizeof(Entry), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return false;
  auto* fresh = static_cast<Entry*>(m);
  for (std::size_t i = 0; i < capacity; ++i) {
    if (!used(table[i])) continue;
    std::size_t at = slot(table[i], grown);
    while (used(fresh[at])) at = (at + 1) & (grown - 1);
    fresh[at] = table[i];
  }
  if (table) munmap(table, capacity * sizeof(Entry));
  table = fresh;
  capacity = grown;
  return true;
}

}  // namespace tailor::record
