// SPDX-License-Identifier: MIT
// `tailor record` end to end: the support programs (tests/support) and a few
// real programs run under the recorder; their traces are opened with the
// Reader and checked against what each program is known to do. Also `tailor
// dump`, and `tailor record` of a command that does not exist.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "tailor/trace/event.h"
#include "tailor/trace/reader.h"
#include "tailor/trace/writer.h"
#include "analyze/trace_stats.h"
#include "common/child_process.h"
#include "common/temp_dir.h"
#include "common/trace_file.h"
#include "analyze/symbolizer.h"

namespace {

namespace fs = std::filesystem;
namespace tr = tailor::trace;
using tr::Event;
using tr::Op;

// --- processes -------------------------------------------------------------------

using tailor::test::TempDir;

using tailor::test::Child;
using tailor::test::Result;
using tailor::test::run;

std::vector<std::string> record_argv(const std::string& trace, std::vector<std::string> command) {
  std::vector<std::string> argv = {TAILOR_BIN, "record", "-o", trace, "--"};
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return "exit " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return std::string("signal ") + strsignal(WTERMSIG(status));
  return "status " + std::to_string(status);
}

// Whether two wait statuses mean the same ending (core-dump bits aside).
bool same_ending(int a, int b) {
  if (WIFEXITED(a) && WIFEXITED(b)) return WEXITSTATUS(a) == WEXITSTATUS(b);
  if (WIFSIGNALED(a) && WIFSIGNALED(b)) return WTERMSIG(a) == WTERMSIG(b);
  return false;
}

// --- traces ------------------------------------------------------------------------

std::size_t count_if_op(const std::vector<Event>& v, Op op, std::uint64_t size) {
  return static_cast<std::size_t>(
      std::count_if(v.begin(), v.end(), [&](const Event& e) { return e.op == op && e.size == size; }));
}

// Per thread index, that thread's events in trace order.
std::map<std::uint32_t, std::vector<Event>> by_thread(const std::vector<Event>& v) {
  std::map<std::uint32_t, std::vector<Event>> m;
  for (const auto& e : v) m[e.thread].push_back(e);
  return m;
}

// Every release of a non-null block matches a block allocated earlier (in the
// merged order) and not yet released; returns the number that do not.
std::size_t unmatched_releases(const std::vector<Event>& v) {
  std::set<std::uint64_t> live;
  std::size_t bad = 0;
  for (const auto& e : v) {
    if (tr::is_allocation(e.op) && e.address) {
      live.insert(e.address);
    } else if (tr::is_release(e.op) && e.address) {
      if (!live.erase(e.address)) ++bad;
    } else if (e.op == Op::Realloc) {
      if (e.aux && (e.address || e.size == 0) && !live.erase(e.aux)) ++bad;
      if (e.address) live.insert(e.address);
    }
  }
  return bad;
}

std::string canonical(const std::string& p) { return fs::canonical(p).string(); }

// --- exit kinds ----------------------------------------------------------------------

constexpr std::size_t kExitsBlockSize = 7001;  // tests/support/exits.cpp
constexpr std::size_t kExitsBlocks = 7;

struct ExitCase {
  const char* how;
  std::optional<tr::EndReason> reason;  // none: killed, no end record
  int exit_code;                        // -1: dies of `signal`
  int signal;
};

// Names the case in test listings (ctest shows GetParam() through this).
void PrintTo(const ExitCase& c, std::ostream* os) { *os << c.how; }

class ExitKinds : public ::testing::TestWithParam<ExitCase> {};

TEST_P(ExitKinds, TraceEndsAndStatusPassesThrough) {
  const ExitCase& c = GetParam();
  TempDir dir;
  std::string trace = dir.file("e.trace");
  Result plain = run({EXITS, c.how});
  Result rec = run(record_argv(trace, {EXITS, c.how}));
  ASSERT_FALSE(rec.timed_out);

  // tailor record ends exactly as the program does on its own.
  EXPECT_TRUE(same_ending(rec.status, plain.status))
      << "recorded: " << describe_status(rec.status) << ", plain: " << describe_status(plain.status) << "\n" << rec.err;
  if (c.exit_code >= 0) {
    ASSERT_TRUE(WIFEXITED(rec.status)) << describe_status(rec.status);
    EXPECT_EQ(WEXITSTATUS(rec.status), c.exit_code);
  } else {
    ASSERT_TRUE(WIFSIGNALED(rec.status)) << describe_status(rec.status);
    EXPECT_EQ(WTERMSIG(rec.status), c.signal);
  }
  EXPECT_EQ(rec.out, "");

  ASSERT_TRUE(fs::exists(trace)) << rec.err;
  tr::Reader r(trace);
  std::vector<Event> events = r.read_all();
  EXPECT_EQ(r.header().ppid, static_cast<std::uint32_t>(rec.pid));  // the recorded process is tailor's child
  EXPECT_EQ(r.header().executable, canonical(EXITS));
  if (c.reason) {
    EXPECT_TRUE(r.complete()) << r.cut();
    ASSERT_TRUE(r.end().has_value());
    EXPECT_EQ(r.end()->reason, *c.reason);
    EXPECT_EQ(r.end()->status, c.exit_code >= 0 ? c.exit_code : c.signal) << "end record status";
    EXPECT_EQ(r.end()->events, r.event_count());
    EXPECT_EQ(r.end()->dropped, 0u);
    EXPECT_EQ(count_if_op(events, Op::Malloc, kExitsBlockSize), kExitsBlocks);
  } else {
    EXPECT_FALSE(r.end().has_value());
    EXPECT_NE(r.cut().find("no end record"), std::string::npos) << r.cut();
    EXPECT_GT(r.event_count(), 0u);
  }
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.front().op, Op::ThreadStart);
  EXPECT_EQ(events.front().size, r.header().pid);  // the main thread's tid is the pid
}

