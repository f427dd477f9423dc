// SPDX-License-Identifier: MIT
// The data of one report page, gathered from the analyzers, the simulator
// and the search into one JSON document that the page's script draws
// (assets/report.js reads exactly these fields). Everything here is already
// downsampled: the page's size and drawing time depend on the numbers of
// points chosen here, not on the trace's length (docs/report.md).
#pragma once

#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/heap_map.h"
#include "simulate/metrics.h"
#include "report/report_search.h"
#include "simulate/replay_trace.h"
#include "tailor/trace/reader.h"
#include "analyze/trace_stats.h"

namespace tailor::report {

struct ReportInputs {
  const trace::Reader& reader;
  const analyze::TraceStats& stats;  ///< with in_use_series and symbolized call sites
  /// Simulated DMMs (empty without --dmm), each with a heap snapshot at every moment.
  std::vector<simulate::Metrics> dmms;
  std::optional<simulate::ReplaySummary> replay;  ///< of the simulated trace, when DMMs were simulated
  std::vector<Moment> moments;
  std::optional<SearchOutcome> search;
  nlohmann::json stacks = nullptr;  ///< flame_graphs() of a trace recorded with stacks, else null
};

nlohmann::json report_data(const ReportInputs& in);

}  // namespace tailor::report
