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
// the ranks share the evaluations out (and spread --islands over them), and
// rank 0 prints and writes: the same as one process.
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

#include "cli/commands.h"
#include "deploy/validation.h"
#include "search/evolution.h"
#include "search/islands.h"
#include "search/job_watch.h"
#include "search/search.h"
#if TAILOR_MPI
#include "search/mpi_job.h"
#endif
#include "layout/layout.h"
#include "simulate/replay_sample.h"
#include "simulate/simulator.h"
#include "simulate/trace_sizes.h"
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
  unsigned islands = 1;
  unsigned migrate_every = 10;
  unsigned migrants = 2;
  unsigned share_among = 16;
  bool copy_traces = false;
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

// Under MPI: where rank 0's time went (however many islands) and what each
// rank held and took in memory.
void add_mpi_json(const srch::SearchReport& r, nlohmann::json& j) {
  const srch::SharingCosts& c = r.result.sharing;  // rank 0's
  j["sharing"] = {{"rounds", c.rounds},         {"measured", c.measured},      {"bytes_sent", c.bytes},
                  {"waiting_seconds", c.waiting}, {"exchange_seconds", c.exchanging},
                  {"measuring_seconds", c.measuring}, {"assembling_seconds", c.assembling},
                  {"bookkeeping_seconds", c.bookkeeping}};
  nlohmann::json ranks = nlohmann::json::array();
  for (const srch::RankReport& k : r.ranks) {
    nlohmann::json traces = nlohmann::json::array();
    for (std::size_t t : k.traces) traces.push_back(r.traces.at(t).path);
    ranks.push_back({{"rank", k.rank}, {"peak_rss_bytes", k.peak_rss_bytes}, {"traces", traces}});
  }
  j["ranks"] = ranks;
}

