// SPDX-License-Identifier: MIT
// The simulation against reality (validation.h).
#include "deploy/validation.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <stdexcept>
#include <thread>

#include "simulate/dmm_spec.h"
#include "layout/layout.h"
#include "replay/plan_file.h"
#include "replay/replay_plan.h"
#include "replay/replay_runner.h"
#include "simulate/simulator.h"
#include "tailor/trace/reader.h"
#include "simulate/trace_sizes.h"
#include "util/statistics.h"

namespace tailor::deploy {

namespace {

// The trace of one thread `passes` times in a row, as the simulator's
// replay and as the driver's plan, built from the same events: after each
// pass but the last, a free of every block still live, in address order,
// so that the next pass starts with an empty heap (what the DMM holds
// stays held). Times go on increasing from pass to pass.
std::pair<simulate::ReplayTrace, replay::Plan> repeated(trace::Reader& reader, unsigned passes) {
  simulate::ReplayBuilder sim(reader.header().page_size, reader.event_count() * passes);
  replay::PlanBuilder plan(reader.event_count() * passes);
  trace::Event e;
  std::uint64_t shift = 0, last = 0;
  std::uint32_t thread = 0;
  for (unsigned pass = 0; pass < passes; ++pass) {
    reader.rewind();
    while (reader.next(e)) {
      e.time_ns += shift;
      last = std::max(last, e.time_ns);
      thread = e.thread;
      sim.add(e);
      plan.add(e);
    }
    if (pass + 1 == passes) break;
    for (const std::uint64_t address : sim.live_addresses()) {
      trace::Event f;
      f.op = trace::Op::Free;
      f.address = address;
      f.thread = thread;
      f.time_ns = last;
      sim.add(f);
      plan.add(f);
    }
    shift = last + 1;
  }
  reader.rewind();
  return {sim.finish(), plan.finish()};
}

// The Kingsley row every value is normalized to (validate always has one).
const ValidationRow& kingsley(const ValidationReport& r) {
  return *std::find_if(r.rows.begin(), r.rows.end(), [](const ValidationRow& x) { return x.dmm == "kng"; });
}

double pct(double real, double sim) { return sim != 0 ? (real - sim) / sim * 100.0 : std::nan(""); }

// The trace's sizes in a temporary file, for the exact classes of EXA and
// of specs without sizes of their own (TAILOR_DMM_SIZES), removed with it.
struct SizesFile {
  std::string path;
  explicit SizesFile(const std::vector<std::uint64_t>& sizes) {
    std::string pattern = (std::filesystem::temp_directory_path() / "tailor-validate-sizes-XXXXXX").string();
    const int fd = mkstemp(pattern.data());
    if (fd < 0) throw std::runtime_error("cannot create a temporary file like " + pattern);
    path = pattern;
    std::string text;
    for (auto s : sizes) text += std::to_string(s) + "\n";
    const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ::close(fd);
    if (!ok) throw std::runtime_error(path + ": cannot write");
  }
  ~SizesFile() { ::unlink(path.c_str()); }
  SizesFile(const SizesFile&) = delete;
  SizesFile& operator=(const SizesFile&) = delete;
};

std::string machine_name() {
  std::string model;
  std::ifstream cpu("/proc/cpuinfo");
  for (std::string line; std::getline(cpu, line);)
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  utsname u{};
  uname(&u);
  return (model.empty() ? std::string(u.machine) : model) + ", " + std::to_string(std::thread::hardware_concurrency()) +
         " cores, Linux " + u.release;
}

}  // namespace

ValidationReport validate(const ValidationRequest& q) {
  std::vector<std::string> names = q.dmms;
  if (std::find(names.begin(), names.end(), "kng") == names.end()) names.insert(names.begin(), "kng");
  const replay::Tools tools = replay::find_tools();
  std::vector<replay::Allocator> allocators;
  std::vector<std::optional<simulate::DmmSpec>> specs;
  for (const auto& n : names) {
    const auto& known = simulate::known_dmms();
    const bool builtin = std::find(known.begin(), known.end(), n) != known.end();
    const auto& real = replay::allocator_names();  // allocators that are not DMMs
    if (std::find(real.begin(), real.end(), n) != real.end())
      throw std::invalid_argument("--dmm: " + n + " is not a DMM the simulator models (tailor replay measures it)");
    allocators.push_back(replay::resolve_allocator(n, tools, known));
    allocators.back().env.push_back("TAILOR_DMM_FRONT=" + std::to_string(q.front));
    specs.push_back(builtin ? std::nullopt : std::optional(simulate::load_dmm_spec(allocators.back().dmm)));
  }
  auto say = [&](const std::string& s) {
    if (q.progress) q.progress(s);
  };

  trace::Reader reader(q.trace);
  say("reading " + q.trace);
  unsigned passes = std::max(1u, q.repeat);
  if (const std::uint64_t events = reader.event_count(); events > 0)
    passes = static_cast<unsigned>(std::max<std::uint64_t>(passes, std::min<std::uint64_t>(1000, (q.repeat_to + events - 1) / events)));
  if (passes > 1 && reader.thread_count() > 1)
    throw std::invalid_argument(q.trace + ": a trace of " + std::to_string(reader.thread_count()) +
                                " threads cannot be repeated (its threads would have to meet again)");
  replay::PlanFile plan_file("");
  simulate::ReplayTrace replay_trace;
  if (passes == 1) {
    replay_trace = simulate::load_replay(reader);
    replay::Plan plan = replay::build_plan(reader);
    replay::write_plan(plan, plan_file.path());
  } else {
    say("repeating " + q.trace + " " + std::to_string(passes) + " times");
    auto both = repeated(reader, passes);
    replay_trace = std::move(both.first);
    replay::write_plan(both.second, plan_file.path());
  }
  // EXA and specs with exact classes but no sizes of their own get the
  // trace's sizes for real too, as the simulator gives them.
  const SizesFile sizes(simulate::sizes_of(replay_trace));
  for (auto& a : allocators) a.env.push_back("TAILOR_DMM_SIZES=" + sizes.path);

  ValidationReport r;
  r.trace = q.trace;
  r.passes = passes;
  r.operations = replay_trace.operations.size();
  r.runs = q.runs;
  r.model = q.model != nullptr;
  r.rows.resize(names.size());
  simulate::SimulateOptions so;
  so.front = q.front;
  for (std::size_t i = 0; i < names.size(); ++i) {
    say("simulating " + names[i]);
    ValidationRow& row = r.rows[i];
    row.dmm = names[i];
    row.shown = names[i].find('/') == std::string::npos ? names[i] : names[i].substr(names[i].rfind('/') + 1);
    row.sim = specs[i] ? simulate::simulate(replay_trace, *specs[i], so, allocators[i].dmm)
                       : simulate::simulate(replay_trace, names[i], so);
  }
  const auto results = replay::run_rounds(tools, allocators, plan_file.path(), q.runs, [&](unsigned round, std::size_t i) {
    say("real: round " + std::to_string(round + 1) + "/" + std::to_string(q.runs) + ", " + names[i]);
  });
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    std::vector<double> held, os;
    for (const auto& run : results[i].runs) {
      const auto dmm = run["allocator_stats"].value("dmm", nlohmann::json::object());
      if (!dmm.value("active", 0))
        throw std::runtime_error(names[i] + ": libtailor did not run the DMM (TAILOR_DMM was not taken)");
      r.rows[i].real_run_seconds.push_back(run.value("seconds", 0.0));
      held.push_back(dmm.value("held_high_water", 0.0));
      os.push_back(dmm.value("os_high_water", 0.0));
      r.rows[i].runs_on = dmm.value("name", std::string("?"));
    }
    r.rows[i].real_seconds = results[i].median.seconds;
    r.rows[i].real_fastest = results[i].median.seconds_min;
    r.rows[i].real_held = util::median(held);
    r.rows[i].real_os = util::median(os);
  }

