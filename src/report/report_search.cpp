// SPDX-License-Identifier: MIT
// The report's search (report_search.h): search::run, the same search as
// `tailor search`, on the trace the report has loaded, its progress
// recording the best fitness of every generation.
#include "report/report_search.h"

#include <cmath>
#include <stdexcept>

#include "search/search.h"

namespace tailor::report {

SearchOutcome run_search(const simulate::ReplayTrace& t, const SearchSettings& s) {
  if (t.operations.empty()) throw std::runtime_error("--search: the trace has no allocation to search for");
  search::SearchRequest q;
  q.traces = {"the report's trace"};
  q.in_memory = {&t};
  q.grammar = s.grammar;
  q.weights = search::parse_weights(s.weights);
  q.seed = s.seed;
  q.generations = s.generations;
  q.population = s.population;
  q.sample = s.sample;
  q.threads = s.threads;
  q.time_model = s.time_model;
  q.compare_builtins = false;  // the report simulates the DMMs --dmm names itself
  SearchOutcome out;
  q.progress = [&](unsigned gen, double best, double) {
    if (std::isfinite(best)) out.history.emplace_back(gen, best);
  };
  const search::SearchReport r = search::run(q);
  out.found = r.found;
  out.evaluation = r.found_eval;
  out.evaluations = r.result.evaluations;
  out.seconds = r.result.seconds;
  return out;
}

}  // namespace tailor::report
