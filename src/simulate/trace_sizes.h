// SPDX-License-Identifier: MIT
// The distinct request sizes of a trace, as the segregated mechanisms key
// them (dmm/segregated_lists.h: segregated_size): the classes of EXA and of
// "exact" allocators in a DMM spec.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "dmm/segregated_lists.h"
#include "simulate/replay_trace.h"

namespace tailor::simulate {

/// The sizes (segregated_size) of every allocation of a trace, without
/// repeats, in increasing order.
inline std::vector<std::uint64_t> sizes_of(const ReplayTrace& trace) {
  constexpr std::uint64_t kDirect = 1 << 16;  // sizes below are marked in a bitmap, the rest collected
  constexpr std::uint64_t kWord = dmm::kSizeWord;
  std::vector<bool> small(kDirect / kWord);
  std::vector<std::uint64_t> sizes;
  // Each distinct (size, alignment) pair once: most traces ask for no alignment.
  std::vector<std::uint64_t> seen_plain((trace.sizes.size() + 63) / 64);
  for (const Operation& op : trace.operations) {
    if (op.kind() != Operation::kAllocate) continue;
    if (op.align_log2() == 0) {
      std::uint64_t& w = seen_plain[op.size() / 64];
      const std::uint64_t bit = std::uint64_t{1} << (op.size() % 64);
      if (w & bit) continue;
      w |= bit;
    }
    const std::uint64_t s = dmm::segregated_size(trace.bytes(op), op.alignment());
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