INSTANTIATE_TEST_SUITE_P(Record, ExitKinds,
                         ::testing::Values(ExitCase{"exit", tr::EndReason::Exit, 3, 0},
                                           ExitCase{"_exit", tr::EndReason::FastExit, 3, 0},
                                           ExitCase{"return", tr::EndReason::Exit, 3, 0},
                                           ExitCase{"abort", tr::EndReason::Abort, -1, SIGABRT},
                                           ExitCase{"signal", std::nullopt, -1, SIGTERM}),
                         [](const ::testing::TestParamInfo<ExitCase>& p) {
                           return std::string(p.param.how[0] == '_' ? "fast_exit" : p.param.how);
                         });

TEST(Record, CommandLineWithEmptyArguments) {
  TempDir dir;
  std::string trace = dir.file("c.trace");
  Result rec = run(record_argv(trace, {EXITS, "return", "", "middle arg", "", "x"}));
  ASSERT_TRUE(WIFEXITED(rec.status)) << describe_status(rec.status);
  tr::Reader r(trace);
  EXPECT_EQ(r.header().command_line, (std::vector<std::string>{EXITS, "return", "", "middle arg", "", "x"}));
}

// `prog a ""`: the last argument is empty and must still be there.
TEST(Record, CommandLineWithTrailingEmptyArgument) {
  TempDir dir;
  std::string trace = dir.file("c.trace");
  Result rec = run(record_argv(trace, {EXITS, "return", "a", ""}));
  ASSERT_TRUE(WIFEXITED(rec.status)) << describe_status(rec.status);
  tr::Reader r(trace);
  EXPECT_EQ(r.header().command_line, (std::vector<std::string>{EXITS, "return", "a", ""}));
}

// --- SIGKILL -----------------------------------------------------------------------------

// The children of `parent`, from /proc/*/stat.
std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> kids;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    std::string name = entry.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) continue;
    std::ifstream in(entry.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(in)), {});
    std::size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 1));
    std::string state;
    long ppid = 0;
    rest >> state >> ppid;
    if (ppid == parent) kids.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return kids;
}

