// SPDX-License-Identifier: MIT
// The distinct request sizes of a trace, as the segregated mechanisms key
// them (dmm/segregated_lists.h: segregated_size): the classes of EXA and of
// "exact" allocators in a DMM spec.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "dmm/segregated_lists.h"

namespace tailor::simulate {

/// The sizes (segregated_size) of every allocation in a sequence of
/// operations with `kind`, `bytes` and `alignment()` (a ReplayTrace's
/// operations), without repeats, in increasing order.
template <class Operations>
std::vector<std::uint64_t> sizes_of(const Operations& operations) {
  constexpr std::uint64_t kDirect = 1 << 16;  // sizes below are marked in a bitmap, the rest collected
  constexpr std::uint64_t kWord = dmm::kSizeWord;
  std::vector<bool> small(kDirect / kWord);
  std::vector<std::uint64_t> sizes;
  for (const auto& op : operations) {
    using Op = std::remove_cvref_t<decltype(op)>;
    if (op.kind != Op::kAllocate) continue;
    const std::uint64_t s = dmm::segregated_size(op.bytes, op.alignment());
    if (s == 0) continue;  // no block can serve it: allocate will say so
    if (s < kDirect)
      small[s / kWord] = true;
    else
      sizes.push_back(s);
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  std::vector<std::uint64_t> all;
  for (std::uint64_t k = 1; k < small.size(); ++k)
    if (small[k]) all.push_back(k * kWord);
  all.insert(all.end(), sizes.begin(), sizes.end());
  return all;
}

}  // namespace tailor::simulate
