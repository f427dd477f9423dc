// SPDX-License-Identifier: MIT
// The report's search (report_search.h): the same evaluator set-up as
// `tailor search` (src/cli/cmd_search.cpp), with the progress callback
// recording the best fitness of every generation.
#include "report_search.h"

#include <cmath>
#include <optional>
#include <stdexcept>

#include "evolution.h"
#include "grammar.h"
#include "replay_sample.h"

namespace tailor::report {

SearchOutcome run_search(const simulate::ReplayTrace& t, const SearchSettings& s) {
  if (t.operations.empty()) throw std::runtime_error("--search: the trace has no allocation to search for");
  const search::Weights weights = search::parse_weights(s.weights);
  const search::Grammar grammar = search::Grammar::load(s.grammar);
  const std::uint32_t one_in = s.sample ? simulate::sampling_rate(t, s.sample) : 1;
  std::optional<simulate::ReplayTrace> sampled;
  if (one_in > 1) sampled = simulate::sample_objects(t, one_in);
  search::Evaluator evaluator(sampled ? *sampled : t, weights, s.threads, nullptr, s.time_model);
  std::optional<search::Evaluator> whole_trace;
  if (sampled) whole_trace.emplace(t, weights, s.threads, nullptr, s.time_model);
  search::Evaluator& whole = sampled ? *whole_trace : evaluator;

  SearchOutcome out;
  search::SearchOptions so;
  so.seed = s.seed;
  so.generations = s.generations;
  so.population = s.population;
  if (sampled) so.validator = &whole;
  so.progress = [&](unsigned gen, double best, double) {
    if (std::isfinite(best)) out.history.emplace_back(gen, best);
  };
  const search::SearchResult res = search::evolve(grammar, whole.trace_sizes(), evaluator, so);
  if (!res.best.eval.valid) throw std::runtime_error("--search: the search found no valid DMM (check the grammar)");
  out.found = *res.best.spec;
  out.found.name = "found";
  if (out.found.uses_exact_classes()) out.found.exact_sizes = whole.trace_sizes();
  out.evaluation = res.best.eval;
  out.evaluations = res.evaluations;
  out.seconds = res.seconds;
  return out;
}

}  // namespace tailor::report
