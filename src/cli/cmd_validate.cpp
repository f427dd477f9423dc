// SPDX-License-Identifier: MIT
// `tailor validate TRACE --dmm kng,lea,fib,s10,exa,FILE.json [--runs N]
// [--tolerance PCT] [--json]`: seed 002's Table 5 for this machine. Each DMM
// is simulated on the trace and run for real (libtailor with TAILOR_DMM,
// the same mechanism code, replaying the trace: src/replay), and the two are
// compared: memory (high-water mark of bytes held from the system) and time
// (simulated steps against real time), each normalized to Kingsley, and the
// ranking by simulated time complexity against the ranking by real time.
// Exits 3 when some DMM's real memory differs from its simulated memory by
// more than the tolerance.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>

#include "commands.h"
#include "dmm_spec.h"
#include "plan_file.h"
#include "replay_plan.h"
#include "replay_runner.h"
#include "simulator.h"
#include "tailor/trace/reader.h"
#include "trace_sizes.h"

namespace tailor::cli {

namespace {

struct ValidateCmdOptions {
  std::string trace;
  std::string dmms = "kng,lea,fib,s10,exa";
  unsigned runs = 3;
  double tolerance = 2.0;
  bool json = false;
};

struct Row {
  std::string given;  // as --dmm named it
  std::string name;   // shown: a spec file's name without its directory
  simulate::Metrics sim;
  double real_seconds = 0;
  double real_held = 0;  // tailor_dmm_get_stats held_high_water: bytes obtained - returned, as simulated
  double real_os = 0;    // os_high_water: pages of the held ranges + the DMM's own state
  std::string runs_on;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? std::nan("") : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// Ranks (1 = least), ties averaged.
std::vector<double> ranks(const std::vector<double>& v) {
  std::vector<std::size_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && v[order[j + 1]] == v[order[i]]) ++j;
    for (std::size_t k = i; k <= j; ++k) r[order[k]] = (static_cast<double>(i + j) / 2.0) + 1.0;
    i = j + 1;
  }
  return r;
}

// Spearman's rank correlation (Pearson on the ranks).
double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  const auto ra = ranks(a), rb = ranks(b);
  const double n = static_cast<double>(ra.size());
  const double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / n, mb = std::accumulate(rb.begin(), rb.end(), 0.0) / n;
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < ra.size(); ++i) {
    sab += (ra[i] - ma) * (rb[i] - mb);
    saa += (ra[i] - ma) * (ra[i] - ma);
    sbb += (rb[i] - mb) * (rb[i] - mb);
  }
  return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : std::nan("");
}

double pct(double real, double sim) { return sim != 0 ? (real - sim) / sim * 100.0 : std::nan(""); }

