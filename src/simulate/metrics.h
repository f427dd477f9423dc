// SPDX-License-Identifier: MIT
// Metrics: what one simulation of a DMM on a replay trace measures. Each
// field's definition is in docs/dmm.md ("Metrics"); the simulator
// (simulator.h) fills them.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "dmm/allocator.h"
#include "simulate/heap_snapshot.h"

namespace tailor::simulate {

/// One point of the time series, taken after operation `operation`.
struct Sample {
  std::uint64_t operation = 0;
  std::uint64_t requested = 0;    ///< requested bytes of live blocks
  std::uint64_t block_bytes = 0;  ///< bytes of the blocks serving them
  std::uint64_t held = 0;         ///< bytes held from the system
};

struct Metrics {
  std::string dmm;
  std::uint64_t operations = 0;        ///< allocate + release operations simulated
  std::uint64_t steps = 0;             ///< time complexity, abstract steps
  std::uint64_t reads = 0;             ///< metadata words read
  std::uint64_t writes = 0;            ///< metadata words written
  std::uint64_t system_requests = 0;   ///< obtain + release calls to the system
  std::uint64_t splits = 0;            ///< blocks split
  std::uint64_t coalesces = 0;         ///< merges of two free blocks
  /// High-water mark of resident bytes: the pages the held ranges touch
  /// plus the DMM's own state (class tables, list heads, records of
  /// released ranges), what the machine gives a DMM run for real.
  std::uint64_t memory_usage = 0;
  std::uint64_t held_usage = 0;        ///< high-water mark of bytes held from the system (the DMM simulator paper's memory usage)
  std::uint64_t peak_operation = 0;    ///< operation after which held first reached held_usage
  std::uint64_t requested_at_peak = 0;
  std::uint64_t block_bytes_at_peak = 0;
  std::uint64_t internal_fragmentation = 0;  ///< block_bytes_at_peak - requested_at_peak
  std::uint64_t external_fragmentation = 0;  ///< held_usage - block_bytes_at_peak
  std::uint64_t pages_gained = 0;      ///< bytes of pages that became held (faulted in when first touched)
  std::uint64_t purges = 0;            ///< releases that gave whole pages back
  std::uint64_t zeroed_bytes = 0;      ///< bytes of released ranges zeroed by hand
  std::uint64_t line_misses = 0;       ///< accesses to lines the cache model did not hold (simulated_memory.h)
  /// `steps` by the mechanism that took them (dmm::MechanismKind).
  std::array<std::uint64_t, dmm::kMechanismKinds> steps_by_kind{};
  /// The front's counts (dmm/front.h; all 0 without a front): requests
  /// served from a bin and passed on, releases kept and passed on.
  std::uint64_t front_hits = 0, front_misses = 0, front_kept = 0, front_passed = 0;
  double energy_nj = 0;                ///< energy.h's model of steps, accesses and memory usage
  std::uint64_t max_in_use = 0;        ///< of the trace (requested bytes), for reference
  double seconds = 0;                  ///< wall time of the simulation loop
  std::vector<Sample> series;
  std::vector<HeapSnapshot> snapshots;  ///< at SimulateOptions::snapshots_at, in operation order
};

/// Calls f(key, field) for each whole-number count of `m` (a Metrics or a
/// const one), with the key every JSON output of them uses (simulate's
/// `--json`, the search's checkpoints), so that the fields are listed once.
template <class M, class F>
void each_count(M& m, F&& f) {
  f("operations", m.operations);
  f("steps", m.steps);
  f("reads", m.reads);
  f("writes", m.writes);
  f("system_requests", m.system_requests);
  f("splits", m.splits);
  f("coalesces", m.coalesces);
  f("memory_usage_bytes", m.memory_usage);
  f("held_usage_bytes", m.held_usage);
  f("pages_gained_bytes", m.pages_gained);
  f("purges", m.purges);
  f("zeroed_bytes", m.zeroed_bytes);
  f("line_misses", m.line_misses);
  f("peak_operation", m.peak_operation);
  f("requested_at_peak_bytes", m.requested_at_peak);
  f("block_bytes_at_peak", m.block_bytes_at_peak);
  f("internal_fragmentation_bytes", m.internal_fragmentation);
  f("external_fragmentation_bytes", m.external_fragmentation);
}

}  // namespace tailor::simulate
