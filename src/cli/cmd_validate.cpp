// SPDX-License-Identifier: MIT
// `tailor validate TRACE... --dmm kng,lea,fib,s10,exa,FILE.json [--runs N]
// [--tolerance PCT] [--time-tolerance PCT] [--time-model FILE] [--fit [-o FILE]]
// [--json]`: the DMM simulator paper's Table 5 for this machine (src/deploy/validation.h):
// each DMM simulated and run for real, memory and time compared, each
// normalized to Kingsley. With --fit, the simulator's time model is fitted
// on the real runs of every trace given and written (-o). Exits 3 when a
// DMM's real memory differs from its simulation by more than the
// tolerance, or (with --time-tolerance) its normalized time does.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>

#include "cli/commands.h"
#include "deploy/validation.h"

namespace tailor::cli {

namespace {

struct ValidateCmdOptions {
  std::vector<std::string> traces;
  std::vector<std::string> dmms = {"kng", "lea", "fib", "s10", "exa"};
  unsigned runs = 3;
  unsigned front = 16;
  unsigned repeat = 1;
  std::uint64_t repeat_to = 0;
  double tolerance = 2.0;
  double time_tolerance = -1;  // off
  std::string time_model;      // empty: the default (deploy::default_time_model)
  bool fit = false;
  std::string output = "time-model.json";
  bool json = false;
};

nlohmann::json to_json(const deploy::ValidationReport& r) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& row : r.rows) {
    nlohmann::json counts = nlohmann::json::object();  // the time model's features
    const auto features = simulate::TimeModel::features(row.sim);
    for (std::size_t k = 0; k < features.size(); ++k) counts[simulate::TimeModel::kNames[k]] = features[k];
    out.push_back({{"dmm", row.dmm},
                   {"runs_on", row.runs_on},
                   {"simulated",
                    {{"steps", row.sim.steps},
                     {"counts", counts},
                     {"time", row.sim_time},
                     {"memory_usage_bytes", row.sim.memory_usage},
                     {"held_usage_bytes", row.sim.held_usage}}},
                   {"real",
                    {{"seconds", row.real_seconds},
                     {"fastest_seconds", row.real_fastest},
                     {"runs_seconds", row.real_run_seconds},
                     {"held_high_water_bytes", row.real_held},
                     {"os_high_water_bytes", row.real_os}}},
                   {"normalized_to_kng",
                    {{"simulated_time", row.sim_time_norm},
                     {"real_time", row.real_time_norm},
                     {"simulated_memory", row.sim_memory_norm},
                     {"real_memory", row.real_memory_norm}}},
                   {"difference_pct",
                    {{"time_normalized", row.time_norm_diff_pct},
                     {"memory", row.memory_diff_pct},
                     {"held", row.held_diff_pct}}}});
  }
  return {{"trace", r.trace},
          {"runs", r.runs},
          {"passes", r.passes},
          {"operations", r.operations},
          {"simulated_time", r.model ? "time model (seconds)" : "steps"},
          {"spearman_time", std::isnan(r.spearman) ? nlohmann::json(nullptr) : nlohmann::json(r.spearman)},
          {"dmms", out}};
}