TEST(Record, SigkillLeavesReadableCutTrace) {
  TempDir dir;
  std::string trace = dir.file("k.trace");
  Child tailor(record_argv(trace, {ENDLESS_ALLOC}));
  ASSERT_TRUE(tailor.wait_for_output("recording\n", std::chrono::seconds(60))) << tailor.err();
  std::vector<pid_t> kids = children_of(tailor.pid());
  ASSERT_EQ(kids.size(), 1u) << "children of tailor record (" << tailor.pid() << ")";
  ASSERT_EQ(kill(kids[0], SIGKILL), 0);
  int status = tailor.wait();
  ASSERT_FALSE(tailor.timed_out());
  ASSERT_TRUE(WIFSIGNALED(status)) << describe_status(status) << "\n" << tailor.err();
  EXPECT_EQ(WTERMSIG(status), SIGKILL);

  // What went wrong, if anything does (this test failed once on a loaded
  // machine, without its output kept).
  const std::string context = "trace " + std::to_string(fs::file_size(trace)) + " bytes; tailor said: " + tailor.err();
  tr::Reader r(trace);
  EXPECT_FALSE(r.complete()) << context;
  EXPECT_FALSE(r.end().has_value()) << context;
  EXPECT_NE(r.cut().find("trace cut at byte"), std::string::npos) << r.cut() << "\n" << context;
  EXPECT_EQ(r.header().pid, static_cast<std::uint32_t>(kids[0])) << context;
  std::vector<Event> events = r.read_all();
  ASSERT_EQ(events.size(), r.event_count()) << context;
  ASSERT_FALSE(events.empty()) << context;
  EXPECT_EQ(events.front().op, Op::ThreadStart) << context;
  EXPECT_EQ(unmatched_releases(events), 0u) << events.size() << " events; " << context;
}

// --- threads ------------------------------------------------------------------------------

constexpr int kWorkers = 4;               // tests/support/threads_cross_free.cpp
constexpr std::size_t kWorkerBlocks = 1000;
constexpr std::size_t kWorkerSize = 4099;
constexpr std::size_t kMainSize = 4111;

struct ThreadsRun {
  TempDir dir;
  std::string trace;
  Result result;
  ThreadsRun() : trace(dir.file("t.trace")) { result = run(record_argv(trace, {THREADS_CROSS_FREE})); }
};

TEST(Record, ThreadsWithCrossThreadFrees) {
  ThreadsRun t;
  ASSERT_TRUE(WIFEXITED(t.result.status) && WEXITSTATUS(t.result.status) == 0)
      << describe_status(t.result.status) << "\n" << t.result.err;
  tr::Reader r(t.trace);
  EXPECT_TRUE(r.complete()) << r.cut();
  std::vector<Event> events = r.read_all();
  const std::uint32_t pid = r.header().pid;

  // The blocks: exactly kWorkers * kWorkerBlocks, each freed once, by another thread.
  std::unordered_map<std::uint64_t, std::uint32_t> owner;  // live worker block -> allocating thread
  std::map<std::uint32_t, std::size_t> allocated_by;
  std::size_t frees = 0, cross = 0;
  for (const auto& e : events) {
    if (e.op == Op::Malloc && e.size == kWorkerSize) {
      ASSERT_TRUE(owner.emplace(e.address, e.thread).second) << "block allocated twice while live";
      ++allocated_by[e.thread];
    } else if (e.op == Op::Free) {
      auto it = owner.find(e.address);
      if (it == owner.end()) continue;
      ++frees;
      if (it->second != e.thread) ++cross;
      owner.erase(it);
    }
  }
  EXPECT_EQ(frees, kWorkers * kWorkerBlocks);
  EXPECT_EQ(cross, kWorkers * kWorkerBlocks);
  EXPECT_TRUE(owner.empty());
  ASSERT_EQ(allocated_by.size(), static_cast<std::size_t>(kWorkers));
  for (const auto& [thread, n] : allocated_by) EXPECT_EQ(n, kWorkerBlocks) << "thread " << thread;
  EXPECT_EQ(count_if_op(events, Op::Malloc, kMainSize), 1u);

  // Each worker: ThreadStart first (its own kernel tid), ThreadExit last.
  auto threads = by_thread(events);
  std::set<std::uint64_t> tids;
  for (const auto& [thread, n] : allocated_by) {
    const auto& mine = threads[thread];
    ASSERT_GE(mine.size(), 2u);
    EXPECT_EQ(mine.front().op, Op::ThreadStart) << "thread " << thread;
    EXPECT_NE(mine.front().size, pid);
    EXPECT_GT(mine.front().size, 0u);
    tids.insert(mine.front().size);
    EXPECT_EQ(mine.back().op, Op::ThreadExit) << "thread " << thread;
    EXPECT_EQ(std::count_if(mine.begin(), mine.end(), [](const Event& e) { return e.op == Op::ThreadExit; }), 1);
  }
  EXPECT_EQ(tids.size(), static_cast<std::size_t>(kWorkers));
  // The main thread is there too, started once, with the pid as tid.
  std::size_t main_starts = 0;
  for (const auto& e : events)
    if (e.op == Op::ThreadStart && e.size == pid) ++main_starts;
  EXPECT_EQ(main_starts, 1u);

  // In merged time order every release finds its block: no unknown releases.
  EXPECT_EQ(unmatched_releases(events), 0u);
  tailor::analyze::TraceStats s = tailor::analyze::compute_stats(r);
  EXPECT_EQ(s.unknown_releases, 0u);
  EXPECT_EQ(s.reused_live, 0u);
  EXPECT_GE(s.cross_thread_releases, kWorkers * kWorkerBlocks);
}

