// SPDX-License-Identifier: MIT
// The whole search (search.h): traces loaded and cut into tiers, the island
// model run, the finalists measured, the built-in DMMs compared.
#include "search/search.h"

#include <fmt/format.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <sys/resource.h>

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
  // Under MPI with the traces divided, a trace another rank holds has only
  // what every rank knows of it: these, and a placeholder fitness.
  bool held = true;
  std::uint64_t operations = 0;       // the whole trace's
  std::vector<std::uint64_t> sizes;   // its request sizes (sim::sizes_of; over several traces only)
  std::unique_ptr<Fitness> elsewhere;
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
  Fitness& ranked_fitness() { return held ? static_cast<Fitness&>(*ranked) : *elsewhere; }
  Fitness& validating_or_elsewhere() { return held ? validating_fitness() : *elsewhere; }
  Fitness& whole_or_elsewhere() { return held ? static_cast<Fitness&>(whole_evaluator()) : *elsewhere; }
  const sim::ReplayTrace& ranked_on() const { return sampled ? *sampled : whole(); }
};

void say(const SearchRequest& q, const std::string& line) {
  if (q.status) q.status(line);
}

// A trace another rank holds (traces divided among the ranks): its
// measures come from that rank (shared_evaluation.h), never from here.
class HeldElsewhere : public Fitness {
 public:
  HeldElsewhere(std::string path, int holder) : path_(std::move(path)), holder_(holder) {}
  std::vector<Evaluation> evaluate(const std::vector<const sim::DmmSpec*>&) override {
    throw std::logic_error(fmt::format("{} is held by rank {} of the group, not this one", path_, holder_));
  }
  std::uint64_t simulations() const noexcept override { return 0; }

 private:
  std::string path_;
  int holder_;
};

// How the traces are divided among the ranks of an MPI job: within each
// group of ranks that share evaluations (--share-among), each trace is held
// by one rank, the traces shared out by their events (the largest first,
// each to the rank with the fewest), so that a rank's memory holds its
// share of the traces and of the runs' caches: a rank's peak follows the
// operations it holds, the simulated heaps coming and going one at a time.
// Only with at least as many traces as ranks in the group, and not with
// --copy-traces.
struct Division {
  bool on = false;           // this process's group divides the traces
  bool in_job = false;       // some group does (the first): every rank then exchanges what it holds
  unsigned group_rank = 0, group_size = 1;
  bool first_group = true;   // ranks [0, group_size): they measure the found DMM for rank 0
  std::vector<int> holders;  // per trace: its holder's rank in the group
  bool holds(std::size_t t) const { return !on || holders[t] == static_cast<int>(group_rank); }
};

Division divide(const SearchRequest& q) {
  Division d;
  if (q.ring == nullptr || q.ring->size() < 2) return d;
  const unsigned size = q.ring->size(), rank = q.ring->rank(), among = std::max(1u, q.share_among);
  const unsigned first = rank / among * among;
  d.group_size = std::min(among, size - first);
  d.group_rank = rank - first;
  d.first_group = first == 0;
  if (q.copy_traces || !q.in_memory.empty() || q.traces.size() < std::min(among, size) || std::min(among, size) < 2)
    return d;
  d.in_job = true;
  if (d.group_size < 2) return d;  // a last group of one rank holds every trace
  std::vector<std::pair<std::uint64_t, std::size_t>> by_events;
  for (std::size_t t = 0; t < q.traces.size(); ++t) by_events.emplace_back(trace::Reader(q.traces[t]).event_count(), t);
  std::stable_sort(by_events.begin(), by_events.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::uint64_t> load(d.group_size, 0);
  d.holders.assign(q.traces.size(), 0);
  for (const auto& [events, t] : by_events) {
    const auto least = std::min_element(load.begin(), load.end()) - load.begin();
    d.holders[t] = static_cast<int>(least);
    load[static_cast<std::size_t>(least)] += events;
  }
  d.on = true;
  return d;
}

// Loads each trace this process holds and cuts it into its tiers.
std::deque<TraceSet> load_traces(const SearchRequest& q, const Division& d) {
  std::deque<TraceSet> sets;
  if (!q.in_memory.empty() && q.in_memory.size() != q.traces.size())
    throw std::invalid_argument("SearchRequest: one name in `traces` per trace in memory");
  for (std::size_t i = 0; i < q.traces.size(); ++i) {
    const std::string& path = q.traces[i];
    TraceSet& s = sets.emplace_back();
    s.path = path;
    if (!d.holds(i)) {
      s.held = false;
      s.elsewhere = std::make_unique<HeldElsewhere>(path, d.holders[i]);
      continue;
    }
    if (q.in_memory.empty()) {
      trace::Reader r(path);
      say(q, fmt::format("loading {} ({} events)...", path, r.event_count()));
      s.trace = &s.loaded.emplace(sim::load_replay(r));
      say(q, "");
    } else {
      s.trace = q.in_memory[i];
    }
    if (s.whole().operations.empty()) throw std::runtime_error(path + ": the trace has no allocation to search for");
    s.operations = s.whole().operations.size();
    if (q.traces.size() > 1) s.sizes = sim::sizes_of(s.whole());  // for the union (one trace: its evaluator's)
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
  for (const TraceSet& s : sets) sizes.insert(sizes.end(), s.sizes.begin(), s.sizes.end());
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
  if (q.pareto)
    for (Evaluator* e : {s.ranked.get(), s.validating.get(), s.validating_head.get(), s.measured.get()})
      if (e) e->bound_memory_for_front();
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
      r.push_back(&s.ranked_fitness());
      v.push_back(&s.validating_or_elsewhere());
      w.push_back(&s.whole_or_elsewhere());
    }
    ranked = &multi_ranked.emplace(r, how);
    validating = &multi_validating.emplace(v, how);
    whole = &multi_whole.emplace(w, how);
  }
};

