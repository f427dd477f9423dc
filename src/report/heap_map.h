// SPDX-License-Identifier: MIT
// The heap map of `tailor report`: a heap snapshot (simulate/heap_snapshot.h)
// drawn as rows of address space, each cell coloured by the size class of
// the live blocks covering most of it, or empty where the memory held from
// the system is free, so that fragmentation shows. Downsampled here, not in
// the browser: the held regions are laid end to end (gaps between regions
// not held are cut out), cut into kRows rows of kColumns cells, and runs of
// equal cells are merged; the page draws at most kRows x kColumns bars
// whatever the number of live blocks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "simulate/heap_snapshot.h"
#include "simulate/replay_trace.h"

namespace tailor::report {

inline constexpr std::uint64_t kRows = 48;
inline constexpr std::uint64_t kColumns = 160;

/// A moment of the trace at which the report takes heap snapshots.
struct Moment {
  std::uint64_t operation = 0;
  std::string label;
};

/// The moments offered in the heap map: the peak of requested bytes in use,
/// a quarter, half and three quarters of the operations, and the last one
/// (duplicates dropped), in operation order.
std::vector<Moment> heap_moments(const simulate::ReplayTrace& trace);

/// Size class of a block of `bytes`: k such that 2^(k-1) < bytes <= 2^k.
unsigned size_class(std::uint64_t bytes);

/// The map of one snapshot: {"operation", "held_bytes", "live_blocks",
/// "block_bytes", "requested_bytes", "cell_bytes", "row_bytes", "rows",
/// "region_starts" (offsets on the laid-out axis), "runs": [[row, first
/// byte, end byte, class], ...]}.
nlohmann::json heap_map(const simulate::HeapSnapshot& snapshot);

}  // namespace tailor::report