void print_text(const deploy::ValidationReport& r, double tolerance) {
  if (r.passes > 1)
    fmt::print("trace       {} played {} times in a row ({} operations in all)\n", r.trace, r.passes, r.operations);
  else
    fmt::print("trace       {} ({} operations)\n", r.trace, r.operations);
  fmt::print("real        libtailor with TAILOR_DMM, replaying the trace (tailor replay), {} run(s) in interleaved\n"
             "            rounds: time the fastest run's, memory the median\n",
             r.runs);
  fmt::print("sim time    {}\n\n", r.model ? "the time model's prediction (seconds)" : "steps (no time model)");
  fmt::print("{:<14} {:>9} {:>9} {:>8} {:>12} {:>12} {:>8} {:>12} {:>12} {:>8}\n", "DMM", "sim time", "real", "diff %",
             "sim memory", "real memory", "diff %", "sim held", "real held", "diff %");
  for (const auto& row : r.rows)
    fmt::print("{:<14} {:>9.3f} {:>9.3f} {:>+8.2f} {:>12} {:>12.0f} {:>+8.2f} {:>12} {:>12.0f} {:>+8.2f}\n", row.shown,
               row.sim_time_norm, row.real_time_norm, row.time_norm_diff_pct, row.sim.memory_usage, row.real_os,
               row.memory_diff_pct, row.sim.held_usage, row.real_held, row.held_diff_pct);
  std::vector<std::size_t> by_sim(r.rows.size()), by_real(r.rows.size());
  std::iota(by_sim.begin(), by_sim.end(), 0);
  std::iota(by_real.begin(), by_real.end(), 0);
  std::sort(by_sim.begin(), by_sim.end(), [&](auto a, auto b) { return r.rows[a].sim_time_norm < r.rows[b].sim_time_norm; });
  std::sort(by_real.begin(), by_real.end(), [&](auto a, auto b) { return r.rows[a].real_time_norm < r.rows[b].real_time_norm; });
  auto list = [&](const std::vector<std::size_t>& v) {
    std::string s;
    for (auto i : v) s += (s.empty() ? "" : " < ") + r.rows[i].shown;
    return s;
  };
  fmt::print("\ntime: simulated and real, each over Kingsley's; memory: high-water mark of resident bytes (pages the\n"
             "DMM's held ranges touch + its own state), simulated and real; held: high-water mark of bytes\n"
             "obtained - returned; diff: real against simulated\n\n");
  fmt::print("ranking by simulated time  {}\n", list(by_sim));
  fmt::print("ranking by real time       {}\n", list(by_real));
  fmt::print("Spearman                   {:.3f}\n", r.spearman);
  if (r.runs > 1) {
    // How much the host disturbed the runs: each DMM's median over its
    // fastest. Near 1, the rounds agree; far above, the ranking of DMMs
    // closer than that is the host's, not theirs.
    double lo = HUGE_VAL, hi = 0;
    for (const auto& row : r.rows) {
      const double q = row.real_fastest > 0 ? row.real_seconds / row.real_fastest : 1.0;
      lo = std::min(lo, q);
      hi = std::max(hi, q);
    }
    fmt::print("median / fastest run       {:.2f}-{:.2f} over the DMMs\n", lo, hi);
  }
  fmt::print("memory within {:.2f}%       {}\n", tolerance, r.worst_memory_diff_pct <= tolerance ? "yes" : "no");
}

// The fitted time model, its errors over the traces, and where it was written.
void print_fit(const std::vector<deploy::ValidationReport>& reports, const simulate::TimeModel& model,
               const std::string& output) {
  unsigned ranked = 0;
  double worst = 0;
  for (const auto& r : reports) {
    ranked += r.spearman >= 0.8;
    worst = std::max(worst, r.worst_time_norm_diff_pct);
  }
  fmt::print("\ntime model fitted on {}\n", model.fitted_on);
  fmt::print("machine     {}\n", model.machine);
  for (std::size_t k = 0; k < simulate::TimeModel::kFeatures; ++k)
    if (model.ns[k] > 0) fmt::print("  {:<34} {:>12.4f} ns\n", simulate::TimeModel::kNames[k], model.ns[k]);
  fmt::print("median error of a run's time        {:.1f}%\n", model.median_error * 100);
  fmt::print("worst error of a normalized time    {:.1f}%\n", worst);
  fmt::print("traces ranked as reality (Spearman >= 0.8): {} of {}\n", ranked, reports.size());
  fmt::print("written     {} (TAILOR_TIME_MODEL={}, or install it as share/tailor/time-model.json)\n", output, output);
}

