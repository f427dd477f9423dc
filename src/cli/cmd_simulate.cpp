// SPDX-License-Identifier: MIT
// `tailor simulate TRACE --dmm kng,FILE.json [--json] [--check]`: simulates
// built-in DMMs and DMM specs on a trace, several at once, and prints every
// metric (definitions in docs/dmm.md).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <optional>
#include <thread>

#include "cli/commands.h"
#include "cli/exit_status.h"
#include "deploy/validation.h"
#include "simulate/dmm_spec.h"
#include "simulate/replay_stream.h"
#include "simulate/simulator.h"
#include "tailor/trace/reader.h"
#include "util/parallel_for.h"

namespace tailor::cli {

namespace {

struct SimulateCmdOptions {
  std::string trace;
  std::vector<std::string> dmms = {"kng"};
  bool json = false;
  bool check = false;
  bool load_first = false;
  unsigned threads = 0;
  unsigned front = dmm::Front::kDefaultLimit;
};

nlohmann::json to_json(const simulate::Metrics& m) {
  nlohmann::json series = nlohmann::json::array();
  for (const auto& s : m.series) series.push_back({s.operation, s.requested, s.block_bytes, s.held});
  nlohmann::json j = {
      {"dmm", m.dmm},
      {"energy_nj", m.energy_nj},
      {"steps_by_mechanism",
       [&] {
         nlohmann::json k = nlohmann::json::object();
         for (std::size_t i = 0; i < dmm::kMechanismKinds; ++i)
           if (m.steps_by_kind[i]) k[dmm::kMechanismKindNames[i]] = m.steps_by_kind[i];
         return k;
       }()},
      {"front", {{"hits", m.front_hits}, {"misses", m.front_misses}, {"kept", m.front_kept}, {"passed", m.front_passed}}},
      {"seconds", m.seconds},
      {"series_columns", {"operation", "requested_bytes", "block_bytes", "held_bytes"}},
      {"series", series}};
  simulate::each_count(m, [&](const char* key, std::uint64_t v) { j[key] = v; });
  return j;
}

nlohmann::json to_json(const simulate::ReplaySummary& s) {
  return {{"events", s.events},
          {"allocations", s.allocations},
          {"releases", s.releases},
          {"reallocs", s.reallocs},
          {"failed_allocations", s.failed},
          {"null_releases", s.null_releases},
          {"unknown_releases", s.unknown_releases},
          {"reused_live", s.reused_live},
          {"other_events", s.other_events},
          {"max_live_blocks", s.max_live_blocks},
          {"max_in_use_bytes", s.max_in_use_bytes},
          {"page_size", s.page_size}};
}

void print_text(const trace::Reader& r, const simulate::ReplayTrace& t, const std::vector<simulate::Metrics>& all,
                bool checked, const simulate::TimeModel* model) {
  const auto& s = t.summary;
  fmt::print("trace       {}\n", r.path());
  if (!r.complete()) fmt::print("warning     {}\n", r.cut());
  fmt::print("events      {} -> {} operations ({} allocations, {} releases)\n", s.events, s.allocations + s.releases,
             s.allocations, s.releases);
  fmt::print("dropped     {} failed allocations, {} releases of NULL, {} of unknown blocks, {} thread events\n",
             s.failed, s.null_releases, s.unknown_releases, s.other_events);
  fmt::print("max in use  {} bytes requested, {} blocks live at most\n\n", s.max_in_use_bytes, s.max_live_blocks);

  fmt::print("{:<34}", "metric");
  for (const auto& m : all) fmt::print(" {:>16}", m.dmm);
  fmt::print("\n");
  auto row = [&](const char* name, auto get) {
    fmt::print("{:<34}", name);
    for (const auto& m : all) fmt::print(" {:>16}", get(m));
    fmt::print("\n");
  };
  using M = simulate::Metrics;
  row("time complexity (steps)", [](const M& m) { return m.steps; });
  if (model != nullptr)
    row("predicted real time (s, time model)", [&](const M& m) { return fmt::format("{:.4f}", model->seconds(m)); });
  row("memory reads", [](const M& m) { return m.reads; });
  row("memory writes", [](const M& m) { return m.writes; });
  row("memory accesses", [](const M& m) { return m.reads + m.writes; });
  row("system requests", [](const M& m) { return m.system_requests; });
  row("splits", [](const M& m) { return m.splits; });
  row("coalesces", [](const M& m) { return m.coalesces; });
  row("energy (mJ, docs/dmm.md model)", [](const M& m) { return fmt::format("{:.3f}", m.energy_nj / 1e6); });
  row("memory usage (resident bytes)", [](const M& m) { return m.memory_usage; });
  row("held from the system (bytes)", [](const M& m) { return m.held_usage; });
  row("internal fragmentation (bytes)", [](const M& m) { return m.internal_fragmentation; });
  row("external fragmentation (bytes)", [](const M& m) { return m.external_fragmentation; });
  row("memory usage / max in use", [](const M& m) {
    return m.max_in_use ? fmt::format("{:.3f}", static_cast<double>(m.memory_usage) / static_cast<double>(m.max_in_use))
                        : std::string("-");
  });
  row("simulation time (s)", [](const M& m) { return fmt::format("{:.3f}", m.seconds); });
  row("operations per second", [](const M& m) {
    return m.seconds > 0 ? fmt::format("{:.1f} M", static_cast<double>(m.operations) / m.seconds / 1e6)
                         : std::string("-");
  });
  // The DMM simulator paper's Figures 6-7 and its access counts: Kingsley's value divided by
  // each DMM's, so that greater than 1 is better than Kingsley.
  auto kng = std::find_if(all.begin(), all.end(), [](const M& m) { return m.dmm == "kng"; });
  if (kng != all.end() && all.size() > 1) {
    fmt::print("\nnormalized to kng (kng / dmm: greater than 1 is better)\n");
    auto ratio = [](std::uint64_t base, std::uint64_t value) {
      return value ? fmt::format("{:.3f}", static_cast<double>(base) / static_cast<double>(value)) : std::string("-");
    };
    row("time complexity", [&](const M& m) { return ratio(kng->steps, m.steps); });
    if (model != nullptr)
      row("predicted real time", [&](const M& m) { return fmt::format("{:.3f}", model->seconds(*kng) / model->seconds(m)); });
    row("memory accesses", [&](const M& m) { return ratio(kng->reads + kng->writes, m.reads + m.writes); });
    row("memory usage", [&](const M& m) { return ratio(kng->memory_usage, m.memory_usage); });
    row("energy", [&](const M& m) {
      return m.energy_nj > 0 ? fmt::format("{:.3f}", kng->energy_nj / m.energy_nj) : std::string("-");
    });
  }
  if (checked) fmt::print("\ncheck       passed (no overlap, inside system memory, size, alignment, high-water mark)\n");
}

// One DMM to simulate: a built-in by name, or a spec from a JSON file.
struct DmmJob {
  std::string name;
  std::optional<simulate::DmmSpec> spec;
  std::string origin;  // the spec's file
};

// Operations in the window of a simulation that needs no more than a pass
// over them (8 MiB; ReplayStream).
constexpr std::uint64_t kWindow = std::uint64_t{1} << 20;

// DMMs simulated at once.
unsigned job_threads(const SimulateCmdOptions& o) {
  return o.threads ? o.threads : std::max(1u, std::thread::hardware_concurrency());
}

// The job runs beside the load (ReplayStream) rather than after it.
bool follows_load(const DmmJob& job, const SimulateCmdOptions& o) {
  return !o.load_first && !o.check && !job.spec && simulate::streams(job.name);
}

bool is_spec_file(const std::string& name) {
  return name.ends_with(".json") || name.find('/') != std::string::npos;
}

// Runs every job on up to `threads` threads (one DMM per thread at a time)
// while the calling thread loads the trace into `stream`: jobs that stream
// (simulate::streams) start at once and follow the load, the others start
// when it ends. Results in the jobs' order. Shows progress on a terminal.
std::vector<simulate::Metrics> run_jobs(const std::vector<DmmJob>& jobs, simulate::ReplayStream& stream,
                                        const SimulateCmdOptions& o, bool tty) {
  const std::size_t n = jobs.size();
  auto streaming = [&](const DmmJob& job) { return follows_load(job, o); };
  std::vector<std::size_t> order(n);  // streaming jobs first: a worker waiting for the load holds no streaming job back
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_partition(order.begin(), order.end(), [&](std::size_t i) { return streaming(jobs[i]); });

  std::vector<simulate::Metrics> all(n);
  std::vector<std::exception_ptr> errors(n);
  std::unique_ptr<std::atomic<std::uint64_t>[]> done(new std::atomic<std::uint64_t>[n]);
  for (std::size_t i = 0; i < n; ++i) done[i] = 0;
  std::atomic<std::size_t> finished{0};
  std::atomic<bool> loaded{false};
  auto job = [&](std::size_t k) {
    const std::size_t i = order[k];
    simulate::SimulateOptions so;
    so.check = o.check;
    so.front = o.front;
    so.progress = [&, i](std::uint64_t d, std::uint64_t) { done[i] = d; };
    try {
      if (streaming(jobs[i])) {
        all[i] = simulate::simulate(stream, jobs[i].name, so);
      } else {
        const simulate::ReplayTrace& t = stream.wait_complete();
        if (!stream.failed())
          all[i] = jobs[i].spec ? simulate::simulate(t, *jobs[i].spec, so, jobs[i].origin)
                                : simulate::simulate(t, jobs[i].name, so);
      }
    } catch (...) {
      errors[i] = std::current_exception();
    }
    finished.fetch_add(1);
  };
  util::ParallelFor pool(n, job_threads(o), job);  // they start on what has loaded so far

  // Progress on a terminal, from a thread of its own while this one loads.
  std::thread progress;
  if (tty && stream.expected_operations() > simulate::SimulateOptions::kProgressEvery) {
    progress = std::thread([&] {
      while (finished.load() < n) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        const double total = static_cast<double>(std::max<std::uint64_t>(1, stream.expected_operations()));
        std::string line = loaded.load() ? "simulating" : "loading and simulating";
        for (std::size_t i = 0; i < n; ++i)
          line += fmt::format(" {} {:.0f}%", jobs[i].name, std::min(100.0, 100.0 * static_cast<double>(done[i].load()) / total));
        fmt::print(stderr, "\r\033[K{}", line);
      }
      fmt::print(stderr, "\r\033[K");
    });
  }
  std::exception_ptr load_error;
  try {
    stream.build();
  } catch (...) {
    load_error = std::current_exception();
  }
  loaded = true;
  pool.join();  // every job counted in `finished`: the progress thread ends
  if (progress.joinable()) progress.join();
  if (load_error) std::rethrow_exception(load_error);
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  return all;
}

int simulate_cmd(const SimulateCmdOptions& o) {
  std::vector<DmmJob> jobs;
  for (const auto& name : o.dmms) {
    if (name.empty()) continue;  // "a,,b", a trailing comma
    if (is_spec_file(name)) {  // read and check the spec before the (long) load
      simulate::DmmSpec spec = simulate::load_dmm_spec(name);
      jobs.push_back({spec.name, std::move(spec), name});
    } else {
      if (std::find(simulate::known_dmms().begin(), simulate::known_dmms().end(), name) ==
          simulate::known_dmms().end())
        simulate::simulate({}, name);  // throws, naming the known DMMs
      jobs.push_back({name, std::nullopt, {}});
    }
  }
  if (jobs.empty()) throw std::invalid_argument("--dmm: no DMM named");

  trace::Reader r(o.trace);
  const bool tty = isatty(STDERR_FILENO) == 1;
  // When every DMM follows the load on a thread of its own, the operations
  // pass through a window instead of being kept: memory stays constant, and
  // the operations are read while still in cache.
  const unsigned threads = job_threads(o);
  const bool windowed = threads >= jobs.size() &&
                        std::all_of(jobs.begin(), jobs.end(), [&](const DmmJob& j) { return follows_load(j, o); });
  // The threads that run simulations beside the load decode chunks for it
  // whenever they catch up with it (ReplayStream, Reader::help_decode), so
  // the load's own decoding threads, its calling thread included, are the
  // cores those leave. On two cores with one DMM: two threads, not three
  // sharing two cores (1.41x the loop's time for the whole command, against
  // 1.62x; docs/BENCHMARKS.md, "Traces at scale").
  const auto following = static_cast<unsigned>(std::min<std::size_t>(
      threads, std::count_if(jobs.begin(), jobs.end(), [&](const DmmJob& j) { return follows_load(j, o); })));
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  if (following > 0) r.set_decode_threads(cores > following ? cores - following : 1);
  simulate::ReplayStream stream(r, windowed ? kWindow : 0, windowed ? static_cast<unsigned>(jobs.size()) : 0);
  std::vector<simulate::Metrics> all = run_jobs(jobs, stream, o, tty);
  const simulate::ReplayTrace& t = stream.wait_complete();
  // The real time the machine's time model predicts (docs/deploy.md).
  std::string why;
  const std::optional<simulate::TimeModel> model = deploy::default_time_model(why);
  if (!why.empty()) fmt::print(stderr, "tailor: {}; no predicted time\n", why);

  if (o.json) {
    nlohmann::json dmms = nlohmann::json::array();
    auto kng = std::find_if(all.begin(), all.end(), [](const simulate::Metrics& m) { return m.dmm == "kng"; });
    for (const auto& m : all) {
      nlohmann::json j = to_json(m);
      if (model) j["predicted_seconds"] = model->seconds(m);
      if (kng != all.end()) {
        auto ratio = [](std::uint64_t base, std::uint64_t value) {
          return value ? static_cast<double>(base) / static_cast<double>(value) : 0.0;
        };
        j["normalized_to_kng"] = {{"steps", ratio(kng->steps, m.steps)},
                                  {"memory_accesses", ratio(kng->reads + kng->writes, m.reads + m.writes)},
                                  {"memory_usage", ratio(kng->memory_usage, m.memory_usage)},
                                  {"energy", m.energy_nj > 0 ? kng->energy_nj / m.energy_nj : 0.0}};
        if (model) j["normalized_to_kng"]["predicted_time"] = model->seconds(*kng) / model->seconds(m);
      }
      dmms.push_back(j);
    }
    nlohmann::json j = {{"trace", {{"path", r.path()}, {"complete", r.complete()}, {"cut", r.cut()}}},
                        {"replay", to_json(t.summary)},
                        {"checked", o.check},
                        {"dmms", dmms}};
    fmt::print("{}\n", j.dump(2));
  } else {
    print_text(r, t, all, o.check, model ? &*model : nullptr);
  }
  return exit_status(r, "simulate");
}

}  // namespace

