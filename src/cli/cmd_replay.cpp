// SPDX-License-Identifier: MIT
// `tailor replay TRACE --alloc glibc,libtailor,...,kng,FILE.json [--runs N]
// [--json] [-o OUT.json] [--keep-plan FILE]`: replays a trace's allocation
// calls on real allocators, each in a fresh process, in interleaved rounds,
// and reports per allocator the median time of the replay loop, peak RSS,
// the bytes it holds from the OS, and minor faults (docs/deploy.md, "Replay").
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/exit_status.h"
#include "simulate/dmm_spec.h"
#include "replay/plan_file.h"
#include "replay/replay_plan.h"
#include "replay/replay_runner.h"
#include "simulate/simulator.h"
#include "tailor/trace/reader.h"

namespace tailor::cli {

namespace {

struct ReplayCmdOptions {
  std::string trace;
  std::vector<std::string> allocators = {"glibc", "libtailor", "mimalloc", "jemalloc", "tcmalloc"};
  unsigned runs = 5;
  bool json = false;
  std::string output;
  std::string keep_plan;
};

double ratio(double value, double base) { return base > 0 && !std::isnan(value) ? value / base : std::nan(""); }

std::string fixed(double v, int digits) { return std::isnan(v) ? "-" : fmt::format("{:.{}f}", v, digits); }

nlohmann::json number(double v) { return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v); }

constexpr double kMiB = 1024.0 * 1024.0;

// What the driver ran on: the allocator, or for a DMM the DMM libtailor
// served malloc with ("libtailor*" if this libtailor did not take TAILOR_DMM).
std::string runs_on(const replay::AllocatorResult& r) {
  const auto& last = r.runs.back();
  if (r.allocator.dmm.empty()) return last.value("allocator", "?");
  const auto dmm = last["allocator_stats"].value("dmm", nlohmann::json::object());
  return dmm.value("active", 0) ? "dmm " + dmm.value("name", std::string("?")) : "libtailor*";
}

nlohmann::json to_json(const trace::Reader& r, const replay::PlanSummary& s, std::size_t threads, unsigned runs,
                       const std::vector<replay::AllocatorResult>& results) {
  nlohmann::json allocators = nlohmann::json::array();
  for (const auto& res : results) {
    const auto& m = res.median;
    const auto& first = results.front().median;
    allocators.push_back(
        {{"name", res.allocator.name},
         {"preload", res.allocator.preload},
         {"dmm", res.allocator.dmm},
         {"runs_on", runs_on(res)},
         {"median",
          {{"seconds", m.seconds},
           {"seconds_min", m.seconds_min},
           {"seconds_max", m.seconds_max},
           {"peak_rss_bytes", m.peak_rss_bytes},
           {"peak_rss_delta_bytes", m.peak_rss_delta_bytes},
           {"os_bytes", number(m.os_bytes)},
           {"minor_faults", m.minor_faults}}},
         {"ratio_to_first",
          {{"seconds", number(ratio(m.seconds, first.seconds))},
           {"peak_rss_delta", number(ratio(m.peak_rss_delta_bytes, first.peak_rss_delta_bytes))}}},
         {"runs", res.runs}});
  }
  return {{"trace", {{"path", r.path()}, {"complete", r.complete()}, {"cut", r.cut()}}},
          {"plan",
           {{"events", s.events},
            {"threads", threads},
            {"slots", s.slots},
            {"calls",
             {{"total", s.calls[0]},
              {"malloc", s.calls[replay::plan::kMalloc]},
              {"calloc", s.calls[replay::plan::kCalloc]},
              {"realloc", s.calls[replay::plan::kRealloc]},
              {"aligned", s.calls[replay::plan::kAligned]},
              {"free", s.calls[replay::plan::kFree]}}},
            {"dropped",
             {{"failed", s.failed},
              {"null_releases", s.null_releases},
              {"unknown_releases", s.unknown_releases},
              {"other_events", s.other_events}}},
            {"reused_live", s.reused_live},
            {"cross_thread", s.cross_thread},
            {"max_live", s.max_live},
            {"live_at_end", s.live_at_end}}},
          {"runs", runs},
          {"allocators", allocators}};
}

void print_text(const trace::Reader& r, const replay::PlanSummary& s, std::size_t threads, unsigned runs,
                const std::vector<replay::AllocatorResult>& results) {
  using replay::plan::Kind;
  std::string cmd;
  for (const auto& a : r.header().command_line) cmd += (cmd.empty() ? "" : " ") + a;
  fmt::print("trace     {} (pid {}: {})\n", r.path(), r.header().pid, cmd);
  if (!r.complete()) fmt::print("warning   {}\n", r.cut());
  fmt::print("plan      {} events -> {} calls in {} thread(s): {} malloc, {} calloc, {} realloc, {} aligned, {} free\n",
             s.events, s.calls[0], threads, s.calls[Kind::kMalloc], s.calls[Kind::kCalloc], s.calls[Kind::kRealloc],
             s.calls[Kind::kAligned], s.calls[Kind::kFree]);
  fmt::print("          dropped {} failed calls, {} frees of NULL, {} frees of unknown blocks, {} thread events; "
             "{} allocations over a live block; {} cross-thread frees; {} blocks live at most, {} at the end\n",
             s.failed, s.null_releases, s.unknown_releases, s.other_events, s.reused_live, s.cross_thread, s.max_live,
             s.live_at_end);
  fmt::print("runs      {} interleaved round(s), each allocator in a fresh process\n\n", runs);

  const auto& first = results.front();
  fmt::print("{:<14} {:<12} {:>9} {:>17} {:>12} {:>10} {:>10} {:>12} {:>7} {:>7}\n", "allocator", "runs on", "time s",
             "min-max s", "peak RSS MiB", "VmHWM MiB", "OS MiB", "minor faults", "time x", "RSS x");
  bool plain_dmm = false;
  for (const auto& res : results) {
    const auto& m = res.median;
    const std::string on = runs_on(res);
    plain_dmm |= on == "libtailor*";
    fmt::print("{:<14} {:<12} {:>9.4f} {:>17} {:>12.2f} {:>10.2f} {:>10} {:>12.0f} {:>7} {:>7}\n", res.allocator.name, on,
               m.seconds, fmt::format("{:.4f}-{:.4f}", m.seconds_min, m.seconds_max), m.peak_rss_delta_bytes / kMiB,
               m.peak_rss_bytes / kMiB, fixed(m.os_bytes / kMiB, 2), m.minor_faults,
               fixed(ratio(m.seconds, first.median.seconds), 2),
               fixed(ratio(m.peak_rss_delta_bytes, first.median.peak_rss_delta_bytes), 2));
  }
  fmt::print("\ntime: the replay loop, median of {} (min-max); peak RSS: VmHWM minus RSS just before the loop; "
             "x: ratio to {}\n", runs, first.allocator.name);
  fmt::print("OS: the allocator's own count of memory held from the OS, median:\n");
  std::vector<std::string> seen;
  for (const auto& res : results) {
    const std::string on = res.runs.back().value("allocator", "?");
    if (std::find(seen.begin(), seen.end(), on) != seen.end()) continue;
    seen.push_back(on);
    fmt::print("  {:<10} {}\n", on, res.runs.back().value("os_bytes_source", "?"));
  }
  if (plain_dmm)
    fmt::print("* this libtailor does not serve malloc with the DMM TAILOR_DMM names yet: plain libtailor ran\n");
}

int replay_cmd(const ReplayCmdOptions& o) {
  // Check every allocator before the (long) plan building.
  const replay::Tools tools = replay::find_tools();
  std::vector<replay::Allocator> allocators;
  for (const auto& name : o.allocators) {
    if (name.empty()) continue;  // "a,,b", a trailing comma
    allocators.push_back(replay::resolve_allocator(name, tools, simulate::known_dmms()));
    if (!allocators.back().dmm.empty() && allocators.back().dmm.front() == '/')
      simulate::load_dmm_spec(allocators.back().dmm);  // throws, naming the file and what is wrong
  }
  if (allocators.empty()) throw std::invalid_argument("--alloc: no allocator named");

  trace::Reader r(o.trace);
  const bool tty = isatty(STDERR_FILENO) == 1;
  if (tty) fmt::print(stderr, "reading {} ({} events)...", o.trace, r.event_count());
  replay::PlanFile file(o.keep_plan);
  replay::PlanSummary summary;
  std::size_t threads = 0;
  {
    replay::Plan plan = replay::build_plan(r);
    summary = plan.summary;
    threads = plan.threads.size();
    replay::write_plan(plan, file.path());
  }
  if (tty) fmt::print(stderr, "\r\033[K");

  auto progress = [&](unsigned round, std::size_t i) {
    if (tty)
      fmt::print(stderr, "\r\033[Kreplay: round {}/{}, {}", round + 1, o.runs, allocators[i].name);
  };
  const std::vector<replay::AllocatorResult> results = replay::run_rounds(tools, allocators, file.path(), o.runs, progress);
  if (tty) fmt::print(stderr, "\r\033[K");

  if (o.json || !o.output.empty()) {
    const std::string doc = to_json(r, summary, threads, o.runs, results).dump(2) + "\n";
    if (o.json) fmt::print("{}", doc);
    if (!o.output.empty()) {
      std::ofstream out(o.output);
      out << doc;
      if (!out.flush()) throw std::runtime_error("cannot write " + o.output);
    }
  }
  if (!o.json) print_text(r, summary, threads, o.runs, results);
  return exit_status(r, "replay");
}

}  // namespace