int validate_cmd(const ValidateCmdOptions& o) {
  std::optional<simulate::TimeModel> model;
  std::string why;
  if (!o.time_model.empty()) {
    model = simulate::load_time_model(o.time_model, why);
    if (!model) throw std::runtime_error("--time-model " + why);
  } else if (!o.fit) {
    model = deploy::default_time_model(why);
    if (!why.empty()) fmt::print(stderr, "tailor: {}; simulated time is steps\n", why);
  }
  if (!o.fit && o.traces.size() != 1) throw std::invalid_argument("give one trace (several with --fit)");
  const bool tty = isatty(STDERR_FILENO) == 1;
  std::vector<deploy::ValidationReport> reports;
  for (const auto& trace : o.traces) {
    deploy::ValidationRequest q;
    q.trace = trace;
    q.dmms = o.dmms;
    q.runs = o.runs;
    q.front = o.front;
    q.repeat = o.repeat;
    q.repeat_to = o.repeat_to;
    q.model = model ? &*model : nullptr;
    q.progress = [&](const std::string& s) {
      if (tty) fmt::print(stderr, "\r\033[K{}", s.substr(0, 120));
    };
    reports.push_back(deploy::validate(q));
    if (tty) fmt::print(stderr, "\r\033[K");
  }
  if (o.fit) {
    // The fitted model's predictions replace the simulated times.
    model = deploy::fit(reports);
    for (auto& r : reports) deploy::score_times(r, &*model);
    std::ofstream out(o.output);
    out << simulate::to_json_text(*model);
    if (!out) throw std::runtime_error(o.output + ": cannot write");
  }
  bool beyond = false;
  for (const auto& r : reports) {
    beyond = beyond || r.worst_memory_diff_pct > o.tolerance;
    beyond = beyond || (o.time_tolerance >= 0 && r.worst_time_norm_diff_pct > o.time_tolerance);
  }
  if (o.json) {
    nlohmann::json j = {{"tolerance_pct", o.tolerance}, {"within_tolerance", !beyond}};
    if (o.time_tolerance >= 0) j["time_tolerance_pct"] = o.time_tolerance;
    if (reports.size() == 1) {
      const nlohmann::json one = to_json(reports[0]);
      j.update(one);
    } else {
      for (const auto& r : reports) j["traces"].push_back(to_json(r));
    }
    if (o.fit) j["fit"] = {{"file", o.output}, {"model", nlohmann::json::parse(simulate::to_json_text(*model))}};
    fmt::print("{}\n", j.dump(2));
    return beyond ? 3 : 0;
  }
  for (std::size_t i = 0; i < reports.size(); ++i) {
    if (i > 0) fmt::print("\n");
    print_text(reports[i], o.tolerance);
    if (o.time_tolerance >= 0)
      fmt::print("time within {:.2f}%         {} (worst {:.1f}%)\n", o.time_tolerance,
                 reports[i].worst_time_norm_diff_pct <= o.time_tolerance ? "yes" : "no",
                 reports[i].worst_time_norm_diff_pct);
  }
  if (o.fit) print_fit(reports, *model, o.output);
  return beyond ? 3 : 0;
}

}  // namespace

void add_validate(CLI::App& app, Runner& run) {
  auto [cmd, o] = add_command<ValidateCmdOptions>(
      app, run, "validate",
      "Compare each DMM's simulation with the same DMM run for real (the DMM simulator paper's Table 5); fit the time model",
      validate_cmd);
  cmd->add_option("trace", o->traces, "Trace file (several with --fit)")->required();
  cmd->add_option("--dmm", o->dmms, "DMMs: kng, lea, fib, buddy, s10, exa or a spec FILE.json, comma-separated "
                                    "(kng is added if missing: everything is normalized to it)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--runs", o->runs, "Real runs of each DMM, in interleaved rounds (medians)")
      ->check(CLI::Range(1u, 1000u))
      ->capture_default_str();
  cmd->add_option("--front", o->front, "Blocks per bin of the front before the DMM, simulated and real (TAILOR_DMM_FRONT)")
      ->check(CLI::Range(0u, 1024u))
      ->capture_default_str();
  cmd->add_option("--repeat", o->repeat,
                  "Play the trace N times in a row in each run, simulated and for real (blocks live at the end of "
                  "a pass are freed before the next): for replays too short to time; one-thread traces")
      ->check(CLI::Range(1u, 1000u))
      ->capture_default_str();
  cmd->add_option("--repeat-to", o->repeat_to,
                  "As --repeat, with as many passes as make at least OPS operations (events) in each run")
      ->excludes("--repeat");
  cmd->add_option("--tolerance", o->tolerance,
                  "Largest difference, in percent, between a DMM's real and simulated resident memory; beyond it "
                  "the exit status is 3")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  cmd->add_option("--time-tolerance", o->time_tolerance,
                  "Largest difference, in percent, between a DMM's real and simulated time normalized to "
                  "Kingsley's; beyond it the exit status is 3 (default: not checked)")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--time-model", o->time_model,
                  "The time model predicting real time from a simulation (default: TAILOR_TIME_MODEL, else "
                  "share/tailor/time-model.json, else steps)");
  cmd->add_flag("--fit", o->fit, "Fit the time model on the real runs of every trace given, and write it (-o)");
  cmd->add_option("-o,--output", o->output, "With --fit: the model file written")->capture_default_str();
  cmd->add_flag("--json", o->json, "Machine-readable output");
}

}  // namespace tailor::cli
