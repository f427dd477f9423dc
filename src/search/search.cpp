// SPDX-License-Identifier: MIT
// The whole search (search.h): traces loaded and cut into tiers, the island
// model run, the finalists measured, the built-in DMMs compared.
#include "search/search.h"

#include <fmt/format.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>

#include "search/islands.h"
#include "simulate/replay_sample.h"
#include "simulate/simulator.h"
#include "tailor/trace/reader.h"
#include "simulate/trace_sizes.h"
#include "util/parallel_for.h"
#include "util/file.h"

namespace tailor::search {

namespace {

namespace fs = std::filesystem;
namespace sim = tailor::simulate;

// XXH3 of the grammar's text (the hash traces use): a checkpoint resumes
// only on the grammar it was made with.
std::string grammar_digest(const std::string& path) {
  const std::string s = util::read_file(path, "grammar");
  return fmt::format("{:016x}", XXH3_64bits(s.data(), s.size()));
}


// One trace of the search on three tiers, so that the evolution's time does
// not grow with the trace: candidates are ranked on a sample (if the trace is
// larger than --sample); a candidate for the best is measured on a larger
// sample and on the trace's first operations, and carries the worse of the
// two (if the trace is larger than --validate-sample); the finalists are
// measured on the whole trace at the end. Each view normalizes to Kingsley
// on its own operations.
struct TraceSet {
  std::string path;
  std::optional<sim::ReplayTrace> loaded;  // read from `path` (else the request's trace in memory)
  const sim::ReplayTrace* trace = nullptr;  // the whole trace
  const sim::ReplayTrace& whole() const { return *trace; }
  std::uint32_t one_in = 1, validate_one_in = 1;   // objects kept: one in k
  std::optional<sim::ReplayTrace> sampled, validation, head;  // head: the prefix
  std::unique_ptr<Evaluator> ranked, measured;  // measured: null when not sampled
  std::unique_ptr<Evaluator> validating, validating_head;
  std::unique_ptr<MultiEvaluator> validating_worst;  // the worse of the two
  Evaluator& whole_evaluator() { return measured ? *measured : *ranked; }
  Fitness& validating_fitness() { return validating_worst ? static_cast<Fitness&>(*validating_worst) : whole_evaluator(); }
  const sim::ReplayTrace& ranked_on() const { return sampled ? *sampled : whole(); }
};

void say(const SearchRequest& q, const std::string& line) {
  if (q.status) q.status(line);
}

// Loads each trace and cuts it into its tiers.
std::deque<TraceSet> load_traces(const SearchRequest& q) {
  std::deque<TraceSet> sets;
  if (!q.in_memory.empty() && q.in_memory.size() != q.traces.size())
    throw std::invalid_argument("SearchRequest: one name in `traces` per trace in memory");
  for (std::size_t i = 0; i < q.traces.size(); ++i) {
    const std::string& path = q.traces[i];
    TraceSet& s = sets.emplace_back();
    s.path = path;
    if (q.in_memory.empty()) {
      trace::Reader r(path);
      say(q, fmt::format("loading {} ({} events)...", path, r.event_count()));
      s.trace = &s.loaded.emplace(sim::load_replay(r));
      say(q, "");
    } else {
      s.trace = q.in_memory[i];
    }
    if (s.whole().operations.empty()) throw std::runtime_error(path + ": the trace has no allocation to search for");
    s.one_in = q.sample ? sim::sampling_rate(s.whole(), q.sample) : 1;
    if (s.one_in > 1) {
      s.sampled = sim::sample_objects(s.whole(), s.one_in);
      // Half the validation operations in an object sample, half in the prefix.
      const std::uint64_t half = q.validate_sample / 2;
      const std::uint32_t k = half ? sim::sampling_rate(s.whole(), half) : 1;
      if (k > 1 && k < s.one_in && s.whole().operations.size() > q.validate_sample) {
        s.validate_one_in = k;
        s.validation = sim::sample_objects(s.whole(), k);
        s.head = sim::prefix(s.whole(), half);
      }
    }
  }
  return sets;
}

// <TRACE_SIZE> and exact classes: over several traces, the union of their sizes.
std::vector<std::uint64_t> union_of_sizes(const std::deque<TraceSet>& sets) {
  std::vector<std::uint64_t> sizes;
  for (const TraceSet& s : sets) {
    const std::vector<std::uint64_t> own = sim::sizes_of(s.whole());
    sizes.insert(sizes.end(), own.begin(), own.end());
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

void make_evaluators(TraceSet& s, const SearchRequest& q, const std::vector<std::uint64_t>* exact) {
  s.ranked = std::make_unique<Evaluator>(s.ranked_on(), q.weights, q.threads, exact, q.time_model);
  if (s.validation) {
    s.validating = std::make_unique<Evaluator>(*s.validation, q.weights, q.threads, exact, q.time_model);
    s.validating_head = std::make_unique<Evaluator>(*s.head, q.weights, q.threads, exact, q.time_model);
    s.validating_worst = std::make_unique<MultiEvaluator>(
        std::vector<Fitness*>{s.validating.get(), s.validating_head.get()}, Aggregate::kWorst);
  }
  if (s.sampled) s.measured = std::make_unique<Evaluator>(s.whole(), q.weights, q.threads, exact, q.time_model);
}

// The three fitnesses of the search (ranking, candidates for the best, the
// whole traces): a trace's own, or over several traces their aggregate.
struct Fitnesses {
  std::optional<MultiEvaluator> multi_ranked, multi_validating, multi_whole;
  Fitness* ranked = nullptr;
  Fitness* validating = nullptr;
  Fitness* whole = nullptr;

  Fitnesses(std::deque<TraceSet>& sets, Aggregate how) {
    if (sets.size() == 1) {
      ranked = sets.front().ranked.get();
      validating = &sets.front().validating_fitness();
      whole = &sets.front().whole_evaluator();
      return;
    }
    std::vector<Fitness*> r, v, w;
    for (TraceSet& s : sets) {
      r.push_back(s.ranked.get());
      v.push_back(&s.validating_fitness());
      w.push_back(&s.whole_evaluator());
    }
    ranked = &multi_ranked.emplace(r, how);
    validating = &multi_validating.emplace(v, how);
    whole = &multi_whole.emplace(w, how);
  }
};

// What a checkpoint records of the search, so that a resumed one is the same search.
nlohmann::json settings(const SearchRequest& q, const std::deque<TraceSet>& sets) {
  nlohmann::json trace_ids = nlohmann::json::array();
  for (const TraceSet& s : sets) trace_ids.push_back({{"path", s.path}, {"operations", s.whole().operations.size()}});
  const bool multi = sets.size() > 1;
  return {{"traces", trace_ids},
          {"aggregate", multi && q.aggregate == Aggregate::kWorst ? "worst" : "mean"},
          {"grammar", grammar_digest(q.grammar)},
          {"seed", q.seed},
          {"population", q.population},
          {"weights", {{"time", q.weights.time}, {"memory", q.weights.memory}, {"energy", q.weights.energy}}},
          {"pareto", q.pareto},
          {"sample", q.sample},
          {"validate_sample", q.validate_sample},
          {"islands", q.islands},
          {"migrate_every", q.migrate_every},
          {"migrants", q.migrants},
          {"time", q.time_model ? sim::to_json_text(*q.time_model) : std::string("steps")}};
}

// The finalists (the best few measured on the validation sample, which can
// still flatter a DMM) measured together on the whole traces: the best
// there is the found DMM.
void measure_finalists(const SearchRequest& q, const SearchResult& res, Fitness& whole, SearchReport& r) {
  say(q, fmt::format("measuring the {} finalists on the whole trace...", res.finalists.size()));
  std::vector<const sim::DmmSpec*> specs;
  for (const Individual& f : res.finalists) specs.push_back(&*f.spec);
  const std::vector<Evaluation> evals = whole.evaluate(specs);
  say(q, "");
  r.found_eval = {};
  for (std::size_t i = 0; i < evals.size(); ++i)
    if (evals[i].valid && (!r.found_eval.valid || evals[i].fitness < r.found_eval.fitness)) {
      r.found_eval = evals[i];
      r.found = *res.finalists[i].spec;
    }
  if (!r.found_eval.valid)
    throw std::runtime_error(
        "no finalist could be measured on the whole trace (a request none of its allocators serves, or far "
        "more steps than Kingsley's); search again with --validate-sample 0 to measure candidates on the whole trace");
}

// Writes the Pareto front as specs front-00.json, front-01.json, ... in
// `dir` (created if missing); returns their paths, in the front's order.
std::vector<std::string> write_front(const std::string& dir, const std::vector<Individual>& front,
                                     const std::vector<std::uint64_t>& sizes) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error(dir + ": cannot create the directory: " + ec.message());
  std::vector<std::string> paths;
  for (std::size_t i = 0; i < front.size(); ++i) {
    sim::DmmSpec spec = *front[i].spec;
    spec.name = fmt::format("front-{:02}", i);
    if (spec.uses_exact_classes()) spec.exact_sizes = sizes;
    const std::string path = (fs::path(dir) / (spec.name + ".json")).string();
    std::ofstream out(path);
    out << sim::to_json(spec).dump(2) << "\n";
    if (!out) throw std::runtime_error(path + ": cannot write the DMM spec");
    paths.push_back(path);
  }
  return paths;
}

// The found DMM next to the five built-ins, simulated in parallel on every
// trace (Kingsley's run is the evaluator's own), each normalized to
// Kingsley on its trace and, over several traces, aggregated.
void compare_with_builtins(std::deque<TraceSet>& sets, Aggregate how, SearchReport& r) {
  const std::vector<std::string> names = {"kng", "lea", "fib", "s10", "exa"};
  std::vector<std::vector<Evaluation>> per(names.size(), std::vector<Evaluation>(sets.size()));
  for (std::size_t t = 0; t < sets.size(); ++t) {
    Evaluator& w = sets[t].whole_evaluator();
    per[0][t] = w.normalize(w.kingsley());
  }
  const std::size_t others = names.size() - 1;  // one thread each
  util::parallel_for(others * sets.size(), 0, [&](std::size_t job) {
    const std::size_t i = 1 + job % others, t = job / others;
    per[i][t] = sets[t].whole_evaluator().normalize(sim::simulate(sets[t].whole(), names[i]));
  });
  const bool multi = sets.size() > 1;
  r.columns = names;
  r.columns.push_back("found");
  for (auto& p : per) r.rows.push_back(multi ? aggregate(p, how) : p.front());
  r.rows.push_back(r.found_eval);
  for (std::size_t t = 0; t < sets.size(); ++t) {
    for (auto& p : per) r.traces[t].normalized.push_back(p[t]);
    r.traces[t].normalized.push_back(multi ? r.found_eval.per_trace.at(t) : r.found_eval);
  }
}

SearchTrace describe(const TraceSet& s) {
  SearchTrace t;
  t.path = s.path;
  t.operations = s.whole().operations.size();
  t.sampled = s.sampled.has_value();
  t.one_in = s.one_in;
  t.ranked_operations = s.ranked_on().operations.size();
  t.validated = s.validation.has_value();
  t.validate_one_in = s.validate_one_in;
  t.validation_operations = s.validation ? s.validation->operations.size() : s.whole().operations.size();
  t.prefix_operations = s.head ? s.head->operations.size() : 0;
  return t;
}

}  // namespace

SearchReport run(const SearchRequest& q) {
  const auto started = std::chrono::steady_clock::now();
  const Grammar grammar = Grammar::load(q.grammar);
  std::deque<TraceSet> sets = load_traces(q);
  const bool multi = sets.size() > 1;
  std::vector<std::uint64_t> sizes = multi ? union_of_sizes(sets) : std::vector<std::uint64_t>{};
  bool any_sampled = false;
  SearchReport r;
  for (TraceSet& s : sets) {
    make_evaluators(s, q, multi ? &sizes : nullptr);
    any_sampled |= s.sampled.has_value();
    r.any_validation |= s.validation.has_value();
  }
  if (!multi) sizes = sets.front().whole_evaluator().trace_sizes();
  Fitnesses fit(sets, q.aggregate);

  SearchOptions so;
  so.seed = q.seed;
  so.generations = q.generations;
  so.population = q.population;
  so.pareto = q.pareto;
  so.stop = q.stop;
  if (any_sampled) so.validator = fit.validating;
  IslandOptions io;
  io.islands = q.islands;
  io.migrate_every = q.migrate_every;
  io.migrants = q.migrants;
  io.share_among = q.share_among;
  io.threads = q.threads;
  io.checkpoint = q.checkpoint;
  io.checkpoint_every = q.checkpoint_every;
  io.settings = settings(q, sets);
  nlohmann::json resumed;
  if (!q.resume.empty()) {
    resumed = read_checkpoint(q.resume, util::read_file(q.resume, "checkpoint"), io.settings, q.generations);
    io.resume = &resumed;
    io.resume_path = q.resume;
  }
  io.progress = q.progress;
  // Every process loads its traces at once; the search's clock starts when
  // the last has (the load's time is reported apart).
  if (q.ring != nullptr && q.ring->size() > 1) q.ring->allgather("loaded");
  r.load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  r.result = run_islands(grammar, sizes, *fit.ranked, so, io, q.ring);
  r.root = q.ring == nullptr || q.ring->rank() == 0;
  if (!r.root) return r;  // rank 0 has every island's result, and reports
  if (!r.result.best.eval.valid) throw std::runtime_error("the search found no valid DMM (check the grammar)");

  r.found = *r.result.best.spec;
  r.found_eval = r.result.best.eval;
  if (r.any_validation) measure_finalists(q, r.result, *fit.whole, r);
  r.found.name = "found";
  // Exact classes are the trace's sizes: the file carries them, so that the
  // DMM run for real (TAILOR_DMM) has the classes the search measured.
  if (r.found.uses_exact_classes()) r.found.exact_sizes = sizes;
  r.sizes = sizes;
  if (q.pareto && !q.front_dir.empty()) r.front_files = write_front(q.front_dir, r.result.front, sizes);
  for (const TraceSet& s : sets) r.traces.push_back(describe(s));
  if (q.compare_builtins) compare_with_builtins(sets, q.aggregate, r);
  return r;
}

}  // namespace tailor::search