// A library loaded with dlopen after recording started is in the module map,
// and a call site inside it symbolizes to its function.
// One recorded thread reads the clock every few events (recorder.h,
// kClockEvery = 8): an event may carry the time of up to 7 events before
// it, never a later one. paced_alloc sleeps 2 ms after each of its 64
// mallocs, so times never decrease, and any malloc is at least 2 ms later
// than the malloc 8 before it (a clock read lies between them).
TEST(Record, OneThreadsTimesAreAtMostAFewEventsEarly) {
  TempDir dir;
  const std::string trace = dir.file("p.trace");
  const Result res = run(record_argv(trace, {PACED_ALLOC}));
  ASSERT_TRUE(WIFEXITED(res.status) && WEXITSTATUS(res.status) == 0) << describe_status(res.status) << "\n" << res.err;
  tr::Reader r(trace);
  const std::vector<Event> events = r.read_all();
  std::vector<std::uint64_t> times;  // of the 64 mallocs, in order
  std::uint64_t last = 0;
  for (const Event& e : events) {
    EXPECT_GE(e.time_ns, last) << "times go back";
    last = e.time_ns;
    if (e.op == Op::Malloc && e.size >= 70001 && e.size < 70001 + 64) {
      EXPECT_EQ(e.size, 70001 + times.size());
      times.push_back(e.time_ns);
    }
  }
  ASSERT_EQ(times.size(), 64u);
  constexpr std::uint64_t kPauseNs = 2000000;
  for (std::size_t i = 8; i < times.size(); ++i) EXPECT_GE(times[i] - times[i - 8], kPauseNs) << "malloc " << i;
  EXPECT_GE(times.back() - times.front(), 56 * kPauseNs);
}

TEST(Record, DlopenedModuleIsMappedAndSymbolized) {
  TempDir dir;
  std::string trace = dir.file("d.trace");
  Result r = run(record_argv(trace, {DLOPEN_PLUGIN, TEST_PLUGIN}));
  ASSERT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0) << describe_status(r.status) << "\n" << r.err;
  tr::Reader reader(trace);
  const std::string plugin = fs::canonical(TEST_PLUGIN).string();
  const tr::Module* mod = nullptr;
  for (const auto& m : reader.modules())
    if (fs::exists(m.path) && fs::canonical(m.path).string() == plugin) mod = &m;
  ASSERT_NE(mod, nullptr) << "no module for " << plugin;
  std::vector<Event> events = reader.read_all();
  auto it = std::find_if(events.begin(), events.end(),
                         [](const Event& e) { return e.op == Op::Malloc && e.size == 7777; });
  ASSERT_NE(it, events.end());
  EXPECT_GE(it->callsite, mod->start);
  EXPECT_LT(it->callsite, mod->end);
  tailor::analyze::Symbolizer symbolizer(reader.modules());
  EXPECT_EQ(symbolizer.resolve_return_address(it->callsite).function, "plugin_allocate");
}

// Signals arriving in the middle of allocation calls (a 200 us timer without
// SA_RESTART, and another thread sending SIGUSR1 in a loop) change nothing:
// the program's output and status are its own, and every call is recorded.
TEST(Record, SignalsDuringAllocation) {
  TempDir dir;
  std::string trace = dir.file("s.trace");
  Result r = run(record_argv(trace, {SIGNAL_STORM}));
  ASSERT_FALSE(r.timed_out);
  ASSERT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0) << describe_status(r.status) << "\n" << r.err;
  EXPECT_EQ(r.out, "done\n");
  tr::Reader reader(trace);
  EXPECT_TRUE(reader.complete()) << reader.cut();
  std::vector<Event> events = reader.read_all();
  EXPECT_EQ(count_if_op(events, Op::Malloc, 3001), 300000u);
  EXPECT_EQ(unmatched_releases(events), 0u);
}