void add_replay(CLI::App& app, Runner& run) {
  auto [cmd, o] = add_trace_command<ReplayCmdOptions>(
      app, run, "replay", "Replay a trace's allocation calls on real allocators and measure them", replay_cmd);
  cmd->add_option("--alloc", o->allocators,
                  fmt::format("Comma-separated allocators: glibc, libtailor, mimalloc, jemalloc, tcmalloc (the Debian "
                              "libraries), or a DMM on libtailor (TAILOR_DMM): {} or a spec FILE.json",
                              fmt::join(simulate::known_dmms(), ", ")))
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--runs", o->runs, "Runs of each allocator, in interleaved rounds (medians are reported)")
      ->check(CLI::Range(1u, 1000u))
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "Machine-readable output: every run's numbers and the medians");
  cmd->add_option("-o,--output", o->output, "Also write the JSON document to this file");
  cmd->add_option("--keep-plan", o->keep_plan,
                  "Write the replay plan to this file and keep it (tailor-replay-driver FILE replays it)");
  cmd->footer("Each run is tailor-replay-driver in a fresh process, with the allocator preloaded; it replays every\n"
              "trace thread at once (a free of another thread's block waits for its allocation) and writes one byte\n"
              "per page of every block. Time is the replay loop's; peak RSS is VmHWM minus RSS before the loop.");
}

}  // namespace tailor::cli