void add_simulate(CLI::App& app, Runner& run) {
  auto [cmd, o] = add_trace_command<SimulateCmdOptions>(
      app, run, "simulate", "Simulate dynamic memory managers on a trace and measure them", simulate_cmd);
  cmd->add_option("--dmm", o->dmms,
                  fmt::format("Comma-separated DMMs: built-ins ({}) or DMM spec files (FILE.json, docs/dmm.md)",
                              fmt::join(simulate::known_dmms(), ", ")))
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--threads", o->threads, "DMMs simulated at once (default: one per core)");
  cmd->add_option("--front", o->front,
                  "Blocks per bin of the front of free blocks before an allocator that splits, coalesces or gives "
                  "memory back (TAILOR_DMM_FRONT of the real run, docs/deploy.md; before one that never does, every "
                  "block); 0: the DMM alone")
      ->check(CLI::Range(0u, dmm::Front::kMaxLimit))
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "Machine-readable output (with the time series)");
  cmd->add_flag("--load-first", o->load_first,
                "Load the whole trace before simulating (by default the DMMs that can follow the load run beside "
                "it); the simulation times are then the loops' alone");
  cmd->add_flag("--check", o->check,
                "Verify after every operation: no overlap, inside system memory, size, alignment, high-water mark");
}

}  // namespace tailor::cli