// A thread is one thread index from its ThreadStart to its ThreadExit: calls
// the C library makes on its way out after the recorder saw the thread exit
// must not bring it back as a new thread with a second ThreadStart.
TEST(Record, ThreadIsNotRecordedAgainAfterItsExit) {
  ThreadsRun t;
  ASSERT_TRUE(WIFEXITED(t.result.status)) << describe_status(t.result.status);
  tr::Reader r(t.trace);
  std::vector<Event> events = r.read_all();
  std::map<std::uint64_t, int> starts_per_tid;
  for (const auto& e : events)
    if (e.op == Op::ThreadStart) ++starts_per_tid[e.size];
  for (const auto& [tid, n] : starts_per_tid) EXPECT_EQ(n, 1) << "tid " << tid << " started " << n << " times";
  EXPECT_EQ(starts_per_tid.size(), static_cast<std::size_t>(kWorkers + 1));
  EXPECT_EQ(r.thread_count(), static_cast<std::uint32_t>(kWorkers + 1));
  // Every thread but the main one (which ends with the process) ends with ThreadExit.
  for (const auto& [thread, mine] : by_thread(events)) {
    if (mine.front().op == Op::ThreadStart && mine.front().size == r.header().pid) continue;
    EXPECT_EQ(mine.back().op, Op::ThreadExit) << "thread " << thread << " has no ThreadExit at its end";
  }
}

// --- fork and exec -----------------------------------------------------------------------

