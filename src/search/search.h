// SPDX-License-Identifier: MIT
// The whole search for a custom DMM, from traces on disk to the found DMM
// and its comparison with the built-in DMMs (docs/search.md): the one entry
// point that `tailor search` renders. It loads each trace and, when a trace
// is large, cuts it into the three tiers the evolution, the candidates for
// the best and the finalists are measured on; runs the island model (over
// the ranks of an MPI job when given a ring); measures the finalists on the
// whole traces; and simulates KNG, LEA, FIB, S10 and EXA beside the found
// DMM, each normalized to Kingsley (the DMM simulator paper's Table 3).
// Nothing is printed: progress goes to the request's callbacks.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "simulate/dmm_spec.h"
#include "search/evaluator.h"
#include "search/evolution.h"
#include "simulate/replay_trace.h"
#include "search/ring.h"
#include "simulate/time_model.h"

namespace tailor::search {

struct SearchRequest {
  std::vector<std::string> traces;  ///< one DMM for all of them: their files, or the names of `in_memory`'s
  /// Traces already loaded (tailor report, tune), used instead of reading
  /// `traces`' files, which then name them; they must outlive run().
  std::vector<const simulate::ReplayTrace*> in_memory;
  std::string grammar;              ///< the BNF grammar's file
  Weights weights;
  Aggregate aggregate = Aggregate::kMean;  ///< over several traces
  std::uint64_t seed = 1;
  unsigned generations = 100;
  unsigned population = 60;
  unsigned threads = 1;                     ///< simulations at once on this process
  std::uint64_t sample = 500000;            ///< rank on at most this many operations (0: the whole trace)
  std::uint64_t validate_sample = 5000000;  ///< candidates for the best on at most this many (0: the whole trace)
  bool pareto = false;
  std::string front_dir;  ///< with pareto: the front's DMMs written there as specs (empty: not written)
  unsigned islands = 1;
  unsigned migrate_every = 10;
  unsigned migrants = 2;
  unsigned share_among = 16;
  /// Under MPI with several traces: every rank holds every trace, instead of
  /// each trace being held by one rank of each sharing group (the default
  /// when there are at least as many traces as ranks in a group).
  bool copy_traces = false;
  std::string checkpoint;  ///< empty: none
  unsigned checkpoint_every = 0;
  std::string resume;  ///< a checkpoint file to continue from (empty: a new search)
  const simulate::TimeModel* time_model = nullptr;  ///< ranks time by it; nullptr: by steps
  /// Asked after each generation (one process only): true ends the search
  /// there with the best so far (a time budget; generations is then a bound).
  std::function<bool()> stop;
  bool compare_builtins = true;  ///< simulate KNG, LEA, FIB, S10 and EXA beside the found DMM (SearchReport::rows)
  Ring* ring = nullptr;                             ///< the ranks of an MPI job, or nullptr
  /// A line saying what runs now ("loading X (N events)..."), "" when it is done.
  std::function<void(const std::string&)> status;
  /// After every generation, on rank 0: (generation, best fitness, evaluations per second).
  std::function<void(unsigned, double, double)> progress;
};

/// How one trace was measured, and every DMM on it.
struct SearchTrace {
  std::string path;
  std::uint64_t operations = 0;
  bool sampled = false;                 ///< ranked on an object sample
  std::uint32_t one_in = 1;             ///< the sample's objects: one in k
  std::uint64_t ranked_operations = 0;  ///< operations candidates are ranked on
  bool validated = false;               ///< candidates for the best measured on a validation sample and a prefix
  std::uint32_t validate_one_in = 1;
  std::uint64_t validation_operations = 0;  ///< of the validation sample (the whole trace's when none)
  std::uint64_t prefix_operations = 0;      ///< of the prefix (0 when none)
  std::vector<Evaluation> normalized;       ///< each of SearchReport::columns on this trace, normalized to Kingsley
};

/// One rank of an MPI search: what it held and the memory it took.
struct RankReport {
  unsigned rank = 0;
  std::uint64_t peak_rss_bytes = 0;  ///< its peak resident set, from the start to the report
  std::vector<std::size_t> traces;   ///< the traces it loaded (indices into SearchReport::traces)
};

struct SearchReport {
  bool root = true;  ///< false on the ranks of an MPI job other than 0: they report nothing
  std::vector<RankReport> ranks;  ///< under MPI, every rank (on rank 0); empty otherwise
  SearchResult result;
  simulate::DmmSpec found;  ///< named "found", its exact classes' sizes filled in
  Evaluation found_eval;    ///< measured on the whole trace(s)
  std::vector<std::string> columns;  ///< kng, lea, fib, s10, exa, found (empty without compare_builtins)
  std::vector<Evaluation> rows;      ///< each column, normalized to Kingsley (over several traces: aggregated)
  std::vector<SearchTrace> traces;
  std::vector<std::string> front_files;  ///< the front's specs, when written
  std::vector<std::uint64_t> sizes;      ///< the traces' request sizes: the classes of `exact` class lists
  double load_seconds = 0;  ///< reading the traces and making the evaluators, until every process had (MPI)
  bool any_validation = false;           ///< some trace's candidates were measured on a validation sample
};

/// Runs the search `q` asks for. Throws std::runtime_error naming the file
/// or setting at fault (a trace with no allocation, a grammar that yields
/// no valid DMM, a checkpoint of another search).
SearchReport run(const SearchRequest& q);

}  // namespace tailor::search