int validate_cmd(const ValidateCmdOptions& o) {
  std::vector<std::string> names;
  {
    std::stringstream in(o.dmms);
    for (std::string n; std::getline(in, n, ',');)
      if (!n.empty()) names.push_back(n);
  }
  if (std::find(names.begin(), names.end(), "kng") == names.end()) names.insert(names.begin(), "kng");
  const replay::Tools tools = replay::find_tools();
  std::vector<replay::Allocator> allocators;
  std::vector<std::optional<simulate::DmmSpec>> specs;
  for (const auto& n : names) {
    const bool builtin = std::find(simulate::known_dmms().begin(), simulate::known_dmms().end(), n) !=
                         simulate::known_dmms().end();
    const auto& real = replay::allocator_names();  // allocators that are not DMMs
    if (std::find(real.begin(), real.end(), n) != real.end())
      throw std::invalid_argument("--dmm: " + n + " is not a DMM the simulator models (tailor replay measures it)");
    allocators.push_back(replay::resolve_allocator(n, tools, simulate::known_dmms()));
    specs.push_back(builtin ? std::nullopt : std::optional(simulate::load_dmm_spec(allocators.back().dmm)));
  }

  trace::Reader r(o.trace);
  const bool tty = isatty(STDERR_FILENO) == 1;
  if (tty) fmt::print(stderr, "reading {} ({} events)...", o.trace, r.event_count());
  const simulate::ReplayTrace replay_trace = simulate::load_replay(r);
  const std::vector<std::uint64_t> sizes = simulate::sizes_of(replay_trace);

  // EXA and specs with exact classes but no sizes of their own get the
  // trace's sizes for real too, as the simulator gives them.
  char sizes_path[] = "/tmp/tailor-validate-sizes-XXXXXX";
  const int sizes_fd = mkstemp(sizes_path);
  if (sizes_fd < 0) throw std::runtime_error("cannot create a temporary file in /tmp");
  {
    std::string text;
    for (auto s : sizes) text += std::to_string(s) + "\n";
    if (::write(sizes_fd, text.data(), text.size()) != static_cast<ssize_t>(text.size()))
      throw std::runtime_error(std::string(sizes_path) + ": cannot write");
    ::close(sizes_fd);
  }
  ::setenv("TAILOR_DMM_SIZES", sizes_path, 1);
  struct Unlink {
    const char* p;
    ~Unlink() { ::unlink(p); }
  } unlink_sizes{sizes_path};

  replay::PlanFile file("");
  {
    replay::Plan plan = replay::build_plan(r);
    replay::write_plan(plan, file.path());
  }

  std::vector<Row> rows(names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (tty) fmt::print(stderr, "\r\033[Ksimulating {}", names[i]);
    rows[i].given = names[i];
    rows[i].name = names[i].find('/') == std::string::npos ? names[i] : names[i].substr(names[i].rfind('/') + 1);
    rows[i].sim = specs[i] ? simulate::simulate(replay_trace, *specs[i], {}, allocators[i].dmm)
                           : simulate::simulate(replay_trace, names[i]);
  }
  auto progress = [&](unsigned round, std::size_t i) {
    if (tty) fmt::print(stderr, "\r\033[Kreal: round {}/{}, {}", round + 1, o.runs, names[i]);
  };
  const auto results = replay::run_rounds(tools, allocators, file.path(), o.runs, progress);
  if (tty) fmt::print(stderr, "\r\033[K");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::vector<double> held, os;
    for (const auto& run : results[i].runs) {
      const auto dmm = run["allocator_stats"].value("dmm", nlohmann::json::object());
      if (!dmm.value("active", 0))
        throw std::runtime_error(names[i] + ": libtailor did not run the DMM (TAILOR_DMM was not taken)");
      held.push_back(dmm.value("held_high_water", 0.0));
      os.push_back(dmm.value("os_high_water", 0.0));
      rows[i].runs_on = dmm.value("name", std::string("?"));
    }
    rows[i].real_seconds = results[i].median.seconds;
    rows[i].real_held = median(held);
    rows[i].real_os = median(os);
  }

  const Row& k = rows[static_cast<std::size_t>(
      std::find(names.begin(), names.end(), "kng") - names.begin())];
  std::vector<double> sim_time, real_time;
  bool beyond = false;
  nlohmann::json out = nlohmann::json::array();
  for (const Row& row : rows) {
    const double st = static_cast<double>(row.sim.steps) / static_cast<double>(k.sim.steps);
    const double rt = row.real_seconds / k.real_seconds;
    const double sm = static_cast<double>(row.sim.memory_usage) / static_cast<double>(k.sim.memory_usage);
    const double rm = row.real_os / k.real_os;
    const double mem_diff = pct(row.real_os, static_cast<double>(row.sim.memory_usage));
    sim_time.push_back(st);
    real_time.push_back(rt);
    if (std::fabs(mem_diff) > o.tolerance) beyond = true;
    out.push_back({{"dmm", row.given},
                   {"runs_on", row.runs_on},
                   {"simulated",
                    {{"steps", row.sim.steps},
                     {"memory_usage_bytes", row.sim.memory_usage},
                     {"held_usage_bytes", row.sim.held_usage}}},
                   {"real",
                    {{"seconds", row.real_seconds},
                     {"held_high_water_bytes", row.real_held},
                     {"os_high_water_bytes", row.real_os}}},
                   {"normalized_to_kng",
                    {{"simulated_time", st}, {"real_time", rt}, {"simulated_memory", sm}, {"real_memory", rm}}},
                   {"difference_pct",
                    {{"time_normalized", pct(rt, st)},
                     {"memory_normalized", pct(rm, sm)},
                     {"memory", mem_diff},
                     {"held", pct(row.real_held, static_cast<double>(row.sim.held_usage))}}}});
  }
  const double rho = spearman(sim_time, real_time);
  if (o.json) {
    fmt::print("{}\n", nlohmann::json{{"trace", o.trace},
                                      {"runs", o.runs},
                                      {"tolerance_pct", o.tolerance},
                                      {"spearman_time", std::isnan(rho) ? nlohmann::json(nullptr) : nlohmann::json(rho)},
                                      {"within_tolerance", !beyond},
                                      {"dmms", out}}
                           .dump(2));
  } else {
    fmt::print("trace       {} ({} operations)\n", o.trace, replay_trace.operations.size());
    fmt::print("real        libtailor with TAILOR_DMM, replaying the trace (tailor replay), median of {} run(s)\n\n",
               o.runs);
    fmt::print("{:<14} {:>12} {:>12} {:>8} {:>14} {:>14} {:>8} {:>14} {:>14} {:>8}\n", "DMM", "sim time", "real time",
               "diff %", "sim memory", "real memory", "diff %", "sim held", "real held", "diff %");
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto& j = out[i];
      const auto& n = j["normalized_to_kng"];
      const auto& d = j["difference_pct"];
      fmt::print("{:<14} {:>12.3f} {:>12.3f} {:>+8.2f} {:>14} {:>14.0f} {:>+8.2f} {:>14} {:>14.0f} {:>+8.2f}\n",
                 rows[i].name, n["simulated_time"].get<double>(), n["real_time"].get<double>(),
                 d["time_normalized"].get<double>(), rows[i].sim.memory_usage, rows[i].real_os,
                 d["memory"].get<double>(), rows[i].sim.held_usage, rows[i].real_held, d["held"].get<double>());
    }
    std::vector<std::size_t> by_sim(rows.size()), by_real(rows.size());
    std::iota(by_sim.begin(), by_sim.end(), 0);
    std::iota(by_real.begin(), by_real.end(), 0);
    std::sort(by_sim.begin(), by_sim.end(), [&](auto a, auto b) { return sim_time[a] < sim_time[b]; });
    std::sort(by_real.begin(), by_real.end(), [&](auto a, auto b) { return real_time[a] < real_time[b]; });
    auto list = [&](const std::vector<std::size_t>& v) {
      std::string s;
      for (auto i : v) s += (s.empty() ? "" : " < ") + rows[i].name;
      return s;
    };
    fmt::print("\ntime: simulated steps and real replay time, each over Kingsley's; memory: high-water mark of\n"
               "resident bytes (pages the DMM's held ranges touch + its own state), simulated and real; held:\n"
               "high-water mark of bytes obtained - returned; diff: real against simulated\n\n");
    fmt::print("ranking by simulated time  {}\n", list(by_sim));
    fmt::print("ranking by real time       {}\n", list(by_real));
    fmt::print("Spearman                   {:.3f}\n", rho);
    fmt::print("memory within {:.2f}%       {}\n", o.tolerance, beyond ? "no" : "yes");
  }
  return beyond ? 3 : 0;
}

}  // namespace

void add_validate(CLI::App& app, Runner& run) {
  auto o = std::make_shared<ValidateCmdOptions>();
  CLI::App* cmd = app.add_subcommand(
      "validate", "Compare each DMM's simulation with the same DMM run for real (seed 002's Table 5)");
  cmd->add_option("trace", o->trace, "Trace file")->required();
  cmd->add_option("--dmm", o->dmms, "Comma-separated DMMs: kng, lea, fib, buddy, s10, exa or a spec FILE.json "
                                    "(kng is added if missing: everything is normalized to it)")
      ->capture_default_str();
  cmd->add_option("--runs", o->runs, "Real runs of each DMM, in interleaved rounds (medians)")
      ->check(CLI::Range(1u, 1000u))
      ->capture_default_str();
  cmd->add_option("--tolerance", o->tolerance,
                  "Largest difference, in percent, between a DMM's real and simulated memory; beyond it the "
                  "exit status is 3")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "Machine-readable output");
  cmd->callback([o, &run] { run = [o] { return validate_cmd(*o); }; });
}

}  // namespace tailor::cli
