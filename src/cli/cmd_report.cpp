// SPDX-License-Identifier: MIT
// `tailor report TRACE [--dmm ...] [--search] [-o report.html]`: one
// self-contained HTML page of a trace (src/report, docs/report.md): memory in
// use over time, sizes, lifetimes, call sites, threads and, with --dmm and
// --search, the simulated DMMs compared, their heap maps and the found DMM.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "cli/commands.h"
#include "cli/exit_status.h"
#include "simulate/dmm_spec.h"
#include "report/heap_map.h"
#include "report/html_page.h"
#include "analyze/stack_profile.h"
#include "report/flame_graph.h"
#include "report/report_data.h"
#include "report/report_search.h"
#include "simulate/simulator.h"
#include "tailor/trace/reader.h"
#include "analyze/trace_stats.h"
#include "deploy/validation.h"
#include "util/parallel_for.h"

namespace tailor::cli {

namespace {

namespace sim = tailor::simulate;

struct ReportCmdOptions {
  std::string trace;
  std::string output = "report.html";
  std::vector<std::string> dmms;
  bool search = false;
  report::SearchSettings search_settings;
  std::size_t points = 2000;
  std::size_t top = 200;
  unsigned threads = 0;
  bool no_symbols = false;
};

// One DMM to simulate: a built-in by name, or a spec (from a file, or found).
struct Job {
  std::string name;
  std::optional<sim::DmmSpec> spec;
  std::string origin;
};

std::vector<Job> parse_dmms(const std::vector<std::string>& list) {
  std::vector<Job> jobs;
  for (const std::string& name : list) {
    if (name.empty()) continue;  // "a,,b", a trailing comma
    if (name.ends_with(".json") || name.find('/') != std::string::npos) {
      sim::DmmSpec spec = sim::load_dmm_spec(name);  // throws naming the file and field
      jobs.push_back({spec.name.empty() ? name : spec.name, std::move(spec), name});
    } else {
      const auto& known = sim::known_dmms();
      if (std::find(known.begin(), known.end(), name) == known.end()) sim::simulate({}, name);  // throws, naming them
      jobs.push_back({name, std::nullopt, {}});
    }
  }
  return jobs;
}

// Simulates every job, `threads` at once, each with a heap snapshot at every moment.
std::vector<sim::Metrics> simulate_all(const std::vector<Job>& jobs, const sim::ReplayTrace& t,
                                       const std::vector<report::Moment>& moments, unsigned threads) {
  std::vector<sim::Metrics> all(jobs.size());
  sim::SimulateOptions so;
  for (const auto& m : moments) so.snapshots_at.push_back(m.operation);
  util::parallel_for(jobs.size(), threads, [&](std::size_t i) {
    try {
      all[i] = jobs[i].spec ? sim::simulate(t, *jobs[i].spec, so, jobs[i].origin) : sim::simulate(t, jobs[i].name, so);
    } catch (const std::exception& e) {
      throw std::runtime_error(fmt::format("simulating {}: {}", jobs[i].name, e.what()));
    }
  });
  return all;
}

int report_cmd(ReportCmdOptions o) {
  // Everything that can be refused is refused before the trace is read, and
  // nothing is written unless the whole page was made.
  std::vector<Job> jobs = parse_dmms(o.dmms);
  if (o.search && o.search_settings.grammar.empty()) o.search_settings.grammar = default_grammar();
  const unsigned threads = o.threads ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  const bool tty = isatty(STDERR_FILENO) == 1;
  auto status = [&](const std::string& what) {
    if (tty) fmt::print(stderr, "\r\033[K{}", what);
  };

  trace::Reader r(o.trace);
  status(fmt::format("reading {} ({} events)...", o.trace, r.event_count()));
  analyze::StatsOptions so;
  so.top = o.top;
  so.series_points = o.points;
  analyze::TraceStats stats = analyze::compute_stats(r, so);
  if (!o.no_symbols) analyze::symbolize(stats, r.modules());

  std::vector<sim::Metrics> dmms;
  std::optional<sim::ReplaySummary> replay;
  std::vector<report::Moment> moments;
  std::optional<report::SearchOutcome> found;
  if (!jobs.empty() || o.search) {
    status("loading the trace for simulation...");
    const sim::ReplayTrace t = sim::load_replay(r);
    replay = t.summary;
    moments = report::heap_moments(t);
    if (o.search) {
      status(fmt::format("searching ({} generations of {})...", o.search_settings.generations,
                         o.search_settings.population));
      o.search_settings.threads = threads;
      std::string why;  // time ranked as `tailor search` ranks it: by the machine's time model
      const std::optional<sim::TimeModel> model = deploy::default_time_model(why);
      if (!why.empty()) fmt::print(stderr, "tailor: {}; time is ranked by steps\n", why);
      o.search_settings.time_model = model ? &*model : nullptr;
      found = report::run_search(t, o.search_settings);
      if (std::none_of(jobs.begin(), jobs.end(), [](const Job& j) { return j.name == "kng"; }))
        jobs.insert(jobs.begin(), Job{"kng", std::nullopt, {}});  // what the comparison is normalized to
      jobs.push_back({"found", found->found, "the found DMM"});
    }
    if (!t.operations.empty()) {
      status(fmt::format("simulating {} DMM(s)...", jobs.size()));
      dmms = simulate_all(jobs, t, moments, threads);
    }
  }
  status("");

  nlohmann::json stacks;
  if (!r.stacks().empty()) {
    status("weighing the stacks...");
    stacks = report::flame_graphs(r, analyze::profile_stacks(r, stats.event_of_max_in_use), !o.no_symbols);
    status("");
  }
  report::ReportInputs in{r, stats, std::move(dmms), replay, std::move(moments), std::move(found), std::move(stacks)};
  const std::string html = report::render_html(report::report_data(in), "tailor report: " + o.trace);
  report::write_file(o.output, html);
  if (tty) fmt::print(stderr, "\r\033[K");
  fmt::print("written     {} ({:.1f} KiB)\n", o.output, static_cast<double>(html.size()) / 1024.0);
  return exit_status(r, "report");
}

}  // namespace

void add_report(CLI::App& app, Runner& run) {
  auto [cmd, o] = add_trace_command<ReportCmdOptions>(
      app, run, "report", "One self-contained HTML page of a trace, with charts", report_cmd);
  cmd->add_option("-o,--output", o->output, "HTML file to write")->capture_default_str();
  cmd->add_option("--dmm", o->dmms,
                  fmt::format("Comma-separated DMMs to simulate and compare, with heap maps: built-ins ({}) or DMM "
                              "spec files (FILE.json, docs/dmm.md)",
                              fmt::join(sim::known_dmms(), ", ")))
      ->delimiter(',');
  cmd->add_flag("--search", o->search, "Search a custom DMM too (as tailor search) and show it (Table 4) and its fitness");
  cmd->add_option("--generations", o->search_settings.generations, "With --search: generations")
      ->capture_default_str()
      ->check(CLI::Range(0u, 100000u));
  cmd->add_option("--population", o->search_settings.population, "With --search: individuals per generation")
      ->capture_default_str()
      ->check(CLI::Range(2u, 100000u));
  cmd->add_option("--seed", o->search_settings.seed, "With --search: random seed")->capture_default_str();
  cmd->add_option("--grammar", o->search_settings.grammar, "With --search: BNF grammar (default: share/search/dmm.bnf)");
  cmd->add_option("--points", o->points, "Points of the memory-in-use series (each the min and max of its events)")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{2}, std::size_t{1000000}));
  cmd->add_option("--top", o->top, "Call sites in the table (the top by calls and the top by bytes)")
      ->capture_default_str();
  cmd->add_option("--threads", o->threads, "Simulations at once (default: one per core)");
  cmd->add_flag("--no-symbols", o->no_symbols, "Do not symbolize call sites");
}

}  // namespace tailor::cli