TEST(Record, ForkAndExec) {
  TempDir dir;
  std::string trace = dir.file("f.trace");
  Result rec = run(record_argv(trace, {FORK_EXEC}));
  ASSERT_TRUE(WIFEXITED(rec.status) && WEXITSTATUS(rec.status) == 0) << describe_status(rec.status) << "\n" << rec.err;
  int a = 0, b = 0, c = 0;
  ASSERT_EQ(std::sscanf(rec.out.c_str(), "children %d %d %d", &a, &b, &c), 3) << rec.out;

  tr::Reader root(trace);
  const auto root_pid = root.header().pid;
  const std::string A = std::to_string(a), B = std::to_string(b), C = std::to_string(c), R = std::to_string(root_pid);

  // Exactly the documented files.
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir.path())) names.insert(e.path().filename().string());
  EXPECT_EQ(names, (std::set<std::string>{"f.trace", "f.trace." + R, "f.trace." + A, "f.trace." + B,
                                          "f.trace." + B + ".1", "f.trace." + C, "f.trace." + C + ".1"}));

  const std::string fork_exec = canonical(FORK_EXEC);
  // The root process: multithreaded (a helper thread), forked three times, then exec'd.
  {
    EXPECT_EQ(root.header().ppid, static_cast<std::uint32_t>(rec.pid));
    EXPECT_EQ(root.header().executable, fork_exec);
    ASSERT_TRUE(root.end().has_value());
    EXPECT_EQ(root.end()->reason, tr::EndReason::Exec);
    std::vector<Event> v = root.read_all();
    EXPECT_EQ(count_if_op(v, Op::Malloc, 1111), 1u);
    EXPECT_EQ(count_if_op(v, Op::Malloc, 7777), 1u);
    for (std::size_t size : {5555, 5557, 3333}) EXPECT_EQ(count_if_op(v, Op::Malloc, size), 0u) << size;
    EXPECT_GE(root.thread_count(), 2u);
  }
  // The root's new image: FILE.<pid>, the same pid.
  {
    tr::Reader r(dir.file("f.trace." + R));
    EXPECT_EQ(r.header().pid, root_pid);
    EXPECT_EQ(r.header().executable, fork_exec);
    EXPECT_EQ(r.header().command_line, (std::vector<std::string>{"fork_exec", "image", "2"}));
    ASSERT_TRUE(r.end().has_value()) << r.cut();
    EXPECT_EQ(r.end()->reason, tr::EndReason::Exit);
    EXPECT_EQ(r.end()->status, 0);
    std::vector<Event> v = r.read_all();
    EXPECT_EQ(count_if_op(v, Op::Malloc, 3333), 2u);
    EXPECT_EQ(count_if_op(v, Op::Malloc, 1111), 0u);
  }
  // Child A: forked from a multithreaded parent; only its own thread and its own calls; exit(7).
  {
    tr::Reader r(dir.file("f.trace." + A));
    EXPECT_EQ(r.header().pid, static_cast<std::uint32_t>(a));
    EXPECT_EQ(r.header().ppid, root_pid);
    ASSERT_TRUE(r.end().has_value()) << r.cut();
    EXPECT_EQ(r.end()->reason, tr::EndReason::Exit);
    EXPECT_EQ(r.end()->status, 7) << "exit status of the child";
    std::vector<Event> v = r.read_all();
    EXPECT_EQ(r.thread_count(), 1u);
    ASSERT_FALSE(v.empty());
    EXPECT_EQ(v.front().op, Op::ThreadStart);
    EXPECT_EQ(v.front().size, static_cast<std::uint64_t>(a));
    EXPECT_EQ(count_if_op(v, Op::Malloc, 5555), 5u);
    std::size_t frees = static_cast<std::size_t>(std::count_if(v.begin(), v.end(), [](const Event& e) { return e.op == Op::Free && e.address; }));
    EXPECT_EQ(frees, 5u);
    EXPECT_EQ(count_if_op(v, Op::Malloc, 1111) + count_if_op(v, Op::Malloc, 7777), 0u);
    EXPECT_EQ(unmatched_releases(v), 0u);
  }
  // Child B: its events until exec, an Exec end record, then the new image's own file.
  {
    tr::Reader r(dir.file("f.trace." + B));
    EXPECT_EQ(r.header().pid, static_cast<std::uint32_t>(b));
    EXPECT_EQ(r.header().ppid, root_pid);
    ASSERT_TRUE(r.end().has_value()) << r.cut();
    EXPECT_EQ(r.end()->reason, tr::EndReason::Exec);
    std::vector<Event> v = r.read_all();
    EXPECT_EQ(count_if_op(v, Op::Malloc, 5557), 2u);
    EXPECT_EQ(count_if_op(v, Op::Malloc, 3333), 0u);

    tr::Reader image(dir.file("f.trace." + B + ".1"));
    EXPECT_EQ(image.header().pid, static_cast<std::uint32_t>(b));
    EXPECT_EQ(image.header().ppid, root_pid);
    EXPECT_EQ(image.header().command_line, (std::vector<std::string>{"fork_exec", "image", "3"}));
    ASSERT_TRUE(image.end().has_value()) << image.cut();
    EXPECT_EQ(image.end()->reason, tr::EndReason::Exit);
    std::vector<Event> w = image.read_all();
    EXPECT_EQ(count_if_op(w, Op::Malloc, 3333), 3u);
    EXPECT_EQ(count_if_op(w, Op::Malloc, 5557), 0u);
  }
  // Child C: exec of /bin/true, whose image records a (tiny) trace of its own.
  {
    tr::Reader r(dir.file("f.trace." + C));
    ASSERT_TRUE(r.end().has_value()) << r.cut();
    EXPECT_EQ(r.end()->reason, tr::EndReason::Exec);
    tr::Reader image(dir.file("f.trace." + C + ".1"));
    EXPECT_EQ(image.header().pid, static_cast<std::uint32_t>(c));
    EXPECT_EQ(image.header().executable, canonical("/bin/true"));
    EXPECT_EQ(image.header().command_line, (std::vector<std::string>{"true"}));
    ASSERT_TRUE(image.end().has_value()) << image.cut();
    EXPECT_EQ(image.end()->reason, tr::EndReason::Exit);
    EXPECT_EQ(image.end()->status, 0);
  }
}

// --- real programs -------------------------------------------------------------------------

// Runs `command` plainly and recorded (in fresh directories of their own):
// same stdout, same ending; the trace is complete and has events.
void expect_recorded_like_plain(const std::vector<std::string>& command) {
  TempDir plain_dir, rec_dir, out_dir;
  std::string trace = out_dir.file("p.trace");
  Result plain = run(command, plain_dir.path().string());
  Result rec = run(record_argv(trace, command), rec_dir.path().string());
  ASSERT_FALSE(rec.timed_out);
  EXPECT_EQ(rec.out, plain.out);
  EXPECT_TRUE(same_ending(rec.status, plain.status))
      << "recorded: " << describe_status(rec.status) << ", plain: " << describe_status(plain.status) << "\n"
      << rec.err;
  ASSERT_TRUE(fs::exists(trace)) << rec.err;
  tr::Reader r(trace);
  EXPECT_TRUE(r.complete()) << r.cut();
  EXPECT_GT(r.event_count(), 0u);
  EXPECT_EQ(r.read_all().size(), r.event_count());
}

