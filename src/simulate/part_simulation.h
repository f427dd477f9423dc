// SPDX-License-Identifier: MIT
// One allocator of a DMM simulated on its share of a trace. The allocators
// of a composed DMM (dmm.h) own disjoint size ranges and separate memories,
// so each sees only the operations routed to it and its metrics do not
// depend on the others: a DMM's steps, accesses, splits and coalesces are the
// sums of its allocators', and its memory usage is the peak of the sum of
// their resident bytes over time (and its held usage that of their held
// bytes), which the changes recorded here let one compute exactly
// (combine_parts). The search (src/search) caches these
// per allocator, so an allocator shared by many candidate DMMs is simulated
// once, as ../shared/docs/field-notes.md suggests.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "dmm/front.h"
#include "simulate/dmm_spec.h"
#include "simulate/metrics.h"
#include "simulate/replay_trace.h"

namespace tailor::simulate {

struct PartResult {
  std::uint64_t steps = 0, reads = 0, writes = 0, splits = 0, coalesces = 0, system_requests = 0;
  std::uint64_t pages_gained = 0, purges = 0, zeroed_bytes = 0, line_misses = 0;
  std::uint64_t front_hits = 0, front_misses = 0, front_kept = 0, front_passed = 0;
  std::uint8_t kind = 0;  ///< its mechanism (dmm::MechanismKind)
  /// Resident bytes before the first operation: the allocator's own state.
  std::uint64_t base_resident = 0;
  struct Change {
    std::uint64_t operation = 0, held = 0, resident = 0;
    friend bool operator==(const Change&, const Change&) = default;
  };
  /// Bytes held and resident after every operation that changed them.
  std::vector<Change> changes;
};

/// Where a search stops simulating an allocator: it can no longer be part
/// of a DMM worth having (evaluator.h sets them from Kingsley's run).
struct PartLimits {
  std::uint64_t steps = UINT64_MAX;     ///< more steps than this
  std::uint64_t resident = UINT64_MAX;  ///< more resident bytes than this at any time
};

/// Simulates allocator `a` (with its range) on the operations of `trace`
/// whose routing size (dmm/spec.h; a release has its block's) lies in the
/// range, behind the DMM's front of `front` blocks per bin (0: none), of
/// which it has the bins whose sizes all route to it. Throws SpecError if it cannot be
/// built. Gives up (std::nullopt) once it has passed one of `limits`: a
/// search need not finish simulating an allocator that is already far
/// slower than Kingsley (a farthest fit scanning a long list on every
/// request is quadratic) or that holds many times its memory (a random
/// candidate can hold hundreds of times the live bytes, and the simulator's
/// host memory follows the simulated heap).
std::optional<PartResult> simulate_part(const ReplayTrace& trace, const AllocatorSpec& a, const std::vector<std::uint64_t>& trace_sizes,
                                        PartLimits limits = {}, unsigned front = dmm::Front::kDefaultLimit);

/// The metrics of the DMM made of `parts` (time series and fragmentation
/// are not computed: the search needs neither).
Metrics combine_parts(const std::vector<const PartResult*>& parts, const ReplayTrace& trace);

}  // namespace tailor::simulate
