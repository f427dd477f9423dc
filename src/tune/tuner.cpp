// SPDX-License-Identifier: MIT
// The phases of `tailor tune` (tuner.h). Every comparison is made within
// interleaved rounds against a reference run in the same rounds, as ratios,
// and the median of the per-round ratios is what ranks: a shared machine's
// drift hits both sides of a ratio alike.
#include "tune/tuner.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <thread>
#include <fmt/format.h>


#include "tune/class_proposal.h"
#include "tune/config_install.h"
#include "search/evolution.h"
#include "search/search.h"
#include "layout/layout.h"
#include "tune/program_run.h"
#include "replay/replay_plan.h"
#include "replay/replay_runner.h"
#include "simulate/simulator.h"
#include "tailor/trace/reader.h"
#include "util/statistics.h"
#include "deploy/validation.h"
#include "util/file.h"

namespace tailor::tune {

namespace fs = std::filesystem;
namespace sim = tailor::simulate;
namespace srch = tailor::search;
using Clock = std::chrono::steady_clock;

namespace {

// Variables that would change what a measured run gets: the tuned
// configurations are set through TAILOR_CONFIG alone.
const char* const kTunables[] = {"TAILOR_CLASS_SPACING", "TAILOR_SMALL_MAX",   "TAILOR_MIDDLE_MAX", "TAILOR_LARGE_MAX",
                                 "TAILOR_PAGE_SIZE",     "TAILOR_SEGMENT_SIZE", "TAILOR_PURGE_DELAY", "TAILOR_HEAP_CACHE",
                                 "TAILOR_REMOTE_BATCH",  "TAILOR_HUGE_CACHE",  "TAILOR_HUGE_PAGES", "TAILOR_POOLS",      "TAILOR_POOLS_FILE", "TAILOR_DMM",        "TAILOR_DMM_SIZES",
                                 "TAILOR_DMM_FRONT",     "TAILOR_CLASSES",     "TAILOR_EXACT_CLASSES", "TAILOR_CONFIG"};

using util::median;

double fastest(const std::vector<double>& v) {
  return v.empty() ? std::numeric_limits<double>::quiet_NaN() : *std::min_element(v.begin(), v.end());
}

// `a` measured against `b`, `b` against default libtailor: `a` against
// default libtailor.
Ratios chain(const Ratios& a, const Ratios& b) {
  return {a.time * b.time, a.memory * b.memory, a.fastest_time * b.fastest_time};
}

// "1.023x"
std::string fmt_ratio(double r) {
  std::ostringstream s;
  s.precision(3);
  s << std::fixed << r << "x";
  return s.str();
}

// The smallest heap a ratio is taken of: below, a few pages of difference
// would read as large ratios.
constexpr double kHeapFloor = 256.0 * 1024;

// The most glibc's time is taken to be of default libtailor's when the
// phases after the search are planned (fragmenting-style programs measure
// 5-9x on the replay; beyond 12x, the real runs' 40% cap governs anyway).
constexpr double kGlibcFactorMax = 12.0;

class Tuner {
 public:
  Tuner(const TuneOptions& o, const std::function<void(const Progress&)>& progress)
      : o_(o), progress_(progress), start_(Clock::now()), deadline_(start_ + seconds(o.budget_seconds)) {}

  TuneResult run() {
    for (const char* v : kTunables)
      if (const char* set = std::getenv(v); set != nullptr && *set != '\0')
        r_.notes.push_back(std::string(v) + "=" + set + " is set here: ignored by every measured run");
    for (const auto& c : o_.candidates) add_given(c);  // bad input before the program runs
    prepare_work_dir();
    tools_ = replay::find_tools();
    helper_ = layout::find(layout::Item::kRunHelper).string();
    if (!fs::exists(tools_.libtailor))
      throw std::runtime_error("libtailor.so not found at " + tools_.libtailor + " (build it, or set TAILOR_LIB)");
    try {
      r_.executable = resolve_executable(o_.command.front());
    } catch (const std::runtime_error& e) {
      throw TuneError(e.what());
    }
    record();
    pick_process();
    build_plan();
    default_config_ = write_config("default", Settings{});
    default_ = libtailor_with(default_config_);
    glibc_ = replay::resolve_allocator("glibc", tools_, {});

    if (o_.search) {
      estimate_costs();
      // The phases after the search fit their rounds to the time left (at
      // least one each): they are reserved what their planned rounds need
      // but at most half of what is left, so that a program much faster on
      // libtailor than on glibc, or a machine slowed by a neighbour, still
      // gets a search, with fewer final rounds.
      reserve_ = std::min(reserve_, 0.5 * seconds_until(deadline_));
      const double window = seconds_until(deadline_) - reserve_;
      if (window < 5) {
        r_.notes.push_back("the budget leaves no time to search after recording and the real runs it needs; "
                           "give a larger --budget");
      } else {
        const auto tunables_end = Clock::now() + seconds(window * (traits_.threads > 1 ? 0.75 : 0.6));
        search_tunables(tunables_end);
        search_dmms(deadline_ - seconds(reserve_));
      }
    }
    replay_finalists();
    real_runs();
    pick_winner();
    r_.seconds = seconds_since(start_);
    return std::move(r_);
  }

