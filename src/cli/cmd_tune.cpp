// SPDX-License-Identifier: MIT
// `tailor tune [--objective time|memory|balanced] [--budget SECONDS]
// [-o tailor.conf] [--install [--install-key KEY]] [--candidate FILE]...
// [--no-search] [--runs N] [--json] -- CMD ARGS...`: records CMD, searches
// libtailor's tunables and DMM structures for it (src/tune), verifies the
// finalists on CMD itself against glibc and default libtailor, prints the
// before/after tables, and writes the winner as a config file libtailor
// reads (and, with --install, as CMD's section of the user's config).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "tune/config_install.h"
#include "layout/layout.h"
#include "tune/tuner.h"

namespace tailor::cli {

namespace {

namespace fs = std::filesystem;
namespace tn = tailor::tune;

struct TuneCmdOptions {
  tn::TuneOptions tune;
  std::string objective = "time";
  std::string output = "tailor.conf";
  bool install = false;
  std::string install_key;
  bool json = false;
};

std::string mib(double bytes) { return fmt::format("{:.1f} MiB", bytes / (1024.0 * 1024.0)); }
std::string ratio(double r) { return std::isfinite(r) ? fmt::format("{:.3f}x", r) : "-"; }
std::string change(double r) { return fmt::format("{:+.1f}%", (r - 1) * 100); }

nlohmann::json row_json(const tn::Row& r) {
  return {{"configuration", r.label},        {"seconds", r.seconds},
          {"seconds_min", r.seconds_min},    {"seconds_max", r.seconds_max},
          {"peak_bytes", r.peak},            {"time_vs_default", r.vs_default.time},
          {"peak_vs_default", r.vs_default.memory}, {"fastest_time_vs_default", r.vs_default.fastest_time}};
}

void print_rows(const std::vector<tn::Row>& rows, const char* peak_name) {
  fmt::print("  {:<26} {:>10} {:>19} {:>9} {:>11} {:>9}\n", "configuration", "time", "(min-max)", "vs dflt", peak_name,
             "vs dflt");
  for (const auto& r : rows)
    fmt::print("  {:<26} {:>8.3f} s {:>19} {:>9} {:>11} {:>9}\n", r.label, r.seconds,
               fmt::format("({:.3f}-{:.3f})", r.seconds_min, r.seconds_max), ratio(r.vs_default.time), mib(r.peak),
               ratio(r.vs_default.memory));
}

// The tune's JSON document (docs/tune.md, "Output").
nlohmann::json result_json(const TuneCmdOptions& o, const tn::TuneResult& r, const tn::Finalist* win,
                           const tn::InstalledConfig& where) {
  nlohmann::json j;
  j["command"] = o.tune.command;
  j["executable"] = r.executable;
  j["process"] = r.process;
  j["processes"] = r.processes;
  j["objective"] = o.objective;
  j["budget_seconds"] = o.tune.budget_seconds;
  j["seconds"] = r.seconds;
  j["record"] = {{"seconds", r.record_seconds}, {"events", r.events}, {"calls", r.calls}, {"threads", r.threads}};
  j["search"] = {{"replays", r.replays}, {"tunables_tried", r.tunables_tried}, {"dmm_generations", r.generations}};
  j["replay"] = {{"rounds", r.replay_rounds}, {"rows", nlohmann::json::array()}};
  for (const auto& row : r.replay_rows) j["replay"]["rows"].push_back(row_json(row));
  j["real"] = {{"rounds", r.real_rounds}, {"rows", nlohmann::json::array()}};
  for (const auto& row : r.real_rows) j["real"]["rows"].push_back(row_json(row));
  j["finalists"] = nlohmann::json::array();
  for (const auto& f : r.finalists) {
    nlohmann::json fj = {{"label", f.label}, {"origin", f.origin}, {"settings", tn::describe(f.settings)},
                         {"verified", f.verified}, {"why_not", f.why_not}, {"gives_up", f.gives_up}};
    if (f.replay) fj["replay"] = {{"time", f.replay->time}, {"memory", f.replay->memory}};
    if (f.real) fj["real"] = {{"time", f.real->time}, {"memory", f.real->memory}};
    j["finalists"].push_back(fj);
  }
  auto or_null = [](const std::string& s) { return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s); };
  j["winner"] = win ? nlohmann::json(win->label) : nlohmann::json(nullptr);
  j["written"] = or_null(where.written);
  j["installed"] = or_null(where.installed);
  j["notes"] = r.notes;
  return j;
}

// The tune's text report: what was recorded and searched, both tables, the finalists, the verdict.
void print_result(const TuneCmdOptions& o, const std::string& command_line, const tn::TuneResult& r,
                  const tn::Finalist* win, const tn::InstalledConfig& where) {
  fmt::print("\ntailor tune --objective {}: {}\n", o.objective, command_line);
  fmt::print("recorded   {} events, {} allocation calls, {} thread(s), in {:.2f} s\n", r.events, r.calls, r.threads,
             r.record_seconds);
  if (r.processes > 1) fmt::print("tuned      {} (the process of {} that made the most allocation calls)\n", r.process, r.processes);
  fmt::print("searched   {} tunable configurations replayed; DMM search {} generations; {} replays in all; {:.0f} s\n",
             r.tunables_tried, r.generations, r.replays, r.seconds);
  for (const auto& n : r.notes) fmt::print("note       {}\n", n);
  fmt::print("\nReplay of the trace (allocation calls only), median of {} interleaved rounds; peak heap = VmHWM - RSS "
             "before the loop\n",
             r.replay_rounds);
  print_rows(r.replay_rows, "peak heap");
  if (!r.real_rows.empty()) {
    fmt::print("\nThe program itself (its output compared with default libtailor's), median of {} interleaved runs; "
               "ratios are medians of the per-round ratios\n",
               r.real_rounds);
    print_rows(r.real_rows, "peak RSS");
  }
  fmt::print("\nFinalists\n");
  for (const auto& f : r.finalists)
    fmt::print("  {:<14} {:<9} {}{}{}\n", f.label, f.origin, tn::describe(f.settings),
               f.gives_up.empty() ? "" : "\n                 gives up: " + f.gives_up,
               f.why_not.empty() ? "" : "\n                 not kept: " + f.why_not);
  if (r.finalists.empty()) fmt::print("  (none: no configuration beat default libtailor on the replay)\n");
  fmt::print("\n");
  if (win == nullptr) {
    fmt::print("verdict    default libtailor stays: no finalist beat it on the real runs; no config written\n");
    return;
  }
  const tn::Row& glibc = r.real_rows[1];
  fmt::print("verdict    {} kept: time {}, peak RSS {} against default libtailor on the real runs "
             "(time {:.3f}x glibc's), the program's output unchanged\n",
             win->label, change(win->real->time), change(win->real->memory), win->real_seconds / glibc.seconds);
  if (!win->gives_up.empty()) fmt::print("gives up   {}\n", win->gives_up);
  const std::string lib = layout::expected(layout::Item::kLibtailor).string();
  fmt::print("written    {}\n           use: TAILOR_CONFIG={} LD_PRELOAD={} {}\n", where.written, where.written, lib,
             command_line);
  if (!where.installed.empty())
    fmt::print("installed  {}\n           use: LD_PRELOAD={} {}\n", where.installed, lib, command_line);
}

int tune_cmd(TuneCmdOptions& o) {
  o.tune.objective = tn::parse_objective(o.objective);
  o.tune.program_output_to_stderr = o.json;  // stdout is the JSON
  const bool tty = isatty(STDERR_FILENO) == 1;
  unsigned last_phase_lines = 0;
  std::string last_phase;
  auto progress = [&](const tn::Progress& p) {
    const std::string line = fmt::format("[{}] {}  ({} replays, {:.0f} s left)", p.phase, p.detail, p.replays,
                                         p.seconds_left);
    if (tty) {
      fmt::print(stderr, "\r\033[K{}", line.substr(0, 150));
    } else if (p.phase != last_phase || ++last_phase_lines % 10 == 0) {
      fmt::print(stderr, "tailor tune: {}\n", line);
      if (p.phase != last_phase) last_phase_lines = 0;
    }
    last_phase = p.phase;
  };
  tn::TuneResult r;
  try {
    r = tn::tune(o.tune, progress);
  } catch (const tn::TuneError& e) {
    if (tty) fmt::print(stderr, "\r\033[K");
    fmt::print(stderr, "tailor tune: {}\n", e.what());
    return 2;
  }
  if (tty) fmt::print(stderr, "\r\033[K");

  const tn::Finalist* win = r.winner >= 0 ? &r.finalists[static_cast<std::size_t>(r.winner)] : nullptr;
  const std::string command_line = fmt::format("{}", fmt::join(o.tune.command, " "));
  tn::InstalledConfig where;
  if (win != nullptr) {
    const std::string header = fmt::format(
        "written by tailor tune --objective {} for {}\nreal runs: time {} and peak RSS {} against default libtailor",
        o.objective, command_line, change(win->real->time), change(win->real->memory));
    const std::string key = !o.install ? std::string() : o.install_key.empty() ? r.executable : o.install_key;
    where = tn::install(win->settings, win->dmm_spec, header, o.output, key);
  }
  if (o.json)
    fmt::print("{}\n", result_json(o, r, win, where).dump(2));
  else
    print_result(o, command_line, r, win, where);
  return 0;
}

}  // namespace

