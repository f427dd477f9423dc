// SPDX-License-Identifier: MIT
// `tailor search TRACE [-o best.json] [--seed S] [--generations G]
// [--population P] [--threads N] [--weights ...] [--pareto [--front-dir D]]
// [--grammar F] [--sample OPS]`:
// grammatical evolution of a custom DMM for one trace (src/search), with a
// live progress line, then seed 002's Table 3 (the found DMM against KNG,
// LEA, FIB, S10 and EXA, as improvements over Kingsley) and Table 4 (the
// found DMM, allocator by allocator). The written spec loads in `tailor
// simulate`.
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "commands.h"
#include "evolution.h"
#include "layout.h"
#include "replay_sample.h"
#include "simulator.h"
#include "tailor/trace/reader.h"

namespace tailor::cli {

namespace {

namespace fs = std::filesystem;
namespace sim = tailor::simulate;
namespace srch = tailor::search;

struct SearchCmdOptions {
  std::string trace;
  std::string output;
  std::string grammar;
  std::string weights = "time=1,memory=1,energy=1";
  std::uint64_t seed = 1;
  unsigned generations = 100;
  unsigned population = 60;
  unsigned threads = 0;
  std::uint64_t sample = 500000;  // at most this many operations in the evolution's sample (0: the whole trace)
  std::string front_dir;  // --pareto: write the front's DMMs there as specs
  bool pareto = false;
  bool json = false;
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

int search_cmd(const SearchCmdOptions& o) {
  const srch::Weights weights = srch::parse_weights(o.weights);
  const srch::Grammar grammar = srch::Grammar::load(o.grammar.empty() ? default_grammar() : o.grammar);

  trace::Reader r(o.trace);
  const bool tty = isatty(STDERR_FILENO) == 1;
  if (tty) fmt::print(stderr, "loading {} ({} events)...", o.trace, r.event_count());
  const sim::ReplayTrace t = sim::load_replay(r);
  if (tty) fmt::print(stderr, "\r\033[K");
  if (t.operations.empty()) throw std::runtime_error(o.trace + ": the trace has no allocation to search for");

  const unsigned threads = o.threads ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  // The evolution ranks candidates on one object in k when the trace is larger
  // than --sample; candidates for the best are measured on the whole trace
  // (SearchOptions::validator), so what is reported is the whole trace's.
  const std::uint32_t one_in = o.sample ? sim::sampling_rate(t, o.sample) : 1;
  std::optional<sim::ReplayTrace> sampled;
  if (one_in > 1) sampled = sim::sample_objects(t, one_in);
  const sim::ReplayTrace& ranked_on = sampled ? *sampled : t;
  srch::Evaluator evaluator(ranked_on, weights, threads);
  std::optional<srch::Evaluator> whole_trace;
  if (sampled) whole_trace.emplace(t, weights, threads);
  srch::Evaluator& whole = sampled ? *whole_trace : evaluator;
  const std::vector<std::uint64_t>& sizes = whole.trace_sizes();  // <TRACE_SIZE>: the whole trace's sizes
  srch::SearchOptions so;
  so.seed = o.seed;
  so.generations = o.generations;
  so.population = o.population;
  so.pareto = o.pareto;
  if (sampled) so.validator = &whole;
  so.progress = [&](unsigned gen, double best, double rate) {
    const std::string line = fmt::format("generation {}/{}  best fitness {:.4f}  {:.1f} evaluations/s", gen,
                                         o.generations, best, rate);
    if (tty)
      fmt::print(stderr, "\r\033[K{}", line);
    else if (gen % 10 == 0 || gen == o.generations)
      fmt::print(stderr, "{}\n", line);
  };
  const srch::SearchResult res = srch::evolve(grammar, sizes, evaluator, so);
  if (tty) fmt::print(stderr, "\r\033[K");
  if (!res.best.eval.valid) throw std::runtime_error("the search found no valid DMM (check the grammar)");

  sim::DmmSpec best = *res.best.spec;
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
  // (Kingsley's run is the evaluator's own).
  const std::vector<std::string> names = {"kng", "lea", "fib", "s10", "exa"};
  std::vector<srch::Evaluation> rows(names.size());
  rows[0] = whole.normalize(whole.kingsley());
  {
    std::vector<std::thread> pool;
    for (std::size_t i = 1; i < names.size(); ++i)
      pool.emplace_back([&, i] { rows[i] = whole.normalize(sim::simulate(t, names[i])); });
    for (auto& th : pool) th.join();
  }
  std::vector<std::string> columns = names;
  columns.push_back("found");
  rows.push_back(res.best.eval);

  if (o.json) {
    nlohmann::json table = nlohmann::json::array();
    for (std::size_t i = 0; i < rows.size(); ++i)
      table.push_back({{"dmm", columns[i]},
                       {"fitness", rows[i].fitness},
                       {"time", rows[i].time},
                       {"memory", rows[i].memory},
                       {"energy", rows[i].energy},
                       {"steps", rows[i].metrics.steps},
                       {"memory_usage_bytes", rows[i].metrics.memory_usage},
                       {"energy_nj", rows[i].metrics.energy_nj}});
    nlohmann::json front = nlohmann::json::array();
    for (std::size_t i = 0; i < res.front.size(); ++i) {
      const srch::Individual& ind = res.front[i];
      front.push_back({{"time", ind.eval.time}, {"memory", ind.eval.memory}, {"energy", ind.eval.energy},
                       {"spec", sim::to_json(*ind.spec)}});
      if (!front_files.empty()) front.back()["file"] = front_files[i];
    }
    nlohmann::json j = {{"trace", o.trace},
                        {"seed", o.seed},
                        {"generations", o.generations},
                        {"population", o.population},
                        {"weights", {{"time", weights.time}, {"memory", weights.memory}, {"energy", weights.energy}}},
                        {"evaluations", res.evaluations},
                        {"allocator_simulations", res.simulations},
                        {"seconds", res.seconds},
                        {"sample", {{"one_in", one_in}, {"operations", ranked_on.operations.size()}}},
                        {"validations", res.validations},
                        {"normalized_to_kng", table},
                        {"found", sim::to_json(best)}};
    if (o.pareto) j["pareto_front"] = front;
    fmt::print("{}\n", j.dump(2));
    return 0;
  }

  fmt::print("search      {} generations x {} individuals, seed {}, weights time={} memory={} energy={}\n",
             o.generations, o.population, o.seed, weights.time, weights.memory, weights.energy);
  fmt::print("evaluated   {} individuals, {} allocators simulated on their share of the trace, {:.1f} s\n",
             res.evaluations, res.simulations, res.seconds);
  if (sampled)
    fmt::print("sampled     ranked on 1 object in {} ({} of {} operations); {} candidates for the best measured on "
               "the whole trace\n",
               one_in, ranked_on.operations.size(), t.operations.size(), res.validations);
  fmt::print("\n");
  fmt::print("Improvement over Kingsley (seed 002's Table 3; higher is better)\n");
  fmt::print("{:<20}", "");
  for (const auto& c : columns) fmt::print(" {:>9}", c);
  fmt::print("\n");
  auto row = [&](const char* label, auto get) {
    fmt::print("{:<20}", label);
    for (const auto& e : rows) fmt::print(" {:>9}", percent(get(e)));
    fmt::print("\n");
  };
  row("global fitness", [](const srch::Evaluation& e) { return e.fitness; });
  row("performance", [](const srch::Evaluation& e) { return e.time; });
  row("memory usage", [](const srch::Evaluation& e) { return e.memory; });
  row("energy", [](const srch::Evaluation& e) { return e.energy; });

  fmt::print("\nThe found DMM (seed 002's Table 4): {} allocator(s)\n", best.allocators.size());
  for (const auto& a : best.allocators) fmt::print("  {}\n", describe(a));
  if (o.pareto) {
    fmt::print("\nPareto front ({} DMMs; time, memory, energy normalized to Kingsley, lower is better)\n",
               res.front.size());
    for (std::size_t i = 0; i < res.front.size(); ++i) {
      const srch::Individual& ind = res.front[i];
      fmt::print("  time {:.3f}  memory {:.3f}  energy {:.3f}  {} allocator(s){}\n", ind.eval.time, ind.eval.memory,
                 ind.eval.energy, ind.spec->allocators.size(), front_files.empty() ? "" : "  " + front_files[i]);
    }
  }
  if (!o.output.empty()) fmt::print("\nwritten     {} (tailor simulate {} --dmm {})\n", o.output, o.trace, o.output);
  return 0;
}

}  // namespace

// The grammar shipped with tailor: DATADIR/search/dmm.bnf (layout.h).
std::string default_grammar() { return layout::data_file("search/dmm.bnf").string(); }

void add_search(CLI::App& app, Runner& run) {
  auto o = std::make_shared<SearchCmdOptions>();
  CLI::App* cmd = app.add_subcommand("search", "Search the DMM design space for the best custom DMM of a trace");
  cmd->add_option("trace", o->trace, "Trace file")->required();
  cmd->add_option("-o,--output", o->output, "Write the found DMM as a spec (loads in tailor simulate)");
  cmd->add_option("--seed", o->seed, "Random seed (same seed, same result)")->capture_default_str();
  cmd->add_option("--generations", o->generations, "Generations")->capture_default_str()->check(CLI::Range(0u, 100000u));
  cmd->add_option("--population", o->population, "Individuals per generation")
      ->capture_default_str()
      ->check(CLI::Range(2u, 100000u));
  cmd->add_option("--threads", o->threads, "Simulations at once (default: one per core)");
  cmd->add_option("--weights", o->weights, "Weights of the fitness's objectives, normalized to Kingsley")
      ->capture_default_str();
  cmd->add_option("--sample", o->sample,
                  "Rank candidates on one object in k, k chosen to leave at most this many operations; a candidate "
                  "for the best is measured on the whole trace (0: rank on the whole trace)")
      ->capture_default_str();
  CLI::Option* pareto =
      cmd->add_flag("--pareto", o->pareto, "Pareto mode (non-dominated sorting with crowding distance); prints the front");
  cmd->add_option("--front-dir", o->front_dir,
                  "With --pareto: write each DMM of the front as a spec, DIR/front-00.json ... (loads in tailor "
                  "simulate)")
      ->needs(pareto);
  cmd->add_option("--grammar", o->grammar, "BNF grammar of the design space (default: share/search/dmm.bnf)");
  cmd->add_flag("--json", o->json, "Machine-readable output");
  cmd->callback([o, &run] { run = [o] { return search_cmd(*o); }; });
}

}  // namespace tailor::cli