  const ValidationRow& k = kingsley(r);
  for (ValidationRow& row : r.rows) {
    row.sim_memory_norm = static_cast<double>(row.sim.memory_usage) / static_cast<double>(k.sim.memory_usage);
    row.real_memory_norm = row.real_os / k.real_os;
    row.memory_diff_pct = pct(row.real_os, static_cast<double>(row.sim.memory_usage));
    row.held_diff_pct = pct(row.real_held, static_cast<double>(row.sim.held_usage));
    r.worst_memory_diff_pct = std::max(r.worst_memory_diff_pct, std::fabs(row.memory_diff_pct));
  }
  score_times(r, q.model);
  return r;
}

void score_times(ValidationReport& r, const simulate::TimeModel* model) {
  r.model = model != nullptr;
  for (ValidationRow& row : r.rows) row.sim_time = model ? model->seconds(row.sim) : static_cast<double>(row.sim.steps);
  const ValidationRow& k = kingsley(r);
  std::vector<double> sim_time, real_time;
  r.worst_time_norm_diff_pct = 0;
  for (ValidationRow& row : r.rows) {
    row.sim_time_norm = row.sim_time / k.sim_time;
    row.real_time_norm = row.real_fastest / k.real_fastest;
    row.time_norm_diff_pct = pct(row.real_time_norm, row.sim_time_norm);
    sim_time.push_back(row.sim_time_norm);
    real_time.push_back(row.real_time_norm);
    r.worst_time_norm_diff_pct = std::max(r.worst_time_norm_diff_pct, std::fabs(row.time_norm_diff_pct));
  }
  r.spearman = util::spearman(sim_time, real_time);
}

simulate::TimeModel fit(const std::vector<ValidationReport>& reports) {
  std::vector<simulate::FitRow> rows;
  std::string traces;
  for (const ValidationReport& r : reports) {
    traces += (traces.empty() ? "" : ", ") + std::filesystem::path(r.trace).filename().string();
    for (const ValidationRow& v : r.rows)
      rows.push_back({r.trace, v.dmm, simulate::TimeModel::features(v.sim), v.real_fastest});
  }
  simulate::TimeModel m = simulate::fit_time_model(rows);
  m.machine = machine_name();
  m.fitted_on = std::to_string(rows.size()) + " runs (DMMs x traces) of " + traces + ", the fastest of " +
                std::to_string(reports.empty() ? 0 : reports.front().runs) + " real runs each";
  return m;
}

std::optional<simulate::TimeModel> default_time_model(std::string& error) {
  error.clear();
  std::filesystem::path path;
  if (const char* v = std::getenv("TAILOR_TIME_MODEL"); v != nullptr && *v != '\0') {
    path = v;
  } else {
    path = layout::expected(layout::Item::kDataDir) / "time-model.json";
    if (!std::filesystem::exists(path)) return std::nullopt;  // none fitted for this install: steps
  }
  return simulate::load_time_model(path.string(), error);
}

}  // namespace tailor::deploy