// The search's JSON document (docs/search.md, "Output").
nlohmann::json report_json(const SearchCmdOptions& o, const srch::SearchRequest& q, const srch::SearchReport& r) {
  const bool multi = r.traces.size() > 1;
  auto table_json = [&](const std::vector<srch::Evaluation>& evals) {
    nlohmann::json table = nlohmann::json::array();
    for (std::size_t i = 0; i < evals.size(); ++i) {
      table.push_back({{"dmm", r.columns[i]},
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
  auto sample_json = [](const srch::SearchTrace& t) {
    return nlohmann::json{{"one_in", t.one_in}, {"operations", t.ranked_operations}};
  };
  auto validation_json = [](const srch::SearchTrace& t) {
    return nlohmann::json{{"one_in", t.validate_one_in},
                          {"operations", t.validation_operations},
                          {"prefix_operations", t.prefix_operations}};
  };
  const srch::SearchResult& res = r.result;
  nlohmann::json j;
  if (multi) {
    nlohmann::json traces = nlohmann::json::array();
    for (const srch::SearchTrace& t : r.traces)
      traces.push_back({{"trace", t.path},
                        {"sample", sample_json(t)},
                        {"validation_sample", validation_json(t)},
                        {"normalized_to_kng", table_json(t.normalized)}});
    j = {{"traces", traces}, {"aggregate", o.aggregate}};
  } else {
    j = {{"trace", r.traces.front().path}};
  }
  j.update({{"seed", o.seed},
            {"generations", o.generations},
            {"population", o.population},
            {"weights", {{"time", q.weights.time}, {"memory", q.weights.memory}, {"energy", q.weights.energy}}},
            {"evaluations", res.evaluations},
            {"allocator_simulations", res.simulations},
            {"seconds", res.seconds},
            {"load_seconds", r.load_seconds}});
  if (!multi) {
    j["sample"] = sample_json(r.traces.front());
    j["validation_sample"] = validation_json(r.traces.front());
  }
  if (q.islands > 1) {
    j["islands"] = {{"islands", q.islands}, {"migrate_every", o.migrate_every}, {"migrants", o.migrants}};
    j["migration_seconds"] = res.migration_seconds;  // rank 0's
  }
  if (q.ring != nullptr && q.ring->size() > 1) add_mpi_json(r, j);
  if (!o.checkpoint.empty()) {
    j["checkpoint_seconds"] = res.checkpoint_seconds;
    j["checkpoint_bytes"] = res.checkpoint_bytes;
  }
  j.update({{"validations", res.validations}, {"normalized_to_kng", table_json(r.rows)}, {"found", sim::to_json(r.found)}});
  if (o.pareto) {
    nlohmann::json front = nlohmann::json::array();
    for (std::size_t i = 0; i < res.front.size(); ++i) {
      const srch::Individual& ind = res.front[i];
      front.push_back({{"time", ind.eval.time}, {"memory", ind.eval.memory}, {"energy", ind.eval.energy},
                       {"spec", sim::to_json(*ind.spec)}});
      if (!r.front_files.empty()) front.back()["file"] = r.front_files[i];
    }
    j["pareto_front"] = front;
  }
  return j;
}

// The search's settings and how each trace was measured.
void print_header(const SearchCmdOptions& o, const srch::SearchRequest& q, const srch::SearchReport& r) {
  const srch::SearchResult& res = r.result;
  const bool multi = r.traces.size() > 1;
  fmt::print("search      {} generations x {} individuals, seed {}, weights time={} memory={} energy={}\n",
             o.generations, o.population, o.seed, q.weights.time, q.weights.memory, q.weights.energy);
  if (multi)
    fmt::print("traces      {} traces, each normalized to Kingsley on its own; the {} of them ranks a DMM\n",
               r.traces.size(), q.aggregate == srch::Aggregate::kMean ? "mean" : "worst");
  if (q.islands > 1)
    fmt::print("islands     {} islands of about {} individuals, the best {} of each to the next every {} generations\n",
               q.islands, o.population / q.islands, o.migrants, o.migrate_every);
  if (!r.ranks.empty()) {
    std::string line;
    for (const srch::RankReport& k : r.ranks)
      line += fmt::format("{}rank {}: {} trace{}, peak RSS {:.0f} MiB", line.empty() ? "" : "; ", k.rank,
                          k.traces.size(), k.traces.size() == 1 ? "" : "s",
                          static_cast<double>(k.peak_rss_bytes) / (1024.0 * 1024.0));
    fmt::print("ranks       {}\n", line);
  }
  fmt::print("evaluated   {} individuals, {} allocators simulated on their share of the trace, {:.1f} s "
             "({:.1f} evaluations/s; the traces loaded before, in {:.1f} s)\n",
             res.evaluations, res.simulations, res.seconds,
             res.seconds > 0 ? static_cast<double>(res.evaluations) / res.seconds : 0.0, r.load_seconds);
  for (const srch::SearchTrace& t : r.traces) {
    if (!t.sampled) continue;
    const std::string where =
        t.validated ? fmt::format("1 object in {} ({} operations) and the first {} operations (the worse of the two), "
                                  "{} finalists on the whole trace",
                                  t.validate_one_in, t.validation_operations, t.prefix_operations,
                                  res.finalists.size())
                    : std::string("the whole trace");
    fmt::print("sampled     {}ranked on 1 object in {} ({} of {} operations); {} candidates for the best measured on "
               "{}\n",
               multi ? t.path + ": " : std::string(), t.one_in, t.ranked_operations, t.operations, res.validations,
               where);
  }
}

// The text report: the DMM simulator paper's Tables 3 and 4, the front.
void print_report(const SearchCmdOptions& o, const srch::SearchRequest& q, const srch::SearchReport& r) {
  const bool multi = r.traces.size() > 1;
  print_header(o, q, r);
  fmt::print("\n");
  fmt::print("Improvement over Kingsley (the DMM simulator paper's Table 3; higher is better){}\n",
             multi ? fmt::format(", {} over the {} traces", q.aggregate == srch::Aggregate::kMean ? "mean" : "worst",
                                 r.traces.size())
                   : std::string());
  fmt::print("{:<20}", "");
  for (const auto& c : r.columns) fmt::print(" {:>9}", c);
  fmt::print("\n");
  auto row = [&](const std::string& label, const std::vector<srch::Evaluation>& evals, auto get) {
    fmt::print("{:<20}", label);
    for (const auto& e : evals) fmt::print(" {:>9}", percent(get(e)));
    fmt::print("\n");
  };
  row("global fitness", r.rows, [](const srch::Evaluation& e) { return e.fitness; });
  row("performance", r.rows, [](const srch::Evaluation& e) { return e.time; });
  row("memory usage", r.rows, [](const srch::Evaluation& e) { return e.memory; });
  row("energy", r.rows, [](const srch::Evaluation& e) { return e.energy; });
  if (multi) {
    fmt::print("\nGlobal fitness per trace (improvement over Kingsley on that trace)\n");
    for (const srch::SearchTrace& t : r.traces) {
      std::string label = fs::path(t.path).filename().string();
      if (label.size() > 19) label = label.substr(0, 18) + "~";
      row(label, t.normalized, [](const srch::Evaluation& e) { return e.fitness; });
    }
  }
  fmt::print("\nThe found DMM (the DMM simulator paper's Table 4): {} allocator(s)\n", r.found.allocators.size());
  for (const auto& a : r.found.allocators) fmt::print("  {}\n", describe(a));
  if (o.pareto) {
    const srch::SearchResult& res = r.result;
    fmt::print("\nPareto front ({} DMMs; time, memory, energy normalized to Kingsley, lower is better{})\n",
               res.front.size(), r.any_validation ? "; measured on the validation sample" : "");
    for (std::size_t i = 0; i < res.front.size(); ++i) {
      const srch::Individual& ind = res.front[i];
      fmt::print("  time {:.3f}  memory {:.3f}  energy {:.3f}  {} allocator(s){}\n", ind.eval.time, ind.eval.memory,
                 ind.eval.energy, ind.spec->allocators.size(), r.front_files.empty() ? "" : "  " + r.front_files[i]);
    }
  }
  if (!o.output.empty())
    fmt::print("\nwritten     {} (tailor simulate {} --dmm {})\n", o.output, r.traces.front().path, o.output);
}

// The request the options describe, with progress on standard error (a
// live line on a terminal, every tenth generation otherwise).
srch::SearchRequest request_of(const SearchCmdOptions& o, srch::Ring* ring, const sim::TimeModel* model) {
  srch::SearchRequest q;
  q.traces = o.traces;
  q.grammar = o.grammar.empty() ? default_grammar() : o.grammar;
  q.weights = srch::parse_weights(o.weights);
  q.aggregate = srch::parse_aggregate(o.aggregate);
  q.seed = o.seed;
  q.generations = o.generations;
  q.population = o.population;
  // Default threads: the cores, shared out among the ranks on this machine.
  q.threads = o.threads ? o.threads : std::max(1u, std::max(1u, std::thread::hardware_concurrency()) / local_ranks());
  q.sample = o.sample;
  q.validate_sample = o.validate_sample;
  q.pareto = o.pareto;
  q.front_dir = o.front_dir;
  const unsigned ranks = ring ? ring->size() : 1;
  q.islands = o.islands;  // the search does not depend on the number of ranks
  q.migrate_every = o.migrate_every;
  q.migrants = o.migrants;
  q.share_among = o.share_among;
  q.copy_traces = o.copy_traces;
  q.checkpoint = o.checkpoint;
  q.checkpoint_every = o.checkpoint_every;
  q.resume = o.resume;
  q.time_model = model;
  q.ring = ring;
  const bool tty = (ring == nullptr || ring->rank() == 0) && isatty(STDERR_FILENO) == 1;
  if (tty)
    q.status = [](const std::string& line) {
      if (line.empty())
        fmt::print(stderr, "\r\033[K");
      else
        fmt::print(stderr, "{}", line);
    };
  q.progress = [&o, tty, note = ranks > 1 && q.islands >= ranks](unsigned gen, double best, double rate) {
    const std::string line = fmt::format("generation {}/{}  best fitness {:.4f}  {:.1f} evaluations/s{}", gen,
                                         o.generations, best, rate, note ? " (rank 0's islands)" : "");
    if (tty)
      fmt::print(stderr, "\r\033[K{}", line);
    else if (gen % 10 == 0 || gen == o.generations)
      fmt::print(stderr, "{}\n", line);
  };
  return q;
}

int search_run(const SearchCmdOptions& o, srch::Ring* ring) {
  const bool root = ring == nullptr || ring->rank() == 0;
  // Time as the machine's time model predicts it, else steps (docs/search.md).
  std::optional<sim::TimeModel> model;
  if (o.time_model != "steps") {
    std::string why;
    model = o.time_model.empty() ? deploy::default_time_model(why) : sim::load_time_model(o.time_model, why);
    if (!model && !o.time_model.empty()) throw std::runtime_error("--time-model " + why);
    if (!why.empty() && root) fmt::print(stderr, "tailor: {}; time is ranked by steps\n", why);
  }
  const srch::SearchRequest q = request_of(o, ring, model ? &*model : nullptr);
  const srch::SearchReport r = srch::run(q);
  if (q.status) q.status("");
  if (!r.root) return 0;
  if (!o.output.empty()) {
    std::ofstream out(o.output);
    out << sim::to_json(r.found).dump(2) << "\n";
    if (!out) throw std::runtime_error(o.output + ": cannot write the DMM spec");
  }
  if (o.json)
    fmt::print("{}\n", report_json(o, q, r).dump(2));
  else
    print_report(o, q, r);
  return 0;
}

int search_cmd(const SearchCmdOptions& o) {
  // Under mpirun: one rank of the job; the islands are spread over the ranks.
  const unsigned world = mpirun_world_size();
#if TAILOR_MPI
  if (world > 0) {
    const std::unique_ptr<srch::mpi::Job> job = srch::mpi::open_job(layout::find(layout::Item::kMpiPlugin).string());
    try {
      // If a rank dies, mpirun stops the others: they name it and the checkpoint to resume from.
      srch::note_checkpoint_plan(o.checkpoint, o.checkpoint_every);
      const srch::JobWatch watch(job->world());
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
                              "the ranks of mpirun; the ranks share the evaluations out whatever N, and the result "
                              "does not depend on how many ranks run it (fewer islands than ranks: every rank runs "
                              "them all; this build ") +
                      (TAILOR_MPI ? "has MPI)" : "has no MPI: islands run in one process)"))
      ->capture_default_str()
      ->check(CLI::Range(1u, 100000u));
  cmd->add_option("--migrate-every", o->migrate_every, "Generations between migrations (0: never)")->capture_default_str();
  cmd->add_option("--share-among", o->share_among,
                  "Under mpirun: groups of this many consecutive ranks share their islands' evaluations out (every "
                  "rank of a group reads the others' requests, so the cost grows with the group; results do not "
                  "depend on it)")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1000000u));
  cmd->add_flag("--copy-traces", o->copy_traces,
               "Under mpirun with several traces: every rank loads every trace (more memory, evaluations shared "
               "out more evenly) instead of each trace being loaded by one rank of each --share-among group, "
               "the default when the traces are at least as many as the group's ranks");
  cmd->add_option("--migrants", o->migrants, "Best individuals each island sends to the next of the ring")
      ->capture_default_str();
  CLI::Option* ckpt = cmd->add_option("--checkpoint", o->checkpoint,
                                      "Write every island's state to FILE (replaced atomically) every --checkpoint-every generations");
  cmd->add_option("--checkpoint-every", o->checkpoint_every, "Generations between checkpoints")->needs(ckpt);
  cmd->add_option("--resume", o->resume,
                  "Continue the search saved in FILE (same traces and settings; the result is the uninterrupted one's)");
}

}  // namespace tailor::cli