  ~Tuner() {
    if (remove_work_dir_) {
      std::error_code ec;
      fs::remove_all(work_, ec);
    }
  }

 private:
  static Clock::duration seconds(double s) {
    return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(std::max(0.0, s)));
  }
  static double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
  static double seconds_until(Clock::time_point t) { return std::chrono::duration<double>(t - Clock::now()).count(); }

  void report(const std::string& phase, const std::string& detail) {
    if (progress_) progress_(Progress{phase, detail, r_.replays, std::max(0.0, seconds_until(deadline_))});
  }

  void prepare_work_dir() {
    if (!o_.work_dir.empty()) {
      work_ = fs::absolute(o_.work_dir);
      std::error_code ec;
      fs::create_directories(work_, ec);
      if (ec) throw std::runtime_error(work_.string() + ": cannot create the work directory: " + ec.message());
      return;
    }
    std::string pattern = (fs::temp_directory_path() / "tailor-tune-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr)
      throw std::runtime_error("cannot create a temporary directory like " + pattern);
    work_ = pattern;
    remove_work_dir_ = true;
  }

  // Phase 1: the program under the recorder, its output passing through.
  void record() {
    report("record", o_.command.front());
    const fs::path recorder = fs::canonical(layout::find(layout::Item::kRecorder));
    trace_ = (work_ / "program.trace").string();
    RunSpec spec;
    spec.argv = o_.command;
    spec.unset.assign(std::begin(kTunables), std::end(kTunables));
    spec.set = {"LD_PRELOAD=" + recorder.string(), "TAILOR_RECORD_OUTPUT=" + trace_};
    spec.pid_variable = "TAILOR_RECORD_ROOT_PID";
    spec.stdout_to_stderr = o_.program_output_to_stderr;
    const RunResult run = run_program(spec);
    r_.record_seconds = run.seconds;
    if (run.status != 0)
      throw TuneError(o_.command.front() + " " + describe_status(run) +
                      " while it was recorded; nothing tuned, no config written (tune a run that succeeds)");
    if (!fs::exists(trace_))
      throw TuneError(o_.command.front() + " left no trace (did it run? a static binary cannot be recorded)");
  }

  // The command may run its work in another process (a shell wrapper, a
  // version manager's shim that execs the real program, a driver that
  // forks workers): the recorder wrote a trace per process (FILE.<pid>), and
  // the one tuned is the process that made the most allocation calls.
  void pick_process() {
    std::vector<fs::path> traces;
    for (const auto& e : fs::directory_iterator(work_)) {
      const std::string name = e.path().filename().string();
      if (name == "program.trace" || name.rfind("program.trace.", 0) == 0) traces.push_back(e.path());
    }
    r_.processes = static_cast<unsigned>(traces.size());
    std::uint64_t most = 0;
    for (const fs::path& t : traces) {
      try {
        trace::Reader reader(t.string());
        if (reader.event_count() < most || (reader.event_count() == most && t.string() != trace_)) continue;
        most = reader.event_count();
        trace_ = t.string();
        const trace::Header& h = reader.header();
        r_.process = fmt::format("pid {}: {}", h.pid, fmt::join(h.command_line, " "));
        if (!h.executable.empty()) r_.executable = h.executable;
      } catch (const std::exception&) {
        // a process killed before its first chunk: nothing to tune there
      }
    }
    if (traces.size() > 1)
      r_.notes.push_back("the command ran " + std::to_string(traces.size()) +
                         " processes; tuned the one that made the most allocation calls (" + r_.process +
                         ", " + std::to_string(most) + " events), whose executable keys --install");
  }

  void build_plan() {
    report("plan", "reading the trace");
    trace::Reader reader(trace_);
    r_.events = reader.event_count();
    replay::Plan plan = replay::build_plan(reader);
    r_.calls = plan.summary.calls[0];
    r_.threads = static_cast<unsigned>(plan.threads.size());
    if (r_.calls == 0)
      throw TuneError(o_.command.front() +
                      " made no allocation call the recorder saw; there is nothing to tune, no config written");
    traits_.threads = r_.threads;
    traits_.cross_thread_frees = plan.summary.cross_thread > 0;
    plan_ = (work_ / "program.plan").string();
    replay::write_plan(plan, plan_);
    if (!o_.search) return;
    trace::Reader again(trace_);
    whole_ = sim::load_replay(again);
    for (const std::uint64_t bytes : whole_.sizes) {  // every size in the table was requested
      traits_.large_blocks |= bytes > 128 * 1024;
      traits_.huge_blocks |= bytes > 32 * 1024 * 1024;
    }
    proposal_ = propose_classes(whole_);
    traits_.classes = class_list(proposal_.classes);
  }

  // The cost of one replay and of one real run, measured once each, and the
  // time the phases after the search need (reserve_): the finalists' replay
  // and the real runs, each at the rounds it aims for.
  void estimate_costs() {
    report("calibrate", "replaying on default libtailor and glibc, one real run");
    // Timed apart: glibc's replay may be several times libtailor's, and a
    // libtailor candidate costs what default libtailor's replay costs.
    const auto t0 = Clock::now();
    const double loop = replay::run_driver(tools_, default_, plan_).at("seconds").get<double>();
    replay_cost_ = seconds_since(t0);
    const auto t1 = Clock::now();
    const double glibc_loop = replay::run_driver(tools_, glibc_, plan_).at("seconds").get<double>();
    glibc_replay_cost_ = seconds_since(t1);
    r_.replays += 2;
    // Short loops are noisy: enough rounds that each side measures about
    // a quarter of a second (3 to 9 in the search, 5 to 15 for finalists).
    search_rounds_ = static_cast<unsigned>(std::clamp(std::ceil(0.25 / std::max(loop, 1e-4)), 3.0, 9.0));
    final_rounds_ = static_cast<unsigned>(std::clamp(std::ceil(0.5 / std::max(loop, 1e-4)), 5.0, 15.0));
    real_cost_ = run_program(real_spec(default_config_, true)).seconds;
    // glibc's real run, estimated from its replay against default libtailor's.
    glibc_factor_ = std::clamp(glibc_loop / std::max(loop, 1e-6), 1.0, kGlibcFactorMax);
    reserve_ = final_reserve(kMaxSearchFinalists + o_.candidates.size()) +
               real_reserve(std::min<std::size_t>(2, kMaxSearchFinalists) + o_.candidates.size());
  }

  // Time for the finalists' replay: final_rounds_ rounds of default
  // libtailor, glibc and each finalist.
  double final_reserve(std::size_t finalists) const {
    return static_cast<double>(final_rounds_) * final_round_cost(finalists);
  }
  // One round of the finalists' replay: default libtailor, each finalist, glibc.
  double final_round_cost(std::size_t finalists) const {
    return static_cast<double>(1 + finalists) * replay_cost_ + glibc_replay_cost_;
  }
  // Time for the real runs: --runs rounds of default libtailor, glibc (as
  // much slower as on the replay, at most) and each verified finalist.
  // At most 40% of the budget: a long program gets fewer rounds rather than
  // no search at all.
  double real_reserve(std::size_t verified) const {
    const double all = static_cast<double>(std::max(1u, o_.runs)) *
                       (static_cast<double>(1 + verified) + glibc_factor_) * real_cost_ * 1.1;
    return std::min(all, 0.4 * o_.budget_seconds);
  }

  RunSpec real_spec(const std::string& config, bool libtailor) const {
    RunSpec s;
    s.argv = o_.command;
    s.quiet = true;
    s.helper = helper_;
    s.unset.assign(std::begin(kTunables), std::end(kTunables));
    if (libtailor) s.set = {"LD_PRELOAD=" + tools_.libtailor, "TAILOR_CONFIG=" + config};
    else s.unset.push_back("LD_PRELOAD");
    return s;
  }

  replay::Allocator libtailor_with(const std::string& config) const {
    replay::Allocator a = replay::resolve_allocator("libtailor", tools_, {});
    a.env = {"TAILOR_CONFIG=" + config};
    for (const char* v : kTunables)
      if (std::string_view(v) != "TAILOR_CONFIG") a.env.push_back(v);  // removed
    return a;
  }

  std::string write_config(const std::string& name, const Settings& s) {
    const std::string path = (work_ / (name + ".conf")).string();
    write_file(path, config_text(s, "tailor tune candidate " + name), "candidate config");
    return path;
  }

  void add_given(const std::string& file) {
    if (!fs::is_regular_file(file)) throw TuneError("--candidate " + file + ": no such file");
    Finalist f;
    f.label = fs::path(file).filename().string();
    f.settings.given = fs::absolute(file).string();
    f.origin = "given";
    f.config = fs::absolute(file).string();
    given_.push_back(std::move(f));
  }

  // Replays every allocator in `alts` and `ref` in `rounds` interleaved
  // rounds; returns each alt's median per-round ratios to ref (time of the
  // loop; peak heap = VmHWM - VmRSS before the loop, at least kHeapFloor).
  // `wins`, if given, counts for each alt the rounds in which the
  // objective's own measure was better than ref's (the limit on the other
  // is judged on the medians).
  std::vector<Ratios> compare(const replay::Allocator& ref, const std::vector<replay::Allocator>& alts, unsigned rounds,
                              std::vector<Row>* rows = nullptr, const std::vector<std::string>* labels = nullptr,
                              std::vector<unsigned>* wins = nullptr,
                              const std::function<bool(double)>& another_round = {}) {
    if (wins != nullptr) wins->assign(alts.size(), 0);
    std::vector<std::vector<double>> t(alts.size()), m(alts.size());
    std::vector<std::vector<double>> raw_t(alts.size() + 1), raw_m(alts.size() + 1);
    auto round_start = Clock::now();
    for (unsigned round = 0; round < rounds; ++round) {
      // Asked with the last round's length before each round after the first.
      if (round > 0 && another_round && !another_round(seconds_since(round_start))) break;
      round_start = Clock::now();
      auto replay_once = [&](const replay::Allocator& a) {
        const nlohmann::json j = replay::run_driver(tools_, a, plan_);
        ++r_.replays;
        const double peak = j.at("peak_rss_bytes").get<double>() - j.at("rss_before_bytes").get<double>();
        return std::pair{j.at("seconds").get<double>(), std::max(0.0, peak)};
      };
      const auto [rt, rm] = replay_once(ref);
      raw_t[0].push_back(rt);
      raw_m[0].push_back(rm);
      for (std::size_t i = 0; i < alts.size(); ++i) {
        const auto [at, am] = replay_once(alts[i]);
        t[i].push_back(at / rt);
        m[i].push_back(std::max(kHeapFloor, am) / std::max(kHeapFloor, rm));
        if (wins != nullptr && tune::measure(o_.objective, Ratios{t[i].back(), m[i].back(), t[i].back()}) < 1.0) ++(*wins)[i];
        raw_t[i + 1].push_back(at);
        raw_m[i + 1].push_back(am);
      }
    }
    std::vector<Ratios> out;
    for (std::size_t i = 0; i < alts.size(); ++i)
      out.push_back(Ratios{median(t[i]), median(m[i]), fastest(raw_t[i + 1]) / fastest(raw_t[0])});
    if (rows != nullptr)
      for (std::size_t i = 0; i <= alts.size(); ++i) {
        Row row;
        row.label = (*labels)[i];
        row.seconds = median(raw_t[i]);
        row.seconds_min = *std::min_element(raw_t[i].begin(), raw_t[i].end());
        row.seconds_max = *std::max_element(raw_t[i].begin(), raw_t[i].end());
        row.peak = median(raw_m[i]);
        row.vs_default = i == 0 ? Ratios{} : out[i - 1];
        rows->push_back(row);
      }
    return out;
  }

  static bool valid(const Settings& s) {
    auto bytes = [&](const char* key, double def) {
      auto it = s.values.find(key);
      if (it == s.values.end()) return def;
      const std::string& v = it->second;
      double x = std::stod(v);
      switch (v.back()) {
        case 'K': x *= 1024; break;
        case 'M': x *= 1024 * 1024; break;
        case 'G': x *= 1024.0 * 1024 * 1024; break;
        default: break;
      }
      return x;
    };
    const double page = bytes("page_size", 64 * 1024);
    const double small = bytes("small_max", std::min(1024.0, page / 8));
    const double middle = bytes("middle_max", 128 * 1024);
    return small <= page / 8 && small <= middle;
  }

  // Phase 2: coordinate descent over the tunables from libtailor's defaults.
  // Each dimension's values are replayed against the incumbent in the same
  // rounds; the best becomes the incumbent if it gains at least 1%.
  void search_tunables(Clock::time_point end) {
    Settings incumbent;
    Ratios inc_vs_default;  // the incumbent against default libtailor, chained from the comparisons
    const auto dims = tunable_space(o_.objective, traits_);
    for (const Dimension& d : dims) {
      if (Clock::now() >= end) {
        r_.notes.push_back("the tunables search stopped at the budget before " + d.name);
        break;
      }
      std::vector<Settings> alts;
      const auto cur = incumbent.values.find(d.name);
      const std::string current = cur == incumbent.values.end() ? d.values.front() : cur->second;
      for (const auto& v : d.values) {
        if (v == current) continue;
        Settings s = incumbent;
        if (v == d.values.front()) s.values.erase(d.name);
        else s.values[d.name] = v;
        if (valid(s)) alts.push_back(std::move(s));
      }
      if (alts.empty()) continue;
      // The rounds the loop's length asks for, fewer (at least 2) if the
      // time left for the search is short.
      const double per_round = replay_cost_ * static_cast<double>(alts.size() + 1);
      unsigned rounds = search_rounds_;
      while (rounds > 2 && per_round * rounds > seconds_until(end) / 2) --rounds;
      if (per_round * rounds > seconds_until(end) + replay_cost_) {
        r_.notes.push_back("the tunables search stopped at the budget before " + d.name);
        break;
      }
      report("tunables", d.name + ": " + std::to_string(alts.size()) + " values against " + describe(incumbent));
      std::vector<replay::Allocator> as;
      for (std::size_t i = 0; i < alts.size(); ++i)
        as.push_back(libtailor_with(write_config("t" + std::to_string(r_.tunables_tried + i), alts[i])));
      std::vector<unsigned> wins;
      const std::vector<Ratios> ratios =
          compare(libtailor_with(write_config("incumbent", incumbent)), as, rounds, nullptr, nullptr, &wins);
      r_.tunables_tried += static_cast<unsigned>(alts.size());
      // A value replaces the incumbent if its median gain is at least 2% and
      // it won at least three rounds in four: on a shared machine, a
      // one-round fluke must not walk the search away from the defaults.
      std::size_t best = alts.size();
      double best_score = score(o_.objective, inc_vs_default);
      for (std::size_t i = 0; i < alts.size(); ++i) {
        const Ratios chained = chain(ratios[i], inc_vs_default);
        const double sc = score(o_.objective, chained);
        if (sc < best_score * 0.98 && wins[i] * 4 >= rounds * 3) {
          best_score = sc;
          best = i;
        }
      }
      if (best < alts.size()) {
        inc_vs_default = chain(ratios[best], inc_vs_default);
        incumbent = alts[best];
      }
    }
    if (!incumbent.values.empty()) {
      Finalist f;
      f.label = "tuned";
      f.origin = "tunables";
      f.settings = incumbent;
      f.config = write_config("tuned", incumbent);
      search_finalists_.push_back(std::move(f));
    }
    // Exact classes (docs/allocator.md, "Added classes"): not searched on
    // the replay, where nothing can tell whether the program needs 16-byte
    // alignment, but a finalist of their own, kept only if the program's
    // output is the same on every real run.
    if (o_.objective != Objective::kTime && !proposal_.exact.empty()) {
      Finalist f;
      f.label = "exact-classes";
      f.origin = "exact";
      f.settings = incumbent;
      f.settings.values["exact_classes"] = class_list(proposal_.exact);
      f.config = write_config("exact", f.settings);
      f.gives_up = "16-byte alignment of " + class_list(proposal_.exact) +
                   "-byte blocks (8-byte aligned: C's malloc rule and GCC's vectorizer expect 16)";
      search_finalists_.push_back(std::move(f));
    }
  }

  // Phase 3: the DMM search, on the simulator, until `end`; the best few of
  // the final Pareto front (by the objective's weights) become finalists.
  void search_dmms(Clock::time_point end) {
    if (seconds_until(end) < 3) {
      r_.notes.push_back("no time left for the DMM search");
      return;
    }
    std::string why;
    const std::optional<sim::TimeModel> model = deploy::default_time_model(why);
    if (!why.empty()) r_.notes.push_back(why + ": the DMM search ranked time by steps");
    srch::SearchRequest q;  // tailor search's search, on the recorded trace, until `end`
    q.traces = {"the recorded trace"};
    q.in_memory = {&whole_};
    q.grammar = layout::data_file("search/dmm.bnf").string();
    switch (o_.objective) {
      case Objective::kTime: q.weights = {1, 0.1, 0}; break;
      case Objective::kMemory: q.weights = {0.1, 1, 0}; break;
      default: q.weights = {1, 1, 0}; break;
    }
    q.seed = o_.seed;
    q.population = 30;
    q.generations = 100000;  // until `end`: budget left is searched, not returned
    q.pareto = true;
    q.sample = 300000;
    q.threads = std::max(1u, std::thread::hardware_concurrency());
    q.time_model = model ? &*model : nullptr;
    q.compare_builtins = false;
    q.stop = [&] { return Clock::now() >= end; };
    // A line when the best changes, or after two quiet seconds: a search
    // that converged early (its evaluations cached) would print the same
    // line for every tenth generation.
    double shown_best = -1;
    Clock::time_point shown_at{};
    q.progress = [&](unsigned gen, double best, double) {
      r_.generations = gen;
      const Clock::time_point now = Clock::now();
      if (best == shown_best && now - shown_at < std::chrono::seconds(2)) return;
      shown_best = best;
      shown_at = now;
      report("dmm search", "generation " + std::to_string(gen) + ", best fitness " + std::to_string(best).substr(0, 6) +
                               " (normalized to Kingsley)");
    };
    // No valid DMM within the budget (or none measurable on the whole
    // trace) leaves tune without DMM finalists, not without a verdict.
    srch::SearchReport found;
    try {
      found = srch::run(q);
    } catch (const std::runtime_error& e) {
      r_.notes.push_back(std::string("the DMM search gave no finalist: ") + e.what());
      return;
    }
    // The found DMM (measured on the whole trace), then the Pareto front's
    // others, each once, with the trace's sizes for exact classes.
    const std::vector<std::uint64_t>& sizes = found.sizes;
    std::vector<sim::DmmSpec> picks;
    auto add = [&](sim::DmmSpec spec) {
      spec.name.clear();
      if (spec.uses_exact_classes()) spec.exact_sizes = sizes;
      if (picks.size() < kMaxSearchFinalists && std::find(picks.begin(), picks.end(), spec) == picks.end())
        picks.push_back(std::move(spec));
    };
    add(found.found);
    for (const auto& ind : found.result.front)
      if (ind.spec && picks.size() < kMaxSearchFinalists - 1) add(*ind.spec);
    for (std::size_t i = 0; i < picks.size(); ++i) {
      sim::DmmSpec spec = picks[i];
      spec.name = "dmm-" + std::to_string(i + 1);
      const std::string path = (work_ / (spec.name + ".json")).string();
      Finalist f;
      f.dmm_spec = sim::to_json(spec).dump(2) + "\n";
      write_file(path, f.dmm_spec, "DMM spec");
      f.label = spec.name;
      f.origin = "dmm";
      f.settings.dmm = path;
      f.config = write_config(spec.name, f.settings);
      search_finalists_.push_back(std::move(f));
    }
  }

  // Phase 4: the finalists and glibc against default libtailor, 5 rounds
  // (fewer if the budget is short). Search finalists that do not beat
  // default libtailor on the replay go no further; given ones always do.
  void replay_finalists() {
    std::vector<Finalist> all = search_finalists_;
    all.insert(all.end(), given_.begin(), given_.end());
    std::vector<replay::Allocator> alts = {glibc_};
    std::vector<std::string> labels = {"libtailor (default)", "glibc"};
    for (const auto& f : all) {
      alts.push_back(libtailor_with(f.config));
      labels.push_back(f.label);
    }
    const double per_round = std::max(final_round_cost(all.size()), 0.01);
    const double keep = real_reserve(std::min<std::size_t>(2, search_finalists_.size()) + given_.size());
    unsigned rounds = final_rounds_;
    while (rounds > 1 && per_round * rounds > seconds_until(deadline_) - keep) --rounds;
    report("finalists", std::to_string(all.size()) + " configurations and glibc against default libtailor, " +
                            std::to_string(rounds) + " rounds");
    // The costs were measured once, at the start: a machine that has grown
    // slower since (a neighbour's load) makes each round, and the real runs
    // after them, as much longer. A round starts only if it and the real
    // runs, both scaled by the slowdown seen, end within the budget.
    r_.replay_rounds = 1;
    auto another_round = [&](double last) {
      const double slower = std::max(1.0, last / per_round);
      const bool fits = last + keep * slower <= seconds_until(deadline_);
      r_.replay_rounds += fits ? 1 : 0;
      return fits;
    };
    const std::vector<Ratios> ratios = compare(default_, alts, rounds, &r_.replay_rows, &labels, nullptr, another_round);
    // glibc's replay against default libtailor's, now from every round: the
    // real runs' rounds are planned with it.
    if (r_.replay_rows.size() > 1)
      glibc_factor_ = std::clamp(r_.replay_rows[1].seconds / std::max(r_.replay_rows[0].seconds, 1e-6), 1.0, kGlibcFactorMax);
    for (std::size_t i = 0; i < all.size(); ++i) {
      all[i].replay = ratios[i + 1];
      if (all[i].origin != "given") all[i].why_not = replay_refusal(ratios[i + 1]);
      r_.finalists.push_back(all[i]);
    }
  }

  // Why a search finalist goes no further than the replay (empty: it goes
  // on). The replay measures allocation calls alone: the memory objective
  // asks it for less peak heap only, and judges time on the program's own
  // runs, where allocation is a part of the time.
  std::string replay_refusal(const Ratios& r) const {
    auto x = [](double v) { return fmt_ratio(v); };
    switch (o_.objective) {
      case Objective::kTime:
        if (r.time >= 1.0) return "time on the replay " + x(r.time) + " default libtailor's (the time objective needs less)";
        if (r.memory > kOtherLimit)
          return "peak heap on the replay " + x(r.memory) + " default libtailor's (the time objective allows 1.10x)";
        return {};
      case Objective::kMemory:
        if (r.memory >= 1.0)
          return "peak heap on the replay " + x(r.memory) + " default libtailor's (the memory objective needs less)";
        return {};
      default:
        if (score(o_.objective, r) >= 1.0)
          return "geometric mean of time and peak heap on the replay " + x(score(o_.objective, r)) +
                 " default libtailor's (the balanced objective needs less)";
        return {};
    }
  }

  // Phase 5: the program itself, in interleaved rounds, its output captured
  // and compared with default libtailor's.
  void real_runs() {
    std::vector<std::size_t> verify;
    for (std::size_t i = 0; i < r_.finalists.size(); ++i)
      if (r_.finalists[i].why_not.empty()) verify.push_back(i);
    // Search finalists: the best on the replay for the objective, one per
    // origin; given candidates: all.
    std::map<std::string, std::size_t> best_of;
    std::vector<std::size_t> picked;
    for (std::size_t i : verify) {
      const Finalist& f = r_.finalists[i];
      if (f.origin == "given") {
        picked.push_back(i);
        continue;
      }
      auto it = best_of.find(f.origin);
      if (it == best_of.end() || score(o_.objective, *f.replay) < score(o_.objective, *r_.finalists[it->second].replay))
        best_of[f.origin] = i;
    }
    for (std::size_t i : verify)
      if (r_.finalists[i].origin != "given" && best_of[r_.finalists[i].origin] != i)
        r_.finalists[i].why_not = "another " + r_.finalists[i].origin + " finalist did better on the replay";
    for (const auto& [origin, i] : best_of) picked.push_back(i);
    std::sort(picked.begin(), picked.end());

    std::vector<RunSpec> specs;
    std::vector<std::string> labels = {"libtailor (default)", "glibc"};
    specs.push_back(real_spec(default_config_, true));
    specs.push_back(real_spec("", false));
    for (std::size_t i : picked) {
      specs.push_back(real_spec(r_.finalists[i].config, true));
      labels.push_back(r_.finalists[i].label);
    }
    for (RunSpec& spec : specs) spec.capture_stdout = true;
    std::vector<std::string> failed(specs.size());           // how a finalist's run failed, if one did
    std::vector<std::vector<std::uint64_t>> outputs(specs.size());
    // Rounds: as many as fit (at least one), at most --runs.
    if (real_cost_ == 0) real_cost_ = r_.record_seconds / 1.5;
    const double per_round =
        std::max(0.01, real_cost_ * 1.1) * (static_cast<double>(specs.size() - 1) + glibc_factor_);
    unsigned rounds = std::max(1u, o_.runs);
    while (rounds > 1 && per_round * rounds > seconds_until(deadline_)) --rounds;
    std::vector<std::vector<double>> t(specs.size()), m(specs.size()), rt(specs.size()), rm(specs.size());
    for (unsigned round = 0; round < rounds; ++round) {
      // A round is as long as the last one was (the estimate above knows
      // default libtailor's time only; glibc may be several times slower):
      // one that would end past the budget is not started.
      const auto round_start = Clock::now();
      if (round > 0 && Clock::now() + last_round_ > deadline_) {
        rounds = round;
        break;
      }
      for (std::size_t k = 0; k < specs.size(); ++k) {
        if (!failed[k].empty()) continue;
        report("real runs", "round " + std::to_string(round + 1) + "/" + std::to_string(rounds) + ": " + labels[k]);
        const RunResult run = run_program(specs[k]);
        if (run.status != 0 && k < 2)
          throw TuneError(o_.command.front() + " " + describe_status(run) + " under " + labels[k] +
                          " (its output is discarded in the real runs; run it so to see why); no config written");
        if (run.status != 0) {  // a finalist broke the program: it goes no further
          failed[k] = "the program " + describe_status(run) + " under it (default libtailor's runs succeed)";
          continue;
        }
        t[k].push_back(run.seconds);
        m[k].push_back(run.peak_rss);
        outputs[k].push_back(run.output_hash);
      }
      for (std::size_t k = 0; k < specs.size(); ++k) {
        if (!failed[k].empty()) continue;
        rt[k].push_back(t[k].back() / t[0].back());
        rm[k].push_back(m[k].back() / m[0].back());
      }
      last_round_ = Clock::now() - round_start;
    }
    if (rounds < 3) r_.notes.push_back("only " + std::to_string(rounds) + " real round(s) fit in the budget: noisy");
    r_.real_rounds = rounds;
    // The program's output: the same on every run of default libtailor, and
    // a finalist's the same as that (a finalist that changes what the
    // program computes is no tuning).
    const bool steady = std::all_of(outputs[0].begin(), outputs[0].end(), [&](std::uint64_t h) { return h == outputs[0][0]; });
    if (!steady) r_.notes.push_back("the program's output differs between runs of default libtailor: it cannot tell "
                                    "whether a configuration changes it (exact classes are not kept)");
    for (std::size_t k = 2; k < specs.size(); ++k) {
      Finalist& f = r_.finalists[picked[k - 2]];
      if (!failed[k].empty()) {
        f.why_not = failed[k];
        continue;
      }
      const bool same = steady && std::all_of(outputs[k].begin(), outputs[k].end(),
                                              [&](std::uint64_t h) { return h == outputs[0][0]; });
      if (steady && !same)
        f.why_not = "the program's output under it differs from its output under default libtailor";
      else if (!steady && f.origin == "exact")
        f.why_not = "not verified: the program's output differs between runs of default libtailor";
    }
    for (std::size_t k = 0; k < specs.size(); ++k) {
      if (!failed[k].empty()) continue;
      Row row;
      row.label = labels[k];
      row.seconds = median(t[k]);
      row.seconds_min = *std::min_element(t[k].begin(), t[k].end());
      row.seconds_max = *std::max_element(t[k].begin(), t[k].end());
      row.peak = median(m[k]);
      row.vs_default = Ratios{median(rt[k]), median(rm[k]), fastest(t[k]) / fastest(t[0])};
      r_.real_rows.push_back(row);
      if (k >= 2) {
        Finalist& f = r_.finalists[picked[k - 2]];
        f.verified = true;
        f.real = row.vs_default;
        f.real_seconds = row.seconds;
        f.real_peak_rss = row.peak;
      }
    }
  }

  void pick_winner() {
    double best = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < r_.finalists.size(); ++i) {
      Finalist& f = r_.finalists[i];
      if (!f.verified || !f.why_not.empty()) continue;
      std::string why;
      if (!wins_real(o_.objective, *f.real, why, o_.max_slowdown)) {
        f.why_not = why;
        continue;
      }
      // The best score; of two within a percent of each other, the one
      // better on the other measure (the memory objective: the faster).
      const double sc = score(o_.objective, *f.real, o_.max_slowdown);
      const Finalist* w = r_.winner >= 0 ? &r_.finalists[static_cast<std::size_t>(r_.winner)] : nullptr;
      const bool tie = w != nullptr && std::fabs(sc - best) <= 0.01;
      const double other = o_.objective == Objective::kMemory ? f.real->time : f.real->memory;
      const double w_other = w == nullptr ? 0 : o_.objective == Objective::kMemory ? w->real->time : w->real->memory;
      if (tie ? other < w_other : sc < best) {
        best = tie ? std::min(best, sc) : sc;
        r_.winner = static_cast<int>(i);
      }
    }
    for (std::size_t i = 0; i < r_.finalists.size(); ++i)
      if (r_.finalists[i].verified && r_.finalists[i].why_not.empty() && static_cast<int>(i) != r_.winner)
        r_.finalists[i].why_not = "another finalist did better on the real runs";
  }

