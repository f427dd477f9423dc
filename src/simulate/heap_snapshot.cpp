// SPDX-License-Identifier: MIT
// The SnapshotTaker (heap_snapshot.h): block addresses by dense block id,
// copied out in address order at the chosen operations.
#include "simulate/heap_snapshot.h"

#include <algorithm>

namespace tailor::simulate {

SnapshotTaker::SnapshotTaker(const ReplayTrace& trace, const MemoryAccount& memory, std::vector<std::uint64_t> at)
    : trace_(trace), memory_(memory), at_(std::move(at)), live_(trace.summary.max_live_blocks) {
  std::sort(at_.begin(), at_.end());
  at_.erase(std::unique(at_.begin(), at_.end()), at_.end());
  at_.erase(std::lower_bound(at_.begin(), at_.end(), trace.operations.size()), at_.end());
}

void SnapshotTaker::allocated(std::uint64_t operation, std::uint64_t requested, std::uint64_t, const Block& block) {
  live_[trace_.operations[operation].block] = {block.address, block.bytes, requested};
}

void SnapshotTaker::released(std::uint64_t operation, Address, std::uint64_t, std::uint64_t) {
  live_[trace_.operations[operation].block].address = 0;
}

void SnapshotTaker::take(std::uint64_t operation) {
  HeapSnapshot s;
  s.operation = operation;
  s.held = memory_.held_regions();
  for (const Live& b : live_)
    if (b.address) s.live.push_back({b.address, b.block_bytes, b.requested});
  std::sort(s.live.begin(), s.live.end(),
            [](const SnapshotBlock& a, const SnapshotBlock& b) { return a.address < b.address; });
  snapshots_.push_back(std::move(s));
  ++next_;
}

}  // namespace tailor::simulate
