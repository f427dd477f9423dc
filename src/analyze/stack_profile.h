// SPDX-License-Identifier: MIT
// Bytes by whole call stack, for the flame graphs of a trace recorded with
// stacks (`tailor record --stacks`): requested bytes allocated over the run,
// and bytes in use at the peak of requested bytes in use, each charged to
// the stack (Reader::stacks()) of the call that allocated them. Blocks are
// counted by trace_stats.h's rules (a realloc ends the old block and starts
// a new one; an allocation over a live block replaces it). A sampled trace's
// bytes are estimates (trace_stats.h, SamplingStats).
#pragma once

#include <cstdint>
#include <vector>

#include "tailor/trace/reader.h"

namespace tailor::analyze {

struct StackProfile {
  std::vector<std::uint64_t> allocated;  ///< by stack id (0: calls without a stack)
  std::vector<std::uint64_t> at_peak;    ///< the same, of the blocks live at the peak
  std::uint64_t allocated_bytes = 0;
  std::uint64_t peak_bytes = 0;
};

/// One pass over `reader`; `peak_event` is the index of the event at whose
/// end the peak is reached (TraceStats::event_of_max_in_use). Rewinds.
StackProfile profile_stacks(trace::Reader& reader, std::uint64_t peak_event);

}  // namespace tailor::analyze