  const TuneOptions& o_;
  std::function<void(const Progress&)> progress_;
  Clock::time_point start_, deadline_;
  TuneResult r_;
  fs::path work_;
  bool remove_work_dir_ = false;
  replay::Tools tools_;
  std::string trace_, plan_, default_config_, helper_;
  sim::ReplayTrace whole_;  // the trace as the simulator replays it
  TraceTraits traits_;
  replay::Allocator default_, glibc_;
  double replay_cost_ = 0.05, glibc_replay_cost_ = 0.05, reserve_ = 0, real_cost_ = 0;
  Clock::duration last_round_{};
  double glibc_factor_ = 2;  // glibc's time over default libtailor's, from the calibration replays
  static constexpr std::size_t kMaxSearchFinalists = 3;  // the tuned tunables and two DMMs
  unsigned search_rounds_ = 3, final_rounds_ = 5;
  std::vector<Finalist> search_finalists_, given_;
  ClassProposal proposal_;
};

}  // namespace

bool wins_real(Objective o, const Ratios& real, std::string& why, double max_slowdown) {
  auto pct = [](double r) {
    std::ostringstream s;
    s.precision(1);
    s << std::fixed << std::showpos << (r - 1) * 100 << "%";
    return s.str();
  };
  const double bar = 1 - kMinGain;
  const std::string short_of = " (a winner must gain " + std::to_string(std::lround(kMinGain * 100)) + "%)";
  switch (o) {
    case Objective::kTime:
      if (real.time > 1.0) why = "slower than default libtailor on the real runs (" + pct(real.time) + " time)";
      else if (real.time > bar) why = "within the noise of default libtailor on the real runs (" + pct(real.time) + " time)" + short_of;
      else if (real.memory > kOtherLimit) why = "peak RSS above 1.1x default libtailor's (" + pct(real.memory) + ")";
      break;
    case Objective::kMemory:
      if (real.memory >= 1.0) why = "no less peak RSS than default libtailor on the real runs (" + pct(real.memory) + ")";
      else if (real.memory > bar)
        why = "within the noise of default libtailor on the real runs (" + pct(real.memory) + " peak RSS)" + short_of;
      else if (too_slow(real, max_slowdown))
        why = "time above " + fmt_ratio(max_slowdown) + " default libtailor's on the real runs (--max-slowdown; median " +
              pct(real.time) + ", fastest run " + pct(real.fastest_time) + ")";
      break;
    default:
      if (const double sc = score(o, real); sc > bar)
        why = "no better than default libtailor on the real runs (time " + pct(real.time) + ", peak RSS " +
              pct(real.memory) + ")" + (sc < 1.0 ? short_of : "");
      break;
  }
  return why.empty();
}

TuneResult tune(const TuneOptions& options, const std::function<void(const Progress&)>& progress) {
  if (options.command.empty()) throw TuneError("no command given (usage: tailor tune [OPTIONS] -- CMD ARGS...)");
  if (!options.search && options.candidates.empty())
    throw TuneError("--no-search needs at least one --candidate to verify");
  return Tuner(options, progress).run();
}

}  // namespace tailor::tune