std::optional<std::string> real_python() {
  Result r = run({"python3", "-c", "import sys; print(sys.executable)"});
  if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0) return std::nullopt;
  std::string path = r.out.substr(0, r.out.find('\n'));
  if (path.empty() || !fs::exists(path)) return std::nullopt;
  return path;
}

TEST(Record, RealProgramPython) {
  auto python = real_python();
  if (!python) GTEST_SKIP() << "no python3";
  expect_recorded_like_plain({*python, "-c",
                              "import json, sys\n"
                              "d = {str(i): list(range(i)) for i in range(300)}\n"
                              "s = json.dumps(d)\n"
                              "print(len(s), sum(len(v) for v in json.loads(s).values()))\n"
                              "sys.exit(5)\n"});
}

TEST(Record, RealProgramGit) {
  if (run({"git", "--version"}).status != 0) GTEST_SKIP() << "no git";
  expect_recorded_like_plain({"git", "--version"});
  // git init, recorded: the repository is made as usual.
  TempDir dir;
  std::string trace = dir.file("g.trace");
  Result rec = run(record_argv(trace, {"git", "init", "-q", dir.file("repo")}));
  ASSERT_TRUE(WIFEXITED(rec.status) && WEXITSTATUS(rec.status) == 0) << describe_status(rec.status) << rec.err;
  EXPECT_TRUE(fs::exists(dir.file("repo/.git/HEAD")));
  tr::Reader r(trace);
  EXPECT_TRUE(r.complete()) << r.cut();
  EXPECT_GT(r.event_count(), 0u);
}

TEST(Record, RealProgramCmake) {
  if (run({"cmake", "--version"}).status != 0) GTEST_SKIP() << "no cmake";
  expect_recorded_like_plain({"cmake", "--version"});
}

// --- tailor dump -----------------------------------------------------------------------------

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> v;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) v.push_back(line);
  return v;
}

TEST(Record, DumpPrintsOneLinePerEvent) {
  TempDir dir;
  std::string trace = dir.file("d.trace");
  std::vector<Event> events;
  auto add = [&](std::uint64_t t, std::uint32_t thread, Op op, std::uint8_t flags, std::uint64_t size,
                 std::uint64_t address, std::uint64_t aux) {
    events.push_back(tailor::test::event(thread, t, op, size, address, aux, flags, 0x401000 + t));
  };
  add(1000, 0, Op::ThreadStart, 0, 321, 0, 0);
  add(1100, 0, Op::Malloc, 0, 100, 0x1000, 0);
  add(1200, 0, Op::Calloc, 0, 4, 0x2000, 25);
  add(1300, 0, Op::Realloc, 0, 200, 0x3000, 0x1000);
  add(1400, 0, Op::PosixMemalign, 0, 64, 0x4000, 128);
  add(1500, 0, Op::New, tr::kArray | tr::kAligned, 48, 0x5000, 64);
  add(1600, 0, Op::Delete, tr::kArray | tr::kSized | tr::kAligned, 48, 0x5000, 64);
  add(1700, 0, Op::Free, 0, 0, 0x3000, 0);
  add(1800, 0, Op::ThreadExit, 0, 0, 0, 0);
  {
    std::optional<tailor::test::TraceOut> out;
    ASSERT_NO_THROW(out.emplace(trace, 64));  // the file is made and the Writer set up
    tr::Writer& w = out->writer();
    ASSERT_TRUE(w.write_header(tailor::test::process_header(4321, 1000, "/usr/bin/prog", {"prog\0arg", 8})));
    ASSERT_TRUE(w.write_events(0, events.data(), events.size()));
    ASSERT_TRUE(w.write_end({tr::EndReason::Exit, 0, events.size(), 0, 2000}));
  }

  Result full = run({TAILOR_BIN, "dump", "--no-time", trace});
  ASSERT_TRUE(WIFEXITED(full.status) && WEXITSTATUS(full.status) == 0) << full.err;
  std::vector<std::string> lines = lines_of(full.out);
  std::vector<std::string> header, body;
  for (const auto& l : lines) (l.rfind("#", 0) == 0 ? header : body).push_back(l);
  ASSERT_EQ(body.size(), events.size()) << full.out;
  for (std::size_t i = 0; i < events.size(); ++i) {
    EXPECT_NE(body[i].find(tr::describe_kind(events[i])), std::string::npos) << body[i];
    EXPECT_EQ(body[i].rfind("T0 ", 0), 0u) << body[i];
  }
  EXPECT_NE(body[0].find("tid=321"), std::string::npos) << body[0];
  EXPECT_NE(body[1].find("size=100 -> 0x1000"), std::string::npos) << body[1];
  EXPECT_NE(body[2].find("count=4 elem=25 -> 0x2000"), std::string::npos) << body[2];
  EXPECT_NE(body[3].find("0x1000 size=200 -> 0x3000"), std::string::npos) << body[3];
  EXPECT_NE(body[6].find("size=48 align=64"), std::string::npos) << body[6];
  // Header lines come first, the end line last.
  ASSERT_FALSE(header.empty());
  EXPECT_EQ(lines.front().rfind("#", 0), 0u);
  EXPECT_NE(lines.back().find("# end: exit status 0"), std::string::npos) << lines.back();
  EXPECT_NE(full.out.find("# pid 4321 ppid 1 executable /usr/bin/prog"), std::string::npos) << full.out;
  EXPECT_NE(full.out.find("# command prog arg"), std::string::npos) << full.out;

  // --no-header: the same event lines and nothing else.
  Result bare = run({TAILOR_BIN, "dump", "--no-time", "--no-header", trace});
  EXPECT_EQ(lines_of(bare.out), body);
  // With times: each event line starts with its time from the trace start.
  Result timed = run({TAILOR_BIN, "dump", "--no-header", trace});
  std::vector<std::string> timed_lines = lines_of(timed.out);
  ASSERT_EQ(timed_lines.size(), events.size());
  EXPECT_EQ(std::stoull(timed_lines[1]), 100u);
}