// What a checkpoint records of the search, so that a resumed one is the same search.
nlohmann::json settings(const SearchRequest& q, const std::deque<TraceSet>& sets) {
  nlohmann::json trace_ids = nlohmann::json::array();
  for (const TraceSet& s : sets) trace_ids.push_back({{"path", s.path}, {"operations", s.operations}});
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
// still flatter a DMM) measured together on the whole traces (`evals`, in
// the finalists' order): the best there is the found DMM.
void pick_found(const SearchResult& res, const std::vector<Evaluation>& evals, SearchReport& r) {
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

const std::vector<std::string> kBuiltins = {"kng", "lea", "fib", "s10", "exa"};

// The five built-ins on every trace this process holds, simulated on
// `threads` threads (Kingsley's run is the evaluator's own; each simulation
// holds its trace's simulated heap, so more at once is more memory), each
// normalized to Kingsley on its trace: per[builtin][trace] (other traces'
// left alone).
void builtins_on(std::deque<TraceSet>& sets, unsigned threads, std::vector<std::vector<Evaluation>>& per) {
  per.resize(kBuiltins.size(), std::vector<Evaluation>(sets.size()));
  std::vector<std::size_t> held;
  for (std::size_t t = 0; t < sets.size(); ++t)
    if (sets[t].held) {
      held.push_back(t);
      Evaluator& w = sets[t].whole_evaluator();
      per[0][t] = w.normalize(w.kingsley());
    }
  const std::size_t others = kBuiltins.size() - 1;
  util::parallel_for(others * held.size(), std::max(1u, threads), [&](std::size_t job) {
    const std::size_t i = 1 + job % others, t = held[job / others];
    per[i][t] = sets[t].whole_evaluator().normalize(sim::simulate(sets[t].whole(), kBuiltins[i]));
  });
}

// The found DMM next to the five built-ins (per[builtin][trace]), over
// several traces aggregated.
void compare_with_builtins(std::vector<std::vector<Evaluation>> per, std::size_t traces, Aggregate how,
                           SearchReport& r) {
  const bool multi = traces > 1;
  r.columns = kBuiltins;
  r.columns.push_back("found");
  for (auto& p : per) r.rows.push_back(multi ? aggregate(p, how) : p.front());
  r.rows.push_back(r.found_eval);
  for (std::size_t t = 0; t < traces; ++t) {
    for (auto& p : per) r.traces[t].normalized.push_back(p[t]);
    r.traces[t].normalized.push_back(multi ? r.found_eval.per_trace.at(t) : r.found_eval);
  }
}

SearchTrace describe(const TraceSet& s) {
  SearchTrace t;
  t.path = s.path;
  t.operations = s.operations;
  t.sampled = s.sampled.has_value();
  t.one_in = s.one_in;
  t.ranked_operations = s.ranked_on().operations.size();
  t.validated = s.validation.has_value();
  t.validate_one_in = s.validate_one_in;
  t.validation_operations = s.validation ? s.validation->operations.size() : s.whole().operations.size();
  t.prefix_operations = s.head ? s.head->operations.size() : 0;
  return t;
}

nlohmann::json described_json(const SearchTrace& t) {
  return {{"path", t.path},
          {"operations", t.operations},
          {"sampled", t.sampled},
          {"one_in", t.one_in},
          {"ranked_operations", t.ranked_operations},
          {"validated", t.validated},
          {"validate_one_in", t.validate_one_in},
          {"validation_operations", t.validation_operations},
          {"prefix_operations", t.prefix_operations}};
}

SearchTrace described_from_json(const nlohmann::json& j) {
  SearchTrace t;
  t.path = j.at("path").get<std::string>();
  t.operations = j.at("operations").get<std::uint64_t>();
  t.sampled = j.at("sampled").get<bool>();
  t.one_in = j.at("one_in").get<std::uint32_t>();
  t.ranked_operations = j.at("ranked_operations").get<std::uint64_t>();
  t.validated = j.at("validated").get<bool>();
  t.validate_one_in = j.at("validate_one_in").get<std::uint32_t>();
  t.validation_operations = j.at("validation_operations").get<std::uint64_t>();
  t.prefix_operations = j.at("prefix_operations").get<std::uint64_t>();
  return t;
}

// Traces divided: what every rank needs of the traces others hold (their
// sizes, for <TRACE_SIZE> and exact classes; their operations, for the
// checkpoint's settings; how they were cut, for the report), from their holders.
void share_what_is_held(const SearchRequest& q, std::deque<TraceSet>& sets, std::vector<SearchTrace>& described) {
  nlohmann::json mine = nlohmann::json::array();
  for (std::size_t t = 0; t < sets.size(); ++t)
    if (sets[t].held) mine.push_back({{"trace", t}, {"sizes", sets[t].sizes}, {"described", described_json(described[t])}});
  std::vector<bool> known(sets.size(), false);
  for (std::size_t t = 0; t < sets.size(); ++t) known[t] = sets[t].held;
  for (const std::string& part : q.ring->allgather(mine.dump()))
    for (const auto& j : nlohmann::json::parse(part)) {
      const std::size_t t = j.at("trace").get<std::size_t>();
      if (t >= sets.size() || known[t]) continue;
      known[t] = true;
      sets[t].sizes = j.at("sizes").get<std::vector<std::uint64_t>>();
      described[t] = described_from_json(j.at("described"));
      sets[t].operations = described[t].operations;
    }
  for (std::size_t t = 0; t < sets.size(); ++t)
    if (!known[t]) throw std::logic_error(sets[t].path + ": no rank holds the trace");
}

// The report once the found DMM is known: its name and exact classes (the
// file carries the traces' sizes, so that the DMM run for real with
// TAILOR_DMM has the classes the search measured), the front's files, the
// traces, and the built-ins beside it (per[builtin][trace]).
void complete_report(const SearchRequest& q, std::vector<SearchTrace> described, const std::vector<std::uint64_t>& sizes,
                     std::vector<std::vector<Evaluation>> per, SearchReport& r) {
  r.found.name = "found";
  if (r.found.uses_exact_classes()) r.found.exact_sizes = sizes;
  r.sizes = sizes;
  if (q.pareto && !q.front_dir.empty()) r.front_files = write_front(q.front_dir, r.result.front, sizes);
  const std::size_t traces = described.size();
  r.traces = std::move(described);
  if (q.compare_builtins) compare_with_builtins(std::move(per), traces, q.aggregate, r);
}

// Traces divided: the finalists (rank 0's) measured on the whole traces
// and the built-ins simulated, each trace by its holder in the first group,
// gathered to rank 0, which finishes the report.
void finish_divided(const SearchRequest& q, const Division& d, std::deque<TraceSet>& sets,
                    std::vector<SearchTrace> described, const std::vector<std::uint64_t>& sizes, SearchReport& r) {
  nlohmann::json finalists_json = nlohmann::json::array();
  if (r.root && r.any_validation)
    for (const Individual& f : r.result.finalists) finalists_json.push_back(sim::to_json(*f.spec));
  const std::string sent = q.ring->allgather(r.root ? finalists_json.dump() : std::string()).at(0);
  std::vector<sim::DmmSpec> finalists;
  for (const auto& j : nlohmann::json::parse(sent)) finalists.push_back(sim::parse_dmm_spec(j, "a finalist"));
  std::vector<const sim::DmmSpec*> specs;
  for (const sim::DmmSpec& f : finalists) specs.push_back(&f);

  nlohmann::json mine = nlohmann::json::object();
  if (d.first_group) {
    if (!specs.empty()) say(q, fmt::format("measuring the {} finalists on the whole traces...", specs.size()));
    std::vector<std::vector<Evaluation>> per;
    if (q.compare_builtins) builtins_on(sets, q.threads, per);
    for (std::size_t t = 0; t < sets.size(); ++t) {
      if (!sets[t].held) continue;
      nlohmann::json measured = nlohmann::json::array(), builtins = nlohmann::json::array();
      if (!specs.empty())
        for (const Evaluation& e : sets[t].whole_evaluator().evaluate(specs)) measured.push_back(evaluation_to_json(e));
      for (auto& p : per) builtins.push_back(evaluation_to_json(p[t]));
      mine[std::to_string(t)] = {{"finalists", measured}, {"builtins", builtins}};
    }
    say(q, "");
  }
  const std::vector<std::string> parts = q.ring->gather(mine.dump());
  if (!r.root) return;
  nlohmann::json by_trace = nlohmann::json::object();
  for (const std::string& part : parts) by_trace.update(nlohmann::json::parse(part));
  std::vector<std::vector<Evaluation>> finalist_per_trace(specs.size());
  std::vector<std::vector<Evaluation>> per(kBuiltins.size());
  for (std::size_t t = 0; t < sets.size(); ++t) {
    const nlohmann::json& j = by_trace.at(std::to_string(t));
    for (std::size_t i = 0; i < specs.size(); ++i)
      finalist_per_trace[i].push_back(evaluation_from_json(j.at("finalists").at(i)));
    if (q.compare_builtins)
      for (std::size_t b = 0; b < kBuiltins.size(); ++b) per[b].push_back(evaluation_from_json(j.at("builtins").at(b)));
  }
  r.found = *r.result.best.spec;
  r.found_eval = r.result.best.eval;
  if (r.any_validation) {
    std::vector<Evaluation> evals;
    for (auto& p : finalist_per_trace) evals.push_back(aggregate(std::move(p), q.aggregate));
    pick_found(r.result, evals, r);
  }
  complete_report(q, std::move(described), sizes, std::move(per), r);
}

// Rank 0's end of a search whose traces it all holds: the finalists
// measured on the whole traces, the found DMM, the built-ins beside it.
void finish_here(const SearchRequest& q, std::deque<TraceSet>& sets, const Fitnesses& fit,
                 std::vector<SearchTrace> described, const std::vector<std::uint64_t>& sizes, SearchReport& r) {
  r.found = *r.result.best.spec;
  r.found_eval = r.result.best.eval;
  if (r.any_validation) {
    say(q, fmt::format("measuring the {} finalists on the whole trace...", r.result.finalists.size()));
    std::vector<const sim::DmmSpec*> specs;
    for (const Individual& f : r.result.finalists) specs.push_back(&*f.spec);
    const std::vector<Evaluation> evals = fit.whole->evaluate(specs);
    say(q, "");
    pick_found(r.result, evals, r);
  }
  std::vector<std::vector<Evaluation>> per;
  if (q.compare_builtins) builtins_on(sets, q.threads, per);
  complete_report(q, std::move(described), sizes, std::move(per), r);
}

// Every rank's peak resident set and the traces it held, gathered to rank 0
// (every rank calls it, at its end).
void report_ranks(Ring& ring, const std::deque<TraceSet>& sets, SearchReport& r) {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  std::vector<std::size_t> held;
  for (std::size_t t = 0; t < sets.size(); ++t)
    if (sets[t].held) held.push_back(t);
  const nlohmann::json mine = {{"peak_rss_bytes", static_cast<std::uint64_t>(ru.ru_maxrss) * 1024}, {"traces", held}};
  const std::vector<std::string> parts = ring.gather(mine.dump());
  for (unsigned rank = 0; rank < parts.size(); ++rank) {
    const nlohmann::json j = nlohmann::json::parse(parts[rank]);
    r.ranks.push_back({rank, j.at("peak_rss_bytes").get<std::uint64_t>(), j.at("traces").get<std::vector<std::size_t>>()});
  }
}

}  // namespace

SearchReport run(const SearchRequest& q) {
  const auto started = std::chrono::steady_clock::now();
  const Grammar grammar = Grammar::load(q.grammar);
  const Division d = divide(q);
  std::deque<TraceSet> sets = load_traces(q, d);
  const bool multi = sets.size() > 1;
  std::vector<SearchTrace> described(sets.size());
  for (std::size_t t = 0; t < sets.size(); ++t)
    if (sets[t].held) described[t] = describe(sets[t]);
  if (d.in_job) share_what_is_held(q, sets, described);
  std::vector<std::uint64_t> sizes = multi ? union_of_sizes(sets) : std::vector<std::uint64_t>{};
  bool any_sampled = false;
  SearchReport r;
  for (std::size_t t = 0; t < sets.size(); ++t) {
    if (sets[t].held) make_evaluators(sets[t], q, multi ? &sizes : nullptr);
    any_sampled |= described[t].sampled;
    r.any_validation |= described[t].validated;
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
  if (d.on) io.trace_holders = d.holders;
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
  if (r.root && !r.result.best.eval.valid)
    throw std::runtime_error(
        "the search found no valid DMM: every candidate either cannot serve the trace (check the grammar) or was "
        "abandoned as worse than Kingsley, past (sum of weights / weight) x its steps or memory (docs/search.md)");
  if (d.in_job) finish_divided(q, d, sets, std::move(described), sizes, r);
  else if (r.root) finish_here(q, sets, fit, std::move(described), sizes, r);  // rank 0 has every island's result
  if (q.ring != nullptr && q.ring->size() > 1) report_ranks(*q.ring, sets, r);
  return r;
}

}  // namespace tailor::search