void add_tune(CLI::App& app, Runner& run) {
  auto [cmd, o] = add_command<TuneCmdOptions>(
      app, run, "tune",
      "Tailor libtailor to a program: record it, search tunables and DMMs, verify on the program, write the "
      "winner's config",
      tune_cmd);
  cmd->add_option("--objective", o->objective, "What to improve: time, memory (peak RSS) or balanced")
      ->check(CLI::IsMember({"time", "memory", "balanced"}))
      ->capture_default_str();
  cmd->add_option("--max-slowdown", o->tune.max_slowdown,
                  "With --objective memory: the program's own time may be at most this many times default "
                  "libtailor's (judged on its real runs, not on the replay)")
      ->check(CLI::Range(1.0, 100.0))
      ->capture_default_str();
  cmd->add_option("--budget", o->tune.budget_seconds, "Seconds for the whole tuning, recording included")
      ->check(CLI::Range(1.0, 86400.0))
      ->capture_default_str();
  cmd->add_option("-o,--output", o->output, "The winner's config file (use with TAILOR_CONFIG=FILE)")
      ->capture_default_str();
  CLI::Option* install = cmd->add_flag(
      "--install", o->install,
      "Also write the winner as the program's [program KEY] section of ~/.config/tailor/tailor.conf, so that "
      "LD_PRELOAD=libtailor.so CMD picks it up");
  cmd->add_option("--install-key", o->install_key,
                  "The section's key: the executable's path (default) or a file name (any executable of that name)")
      ->needs(install);
  cmd->add_option("--candidate", o->tune.candidates,
                  "A config file to verify against default libtailor as well (repeatable)");
  cmd->add_flag("--no-search", [o](std::int64_t) { o->tune.search = false; },
                "Search nothing: only verify the --candidate files");
  cmd->add_option("--runs", o->tune.runs, "Interleaved rounds of real runs, at most (fewer if the budget is short)")
      ->check(CLI::Range(1u, 100u))
      ->capture_default_str();
  cmd->add_option("--seed", o->tune.seed, "Seed of the DMM search")->capture_default_str();
  cmd->add_option("--work-dir", o->tune.work_dir,
                  "Keep the trace, plan, candidates' configs and DMM specs here (default: a temporary directory, "
                  "removed)");
  cmd->add_flag("--json", o->json, "Machine-readable output");
  cmd->add_option("command", o->tune.command, "The command to tune, after --")->required();
  cmd->positionals_at_end();
  cmd->footer(
      "Example: tailor tune --objective memory --budget 120 -- ./server --port 0\n"
      "The command runs once recorded (its output passes through) and then several times with its output discarded.\n"
      "Exit status: 0 when tuned (a config written or default libtailor kept), 2 when the command failed or did "
      "not allocate.");
}

}  // namespace tailor::cli