TEST(Record, DumpOfRecordedTraceAndOfNonTrace) {
  TempDir dir;
  std::string trace = dir.file("e.trace");
  Result rec = run(record_argv(trace, {EXITS, "_exit"}));
  ASSERT_TRUE(WIFEXITED(rec.status)) << describe_status(rec.status);
  tr::Reader r(trace);
  Result dump = run({TAILOR_BIN, "dump", trace});
  ASSERT_TRUE(WIFEXITED(dump.status) && WEXITSTATUS(dump.status) == 0) << dump.err;
  std::size_t event_lines = 0, module_lines = 0;
  for (const auto& l : lines_of(dump.out)) {
    if (l.rfind("#", 0) != 0) ++event_lines;
    if (l.rfind("# module", 0) == 0) ++module_lines;
  }
  EXPECT_EQ(event_lines, r.event_count());
  EXPECT_EQ(module_lines, r.modules().size());
  EXPECT_GT(module_lines, 0u);

  std::string text = dir.file("text");
  std::ofstream(text) << "hello\n";
  Result bad = run({TAILOR_BIN, "dump", text});
  EXPECT_TRUE(WIFEXITED(bad.status) && WEXITSTATUS(bad.status) != 0) << describe_status(bad.status);
  EXPECT_NE(bad.err.find("not a tailor trace"), std::string::npos) << bad.err;
  EXPECT_EQ(bad.out, "");
}

// --- commands that cannot run -------------------------------------------------------------------

TEST(Record, MissingCommandExits127) {
  TempDir dir;
  for (std::string cmd : {dir.file("no-such-program"), std::string("tailor-test-no-such-command-in-path")}) {
    Result rec = run(record_argv(dir.file("m.trace"), {cmd, "arg"}));
    ASSERT_FALSE(rec.timed_out);
    ASSERT_TRUE(WIFEXITED(rec.status)) << describe_status(rec.status);
    EXPECT_EQ(WEXITSTATUS(rec.status), 127) << rec.err;
    EXPECT_NE(rec.err.find("cannot run"), std::string::npos) << rec.err;
    EXPECT_NE(rec.err.find(cmd), std::string::npos) << rec.err;
  }
  // No command at all: a usage error, not a crash.
  Result none = run({TAILOR_BIN, "record", "-o", dir.file("n.trace")});
  EXPECT_TRUE(WIFEXITED(none.status) && WEXITSTATUS(none.status) != 0) << describe_status(none.status);
}

}  // namespace
