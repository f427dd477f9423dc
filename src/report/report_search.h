// SPDX-License-Identifier: MIT
// `tailor report --search`: a search for a custom DMM (src/search), run as
// `tailor search` runs it (ranked on a sample of large traces, the best
// measured on the whole trace), keeping what the report draws: the best
// fitness after every generation and the found DMM with its measures
// normalized to Kingsley.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "simulate/dmm_spec.h"
#include "search/evaluator.h"
#include "simulate/replay_trace.h"

namespace tailor::report {

struct SearchSettings {
  std::string grammar;  ///< BNF file
  std::string weights = "time=1,memory=1,energy=1";
  std::uint64_t seed = 1;
  unsigned generations = 100;
  unsigned population = 60;
  std::uint64_t sample = 500000;  ///< as `tailor search --sample`
  unsigned threads = 1;
  /// What time is ranked by, as `tailor search` ranks it: the time model's
  /// prediction (time_model.h; kept by the caller), or steps (nullptr).
  const simulate::TimeModel* time_model = nullptr;
};

struct SearchOutcome {
  simulate::DmmSpec found;           ///< named "found"
  search::Evaluation evaluation;     ///< normalized to Kingsley, on the whole trace
  /// (generation, best weighted fitness so far), generation 0 being the
  /// initial population; generations with no valid DMM yet are left out.
  std::vector<std::pair<unsigned, double>> history;
  std::uint64_t evaluations = 0;
  double seconds = 0;
};

/// Throws std::runtime_error if the trace has no allocation or no valid DMM is found.
SearchOutcome run_search(const simulate::ReplayTrace& trace, const SearchSettings& settings);

}  // namespace tailor::report
