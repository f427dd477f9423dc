// SPDX-License-Identifier: MIT
// Heap snapshots: where a simulated DMM has put the live blocks at chosen
// moments of a run (`tailor report`'s heap map draws them, so that
// fragmentation can be seen, not only counted). The SnapshotTaker is an
// observer of the simulation loop (simulator.h), like the Checker: it follows
// every block's address and, after each chosen operation, copies the live
// blocks and the regions held from the system.
#pragma once

#include <cstdint>
#include <vector>

#include "simulate/dmm_names.h"
#include "simulate/memory_account.h"
#include "simulate/replay_trace.h"

namespace tailor::simulate {

struct SnapshotBlock {
  Address address = 0;
  std::uint64_t block_bytes = 0;  ///< what the DMM gave (its size class)
  std::uint64_t requested = 0;
};

struct HeapSnapshot {
  std::uint64_t operation = 0;      ///< taken after this operation
  std::vector<Region> held;         ///< in increasing address order
  std::vector<SnapshotBlock> live;  ///< in increasing address order
};

class SnapshotTaker {
 public:
  /// `at`: operations after which to take a snapshot (any order, duplicates
  /// and operations past the trace's end are dropped).
  SnapshotTaker(const ReplayTrace& trace, const MemoryAccount& memory, std::vector<std::uint64_t> at);

  void allocated(std::uint64_t operation, std::uint64_t requested, std::uint64_t alignment, const Block& block);
  void released(std::uint64_t operation, Address address, std::uint64_t block_bytes, std::uint64_t released_bytes);
  void after(std::uint64_t operation, std::uint64_t /*requested_in_use*/) {
    if (next_ < at_.size() && operation == at_[next_]) [[unlikely]]
      take(operation);
  }
  void finish() {}

  std::vector<HeapSnapshot> snapshots() && { return std::move(snapshots_); }

 private:
  void take(std::uint64_t operation);

  struct Live {
    Address address = 0;  // 0: not live
    std::uint64_t block_bytes = 0, requested = 0;
  };
  const ReplayTrace& trace_;
  const MemoryAccount& memory_;
  std::vector<std::uint64_t> at_;
  std::size_t next_ = 0;
  std::vector<Live> live_;  // by block id
  std::vector<HeapSnapshot> snapshots_;
};

}  // namespace tailor::simulate
