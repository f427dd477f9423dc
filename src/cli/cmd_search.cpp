// SPDX-License-Identifier: MIT
// `tailor search TRACE... [-o best.json] [--seed S] [--generations G]
// [--population P] [--threads N] [--weights ...] [--pareto [--front-dir D]]
// [--grammar F] [--sample OPS] [--validate-sample OPS] [--aggregate mean|worst] [--islands N
// --migrate-every G --migrants K --share-among R] [--checkpoint F --checkpoint-every G]
// [--resume F]`:
// grammatical evolution of a custom DMM for one trace or a set of traces
// (src/search), with a live progress line, then the DMM simulator paper's Table 3 (the
// found DMM against KNG, LEA, FIB, S10 and EXA, as improvements over
// Kingsley) and Table 4 (the found DMM, allocator by allocator). The written
// spec loads in `tailor simulate`. Under mpirun (a build with TAILOR_MPI)
// the islands are spread over the ranks, which share their evaluations out,
// and rank 0 prints and writes.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <thread>

#include "commands.h"
#include "validation.h"
#include "evolution.h"
#include "islands.h"
#if TAILOR_MPI
#include "mpi_job.h"
#endif
#include "layout.h"
#include "replay_sample.h"
#include "simulator.h"
#include "trace_sizes.h"
#include "tailor/trace/reader.h"

namespace tailor::cli {

namespace {

namespace fs = std::filesystem;
namespace sim = tailor::simulate;
namespace srch = tailor::search;

struct SearchCmdOptions {
  std::vector<std::string> traces;
  std::string output;
  std::string grammar;
  std::string weights = "time=1,memory=1,energy=1";
  std::uint64_t seed = 1;
  unsigned generations = 100;
  unsigned population = 60;
  unsigned threads = 0;
  std::uint64_t sample = 500000;  // at most this many operations in the evolution's sample (0: the whole trace)
  std::uint64_t validate_sample = 5000000;  // ... in the sample candidates for the best are measured on (0: the whole trace)
  std::string front_dir;  // --pareto: write the front's DMMs there as specs
  bool pareto = false;
  bool json = false;
  std::string aggregate = "mean";  // over several traces
  unsigned islands = 0;            // 0: one per MPI rank, or 1
  unsigned migrate_every = 10;
  unsigned migrants = 2;
  unsigned share_among = 16;
  std::string checkpoint;
  unsigned checkpoint_every = 0;
  std::string time_model;  // "": the default (deploy::default_time_model); "steps": none
  std::string resume;
};

// Set by mpirun (Open MPI; PMIx or PMI for other launchers): the process is
// one rank of a job. MPI is initialized only then, so that `tailor` started
// by hand never pays for it.
unsigned mpirun_world_size() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE"})
    if (const char* v = std::getenv(var)) return static_cast<unsigned>(std::max(1L, std::strtol(v, nullptr, 10)));
  return 0;
}

// Ranks of this job on this machine (cores are shared out among them).
unsigned local_ranks() {
  if (const char* v = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE")) return static_cast<unsigned>(std::max(1L, std::strtol(v, nullptr, 10)));
  return 1;
}

// FNV-1a of the grammar's text: a checkpoint resumes only on the grammar it was made with.
std::string grammar_digest(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text.str()) h = (h ^ c) * 0x100000001b3ULL;
  return fmt::format("{:016x}", h);
}

std::string read_file(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot read the " + what + ": " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
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
  sim::ReplayTrace whole;
  std::uint32_t one_in = 1, validate_one_in = 1;   // objects kept: one in k
  std::optional<sim::ReplayTrace> sampled, validation, head;  // head: the prefix
  std::unique_ptr<srch::Evaluator> ranked, measured;  // measured: null when not sampled
  std::unique_ptr<srch::Evaluator> validating, validating_head;
  std::unique_ptr<srch::MultiEvaluator> validating_worst;  // the worse of the two
  srch::Evaluator& whole_evaluator() { return measured ? *measured : *ranked; }
  srch::Fitness& validating_fitness() {
    return validating_worst ? static_cast<srch::Fitness&>(*validating_worst) : whole_evaluator();
  }
  const sim::ReplayTrace& ranked_on() const { return sampled ? *sampled : whole; }
};

// Writes the Pareto front as specs front-00.json, front-01.json, ... in
// `dir` (created if missing); returns their paths, in the front's order.
std::vector<std::string> write_front(const std::string& dir, const std::vector<srch::Individual>& front,
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

std::string percent(double ratio) {  // improvement over Kingsley of a value normalized to it
  return std::isfinite(ratio) ? fmt::format("{:+.1f}%", 100.0 * (1.0 - ratio)) : std::string("-");
}

std::string describe(const sim::AllocatorSpec& a) {
  const std::string range = fmt::format("({}, {}]", a.min, a.max ? std::to_string(*a.max) : std::string("inf"));
  std::string s = fmt::format("{:<24} {:<26} split={} coalesce={}", range, sim::to_string(a.mechanism),
                              a.split ? "yes" : "no", a.coalesce ? "yes" : "no");
  const bool buddy = a.mechanism == sim::Mechanism::kBinaryBuddy || a.mechanism == sim::Mechanism::kFibonacciBuddy;
  if (!buddy) {
    const char* classes[] = {"single", "powers_of_two", "exact", "bounds"};
    s += fmt::format("  {} {} ({}) classes={}", sim::to_string(a.structure), sim::to_string(a.fit),
                     sim::to_string(a.policy), classes[static_cast<int>(a.classes.kind)]);
  }
  if (a.alignment != 16) s += fmt::format("  align={}", a.alignment);
  s += fmt::format("  chunk={}{}", a.chunk, a.returns ? " returns" : "");
  return s;
}

int search_run(const SearchCmdOptions& o, srch::Ring* ring) {
  const srch::Weights weights = srch::parse_weights(o.weights);
  const srch::Aggregate how = srch::parse_aggregate(o.aggregate);
  const std::string grammar_path = o.grammar.empty() ? default_grammar() : o.grammar;
  const srch::Grammar grammar = srch::Grammar::load(grammar_path);
  const unsigned rank = ring ? ring->rank() : 0, ranks = ring ? ring->size() : 1;
  const bool root = rank == 0;
  const unsigned islands = o.islands ? o.islands : ranks;

  const bool tty = root && isatty(STDERR_FILENO) == 1;
  // Time as the machine's time model predicts it, else steps (docs/search.md).
  std::optional<sim::TimeModel> model;
  if (o.time_model != "steps") {
    std::string why;
    model = o.time_model.empty() ? deploy::default_time_model(why) : sim::load_time_model(o.time_model, why);
    if (!model && !o.time_model.empty()) throw std::runtime_error("--time-model " + why);
    if (!why.empty() && root) fmt::print(stderr, "tailor: {}; time is ranked by steps\n", why);
  }
  const sim::TimeModel* time_model = model ? &*model : nullptr;
  std::deque<TraceSet> sets;
  for (const std::string& path : o.traces) {
    TraceSet& s = sets.emplace_back();
    s.path = path;
    trace::Reader r(path);
    if (tty) fmt::print(stderr, "loading {} ({} events)...", path, r.event_count());
    s.whole = sim::load_replay(r);
    if (tty) fmt::print(stderr, "\r\033[K");
    if (s.whole.operations.empty()) throw std::runtime_error(path + ": the trace has no allocation to search for");
    // The evolution ranks candidates on one object in k when the trace is larger
    // than --sample; candidates for the best are measured on a larger sample
    // (SearchOptions::validator) when the trace is larger than
    // --validate-sample, and the found DMM on the whole trace, so what is
    // reported is the whole trace's.
    s.one_in = o.sample ? sim::sampling_rate(s.whole, o.sample) : 1;
    if (s.one_in > 1) {
      s.sampled = sim::sample_objects(s.whole, s.one_in);
      // Half the validation operations in an object sample, half in the prefix.
      const std::uint64_t half = o.validate_sample / 2;
      const std::uint32_t k = half ? sim::sampling_rate(s.whole, half) : 1;
      if (k > 1 && k < s.one_in && s.whole.operations.size() > o.validate_sample) {
        s.validate_one_in = k;
        s.validation = sim::sample_objects(s.whole, k);
        s.head = sim::prefix(s.whole, half);
      }
    }
  }
  // Default threads: the cores, shared out among the ranks on this machine.
  const unsigned threads =
      o.threads ? o.threads : std::max(1u, std::max(1u, std::thread::hardware_concurrency()) / local_ranks());
  const bool multi = sets.size() > 1;
  // <TRACE_SIZE> and exact classes: the trace's sizes, or over several traces their union.
  std::vector<std::uint64_t> sizes;
  if (multi) {
    for (const TraceSet& s : sets) {
      const std::vector<std::uint64_t> own = sim::sizes_of(s.whole);
      sizes.insert(sizes.end(), own.begin(), own.end());
    }
    std::sort(sizes.begin(), sizes.end());
    sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  }
  const std::vector<std::uint64_t>* exact = multi ? &sizes : nullptr;
  bool any_sampled = false, any_validation = false;
  for (TraceSet& s : sets) {
    s.ranked = std::make_unique<srch::Evaluator>(s.ranked_on(), weights, threads, exact, time_model);
    if (s.validation) {
      s.validating = std::make_unique<srch::Evaluator>(*s.validation, weights, threads, exact, time_model);
      s.validating_head = std::make_unique<srch::Evaluator>(*s.head, weights, threads, exact, time_model);
      s.validating_worst = std::make_unique<srch::MultiEvaluator>(
          std::vector<srch::Fitness*>{s.validating.get(), s.validating_head.get()}, srch::Aggregate::kWorst);
    }
    if (s.sampled) s.measured = std::make_unique<srch::Evaluator>(s.whole, weights, threads, exact, time_model);
    any_sampled |= s.sampled.has_value();
    any_validation |= s.validation.has_value();
  }
  if (!multi) sizes = sets.front().whole_evaluator().trace_sizes();

  std::vector<srch::Fitness*> ranked_list, validating_list, whole_list;
  for (TraceSet& s : sets) {
    ranked_list.push_back(s.ranked.get());
    validating_list.push_back(&s.validating_fitness());
    whole_list.push_back(&s.whole_evaluator());
  }
  std::optional<srch::MultiEvaluator> multi_ranked, multi_validating, multi_whole;
  if (multi) {
    multi_ranked.emplace(ranked_list, how);
    multi_validating.emplace(validating_list, how);
    multi_whole.emplace(whole_list, how);
  }
  srch::Fitness& ranked = multi ? static_cast<srch::Fitness&>(*multi_ranked) : *sets.front().ranked;
  srch::Fitness& validating =
      multi ? static_cast<srch::Fitness&>(*multi_validating) : sets.front().validating_fitness();
  srch::Fitness& whole = multi ? static_cast<srch::Fitness&>(*multi_whole) : sets.front().whole_evaluator();

  srch::SearchOptions so;
  so.seed = o.seed;
  so.generations = o.generations;
  so.population = o.population;
  so.pareto = o.pareto;
  if (any_sampled) so.validator = &validating;

  srch::IslandOptions io;
  io.islands = islands;
  io.migrate_every = o.migrate_every;
  io.migrants = o.migrants;
  io.share_among = o.share_among;
  io.checkpoint = o.checkpoint;
  io.checkpoint_every = o.checkpoint_every;
  nlohmann::json trace_ids = nlohmann::json::array();
  for (const TraceSet& s : sets) trace_ids.push_back({{"path", s.path}, {"operations", s.whole.operations.size()}});
  io.settings = {{"traces", trace_ids},
                 {"aggregate", multi ? o.aggregate : std::string("mean")},
                 {"grammar", grammar_digest(grammar_path)},
                 {"seed", o.seed},
                 {"population", o.population},
                 {"weights", {{"time", weights.time}, {"memory", weights.memory}, {"energy", weights.energy}}},
                 {"pareto", o.pareto},
                 {"sample", o.sample},
                 {"validate_sample", o.validate_sample},
                 {"islands", islands},
                 {"migrate_every", o.migrate_every},
                 {"migrants", o.migrants},
                 {"time", model ? sim::to_json_text(*model) : std::string("steps")}};
  nlohmann::json resumed;
  if (!o.resume.empty()) {
    resumed = srch::read_checkpoint(o.resume, read_file(o.resume, "checkpoint"), io.settings, o.generations);
    io.resume = &resumed;
    io.resume_path = o.resume;
  }
  io.progress = [&](unsigned gen, double best, double rate) {
    const std::string line = fmt::format("generation {}/{}  best fitness {:.4f}  {:.1f} evaluations/s{}", gen,
                                         o.generations, best, rate, ranks > 1 && islands >= ranks ? " (rank 0's islands)" : "");
    if (tty)
      fmt::print(stderr, "\r\033[K{}", line);
    else if (gen % 10 == 0 || gen == o.generations)
      fmt::print(stderr, "{}\n", line);
  };
  const srch::SearchResult res = srch::run_islands(grammar, sizes, ranked, so, io, ring);
  if (tty) fmt::print(stderr, "\r\033[K");
  if (!root) return 0;  // rank 0 has every island's result, and reports
  if (!res.best.eval.valid) throw std::runtime_error("the search found no valid DMM (check the grammar)");

  sim::DmmSpec best = *res.best.spec;
  // The found DMM's measure is the whole trace's. When candidates were
  // measured on a validation sample, which can still flatter a DMM, the finalists (the best few measured
  // on the validation sample) are measured together, and the best on the
  // whole trace is the found DMM.
  srch::Evaluation found = res.best.eval;
  if (any_validation) {
    if (tty) fmt::print(stderr, "measuring the {} finalists on the whole trace...", res.finalists.size());
    std::vector<const sim::DmmSpec*> specs;
    for (const srch::Individual& f : res.finalists) specs.push_back(&*f.spec);
    const std::vector<srch::Evaluation> evals = whole.evaluate(specs);
    if (tty) fmt::print(stderr, "\r\033[K");
    found = {};
    for (std::size_t i = 0; i < evals.size(); ++i)
      if (evals[i].valid && (!found.valid || evals[i].fitness < found.fitness)) {
        found = evals[i];
        best = *res.finalists[i].spec;
      }
    if (!found.valid)
      throw std::runtime_error(
          "no finalist could be measured on the whole trace (a request none of its allocators serves, or far "
          "more steps than Kingsley's); search again with --validate-sample 0 to measure candidates on the whole trace");
  }
  best.name = "found";
  // Exact classes are the trace's sizes: the file carries them, so that the
  // DMM run for real (TAILOR_DMM) has the classes the search measured.
  if (best.uses_exact_classes()) best.exact_sizes = sizes;
  if (!o.output.empty()) {
    std::ofstream out(o.output);
    out << sim::to_json(best).dump(2) << "\n";
    if (!out) throw std::runtime_error(o.output + ": cannot write the DMM spec");
  }
  const std::vector<std::string> front_files =
      o.pareto && !o.front_dir.empty() ? write_front(o.front_dir, res.front, sizes) : std::vector<std::string>{};

  // Table 3: the found DMM next to the five built-ins, simulated in parallel
  // on every trace (Kingsley's run is the evaluator's own), each normalized
  // to Kingsley on its trace and, over several traces, aggregated.
  const std::vector<std::string> names = {"kng", "lea", "fib", "s10", "exa"};
  std::vector<std::vector<srch::Evaluation>> per(names.size(), std::vector<srch::Evaluation>(sets.size()));
  {
    std::vector<std::thread> pool;
    for (std::size_t t = 0; t < sets.size(); ++t) {
      srch::Evaluator& w = sets[t].whole_evaluator();
      per[0][t] = w.normalize(w.kingsley());
      for (std::size_t i = 1; i < names.size(); ++i)
        pool.emplace_back([&, i, t] { per[i][t] = sets[t].whole_evaluator().normalize(sim::simulate(sets[t].whole, names[i])); });
    }
    for (auto& th : pool) th.join();
  }
  std::vector<srch::Evaluation> rows;
  for (auto& p : per) rows.push_back(multi ? srch::aggregate(p, how) : p.front());
  std::vector<std::string> columns = names;
  columns.push_back("found");
  rows.push_back(found);

  auto table_json = [&](const std::vector<srch::Evaluation>& evals) {
    nlohmann::json table = nlohmann::json::array();
    for (std::size_t i = 0; i < evals.size(); ++i) {
      table.push_back({{"dmm", columns[i]},
                       {"fitness", evals[i].fitness},
                       {"time", evals[i].time},
                       {"memory", evals[i].memory},
                       {"energy", evals[i].energy}});
      if (!multi)
        table.back().update({{"steps", evals[i].metrics.steps},
                             {"memory_usage_bytes", evals[i].metrics.memory_usage},
                             {"energy_nj", evals[i].metrics.energy_nj}});
    }
    return table;
  };
  // Over several traces: each trace's row of every DMM.
  auto trace_rows = [&](std::size_t t) {
    std::vector<srch::Evaluation> r;
    for (auto& p : per) r.push_back(p[t]);
    r.push_back(found.per_trace.at(t));
    return r;
  };

  if (o.json) {
    nlohmann::json front = nlohmann::json::array();
    for (std::size_t i = 0; i < res.front.size(); ++i) {
      const srch::Individual& ind = res.front[i];
      front.push_back({{"time", ind.eval.time}, {"memory", ind.eval.memory}, {"energy", ind.eval.energy},
                       {"spec", sim::to_json(*ind.spec)}});
      if (!front_files.empty()) front.back()["file"] = front_files[i];
    }
    auto validation_json = [](const TraceSet& s) {
      return nlohmann::json{{"one_in", s.validate_one_in},
                            {"operations", s.validation ? s.validation->operations.size() : s.whole.operations.size()},
                            {"prefix_operations", s.head ? s.head->operations.size() : 0}};
    };
    nlohmann::json j;
    if (multi) {
      nlohmann::json traces = nlohmann::json::array();
      for (std::size_t t = 0; t < sets.size(); ++t)
        traces.push_back({{"trace", sets[t].path},
                          {"sample", {{"one_in", sets[t].one_in}, {"operations", sets[t].ranked_on().operations.size()}}},
                          {"validation_sample", validation_json(sets[t])},
                          {"normalized_to_kng", table_json(trace_rows(t))}});
      j = {{"traces", traces}, {"aggregate", o.aggregate}};
    } else {
      j = {{"trace", sets.front().path}};
    }
    j.update({{"seed", o.seed},
              {"generations", o.generations},
              {"population", o.population},
              {"weights", {{"time", weights.time}, {"memory", weights.memory}, {"energy", weights.energy}}},
              {"evaluations", res.evaluations},
              {"allocator_simulations", res.simulations},
              {"seconds", res.seconds}});
    if (!multi) {
      j["sample"] = {{"one_in", sets.front().one_in}, {"operations", sets.front().ranked_on().operations.size()}};
      j["validation_sample"] = validation_json(sets.front());
    }
    if (islands > 1) {
      j["islands"] = {{"islands", islands}, {"migrate_every", o.migrate_every}, {"migrants", o.migrants}};
      j["migration_seconds"] = res.migration_seconds;  // rank 0's
    }
    if (ranks > 1) {  // however many islands
      const srch::SharingCosts& c = res.sharing;  // rank 0's
      j["sharing"] = {{"rounds", c.rounds},         {"measured", c.measured},      {"bytes_sent", c.bytes},
                      {"waiting_seconds", c.waiting}, {"exchange_seconds", c.exchanging},
                      {"measuring_seconds", c.measuring}, {"bookkeeping_seconds", c.bookkeeping}};
    }
    if (!o.checkpoint.empty()) {
      j["checkpoint_seconds"] = res.checkpoint_seconds;
      j["checkpoint_bytes"] = res.checkpoint_bytes;
    }
    j.update({{"validations", res.validations}, {"normalized_to_kng", table_json(rows)}, {"found", sim::to_json(best)}});
    if (o.pareto) j["pareto_front"] = front;
    fmt::print("{}\n", j.dump(2));
    return 0;
  }

  fmt::print("search      {} generations x {} individuals, seed {}, weights time={} memory={} energy={}\n",
             o.generations, o.population, o.seed, weights.time, weights.memory, weights.energy);
  if (multi)
    fmt::print("traces      {} traces, each normalized to Kingsley on its own; the {} of them ranks a DMM\n",
               sets.size(), how == srch::Aggregate::kMean ? "mean" : "worst");
  if (islands > 1)
    fmt::print("islands     {} islands of about {} individuals, the best {} of each to the next every {} generations\n",
               islands, o.population / islands, o.migrants, o.migrate_every);
  fmt::print("evaluated   {} individuals, {} allocators simulated on their share of the trace, {:.1f} s\n",
             res.evaluations, res.simulations, res.seconds);
  for (const TraceSet& s : sets) {
    if (!s.sampled) continue;
    const std::string where =
        s.validation ? fmt::format("1 object in {} ({} operations) and the first {} operations (the worse of the two), "
                                   "{} finalists on the whole trace",
                                   s.validate_one_in, s.validation->operations.size(), s.head->operations.size(),
                                   res.finalists.size())
                     : std::string("the whole trace");
    fmt::print("sampled     {}ranked on 1 object in {} ({} of {} operations); {} candidates for the best measured on "
               "{}\n",
               multi ? s.path + ": " : std::string(), s.one_in, s.sampled->operations.size(), s.whole.operations.size(),
               res.validations, where);
  }
  fmt::print("\n");
  fmt::print("Improvement over Kingsley (the DMM simulator paper's Table 3; higher is better){}\n",
             multi ? fmt::format(", {} over the {} traces", how == srch::Aggregate::kMean ? "mean" : "worst", sets.size())
                   : std::string());
  fmt::print("{:<20}", "");
  for (const auto& c : columns) fmt::print(" {:>9}", c);
  fmt::print("\n");
  auto row = [&](const std::string& label, const std::vector<srch::Evaluation>& evals, auto get) {
    fmt::print("{:<20}", label);
    for (const auto& e : evals) fmt::print(" {:>9}", percent(get(e)));
    fmt::print("\n");
  };
  row("global fitness", rows, [](const srch::Evaluation& e) { return e.fitness; });
  row("performance", rows, [](const srch::Evaluation& e) { return e.time; });
  row("memory usage", rows, [](const srch::Evaluation& e) { return e.memory; });
  row("energy", rows, [](const srch::Evaluation& e) { return e.energy; });
  if (multi) {
    fmt::print("\nGlobal fitness per trace (improvement over Kingsley on that trace)\n");
    for (std::size_t t = 0; t < sets.size(); ++t) {
      std::string label = fs::path(sets[t].path).filename().string();
      if (label.size() > 19) label = label.substr(0, 18) + "~";
      row(label, trace_rows(t), [](const srch::Evaluation& e) { return e.fitness; });
    }
  }

  fmt::print("\nThe found DMM (the DMM simulator paper's Table 4): {} allocator(s)\n", best.allocators.size());
  for (const auto& a : best.allocators) fmt::print("  {}\n", describe(a));
  if (o.pareto) {
    fmt::print("\nPareto front ({} DMMs; time, memory, energy normalized to Kingsley, lower is better{})\n",
               res.front.size(), any_validation ? "; measured on the validation sample" : "");
    for (std::size_t i = 0; i < res.front.size(); ++i) {
      const srch::Individual& ind = res.front[i];
      fmt::print("  time {:.3f}  memory {:.3f}  energy {:.3f}  {} allocator(s){}\n", ind.eval.time, ind.eval.memory,
                 ind.eval.energy, ind.spec->allocators.size(), front_files.empty() ? "" : "  " + front_files[i]);
    }
  }
  if (!o.output.empty())
    fmt::print("\nwritten     {} (tailor simulate {} --dmm {})\n", o.output, sets.front().path, o.output);
  return 0;
}

int search_cmd(const SearchCmdOptions& o) {
  // Under mpirun: one rank of the job; the islands are spread over the ranks.
  const unsigned world = mpirun_world_size();
#if TAILOR_MPI
  if (world > 0) {
    const std::unique_ptr<srch::mpi::Job> job = srch::mpi::open_job(layout::find(layout::Item::kMpiPlugin).string());
    try {
      return search_run(o, &job->world());
    } catch (const std::exception& e) {
      job->abort(e.what());  // the other ranks may wait for this one: end the job
    }
  }
#else
  if (world > 1)
    throw std::runtime_error(fmt::format(
        "this tailor was built without MPI (TAILOR_MPI off or libopenmpi-dev missing), so its {} ranks would each "
        "run the whole search alone; run it without mpirun (--islands N runs N islands in one process, with the "
        "same result) or rebuild with MPI (docs/search.md)",
        world));
#endif
  return search_run(o, nullptr);
}

}  // namespace

// The grammar shipped with tailor: DATADIR/search/dmm.bnf (layout.h).
std::string default_grammar() { return layout::data_file("search/dmm.bnf").string(); }

void add_search(CLI::App& app, Runner& run) {
  auto [cmd, o] = add_command<SearchCmdOptions>(
      app, run, "search", "Search the DMM design space for the best custom DMM of a trace", search_cmd);
  cmd->add_option("traces", o->traces, "Trace file(s): one DMM for all of them")->required();
  cmd->add_option("-o,--output", o->output, "Write the found DMM as a spec (loads in tailor simulate)");
  cmd->add_option("--seed", o->seed, "Random seed (same seed, same result)")->capture_default_str();
  cmd->add_option("--generations", o->generations, "Generations")->capture_default_str()->check(CLI::Range(0u, 100000u));
  cmd->add_option("--population", o->population, "Individuals per generation")
      ->capture_default_str()
      ->check(CLI::Range(2u, 100000u));
  cmd->add_option("--threads", o->threads, "Simulations at once (default: one per core)");
  cmd->add_option("--weights", o->weights, "Weights of the fitness's objectives, normalized to Kingsley")
      ->capture_default_str();
  cmd->add_option("--time-model", o->time_model,
                  "The time a DMM is ranked by: the time model's prediction of its real time (default: "
                  "TAILOR_TIME_MODEL, else share/tailor/time-model.json, else steps), or 'steps'");
  cmd->add_option("--sample", o->sample,
                  "Rank candidates on one object in k, k chosen to leave at most this many operations; a candidate "
                  "for the best is measured on the validation sample (0: rank on the whole trace)")
      ->capture_default_str();
  cmd->add_option("--validate-sample", o->validate_sample,
                  "Measure candidates for the best on one object in k, k chosen to leave at most this many "
                  "operations, and the found DMM on the whole trace at the end (0, or not above --sample: measure "
                  "candidates on the whole trace)")
      ->capture_default_str();
  CLI::Option* pareto =
      cmd->add_flag("--pareto", o->pareto, "Pareto mode (non-dominated sorting with crowding distance); prints the front");
  cmd->add_option("--front-dir", o->front_dir,
                  "With --pareto: write each DMM of the front as a spec, DIR/front-00.json ... (loads in tailor "
                  "simulate)")
      ->needs(pareto);
  cmd->add_option("--grammar", o->grammar, "BNF grammar of the design space (default: share/search/dmm.bnf)");
  cmd->add_flag("--json", o->json, "Machine-readable output");
  cmd->add_option("--aggregate", o->aggregate,
                  "Over several traces, each normalized to Kingsley on its own: rank DMMs by the mean or the worst")
      ->capture_default_str()
      ->check(CLI::IsMember({"mean", "worst"}));
  cmd->add_option("--islands", o->islands,
                  std::string("Island model: N populations sharing --population, run in this process or spread over "
                              "the ranks of mpirun, which share the evaluations out (default: one per rank; fewer than the ranks: every "
                              "rank runs them all, so --islands 1 is the one-process search on several ranks; this build ") +
                      (TAILOR_MPI ? "has MPI)" : "has no MPI: islands run in one process)"))
      ->check(CLI::Range(1u, 100000u));
  cmd->add_option("--migrate-every", o->migrate_every, "Generations between migrations (0: never)")->capture_default_str();
  cmd->add_option("--share-among", o->share_among,
                  "Under mpirun: groups of this many consecutive ranks share their islands' evaluations out (every "
                  "rank of a group reads the others' requests, so the cost grows with the group; results do not "
                  "depend on it)")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1000000u));
  cmd->add_option("--migrants", o->migrants, "Best individuals each island sends to the next of the ring")
      ->capture_default_str();
  CLI::Option* ckpt = cmd->add_option("--checkpoint", o->checkpoint,
                                      "Write every island's state to FILE (replaced atomically) every --checkpoint-every generations");
  cmd->add_option("--checkpoint-every", o->checkpoint_every, "Generations between checkpoints")->needs(ckpt);
  cmd->add_option("--resume", o->resume,
                  "Continue the search saved in FILE (same traces and settings; the result is the uninterrupted one's)");
}

}  // namespace tailor::cli
