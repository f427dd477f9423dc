// SPDX-License-Identifier: MIT
// `tailor stats` gives exact numbers: on a recording of tests/support/
// known_counts.cpp they are the ones the program makes by construction, and
// on a synthetic trace written with the Writer every number (lifetimes,
// percentiles, cross-thread and unknown releases, ...) is worked out by hand
// below.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tailor/trace/event.h"
#include "tailor/trace/reader.h"
#include "tailor/trace/writer.h"
#include "analyze/trace_stats.h"
#include "common/child_process.h"
#include "common/temp_dir.h"
#include "common/trace_file.h"

namespace {

namespace fs = std::filesystem;
namespace tr = tailor::trace;
using json = nlohmann::json;
using tr::Event;
using tr::Op;

using tailor::test::TempDir;

using tailor::test::Result;

// Runs argv[0] (a full path) with stdout and stderr captured; kills it after two minutes.
Result capture(const std::vector<std::string>& argv) { return tailor::test::run(argv, "", std::chrono::minutes(2)); }

bool exited_zero(const Result& r) { return WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0; }

json stats_json(const std::string& trace, int top) {
  Result r = capture({TAILOR_BIN, "stats", "--json", "--no-symbols", "--top", std::to_string(top), trace});
  if (!exited_zero(r)) throw std::runtime_error("tailor stats failed: " + r.err);
  return json::parse(r.out);
}

// Checks that `actual` has every member of `expected` with the same value
// (numbers with a floating-point value compared to a relative 1e-12).
void expect_json_subset(const json& actual, const json& expected, const std::string& where = "") {
  if (expected.is_object()) {
    ASSERT_TRUE(actual.is_object()) << where;
    for (auto it = expected.begin(); it != expected.end(); ++it) {
      ASSERT_TRUE(actual.contains(it.key())) << where << "/" << it.key() << " missing";
      expect_json_subset(actual[it.key()], it.value(), where + "/" + it.key());
    }
  } else if (expected.is_array()) {
    ASSERT_TRUE(actual.is_array()) << where;
    ASSERT_EQ(actual.size(), expected.size()) << where << ": " << actual.dump();
    for (std::size_t i = 0; i < expected.size(); ++i)
      expect_json_subset(actual[i], expected[i], where + "/" + std::to_string(i));
  } else if (expected.is_number_float()) {
    ASSERT_TRUE(actual.is_number()) << where;
    double a = actual.get<double>(), e = expected.get<double>();
    EXPECT_NEAR(a, e, 1e-12 * std::max(1.0, std::fabs(e))) << where;
  } else {
    EXPECT_EQ(actual, expected) << where;
  }
}

std::vector<std::string> keys(const json& j) {
  std::vector<std::string> v;
  for (auto it = j.begin(); it != j.end(); ++it) v.push_back(it.key());
  return v;
}

// --- known_counts ---------------------------------------------------------------------------
//
// One iteration of tests/support/known_counts.cpp, as its header comment lists
// it. Libc, libstdc++ and the loader allocate for themselves as well (stdio,
// the C++ emergency exception pool, thread-local storage...), a varying amount
// we must not count. Two independent ways around it:
//  1. Keep only the events whose call site lies in known_counts' own
//     executable (every call the program makes is a direct call from its own
//     code; the noise comes from inside the libraries), write those into a new
//     trace with the Writer and run `tailor stats --json` on it: every number
//     is then exact, peak bytes in use included.
//  2. Record runs of 1 and 2 iterations and compare the unfiltered stats: the
//     libraries' start-up and exit work is the same in both runs, so the
//     differences are exactly one iteration.

// Requested bytes of every block one iteration hands out (a realloc that
// returns a block starts a new object).
const std::vector<std::uint64_t> kObjectSizes = {
    1051,                                          // malloc, leaked
    1003, 1003, 1003, 1003, 1003,                  // malloc x 5
    1001, 1001, 1001,                              // calloc(7, 143) x 3
    2003,                                          // realloc(NULL, 2003)
    1005,                                          // realloc(that, 1005), in place
    1011, 1013, 1280, 1019, 1021,                  // memalign, posix_memalign, aligned_alloc, valloc, pvalloc
    1023, 1025, 1027, 1029, 1031, 1033, 1039, 1049,  // the eight new forms
    1061, 1063, 1069, 1087,                        // plain, array, aligned, aligned array (for sized deletes)
    1009,                                          // malloc, then
    10000019,                                      // realloc(it, 10000019), moved
};
constexpr std::uint64_t kLeak = 1051;
constexpr std::uint64_t kBig = 10000019;

// Bytes in use right after the big realloc of iteration n (1-based): every
// block of the iteration is live then except the 2003 (replaced by the 1005)
// and the 1009 (replaced by the big one); the earlier iterations' leaks too.
std::uint64_t peak(std::uint64_t n) {
  std::uint64_t live = 0;
  for (auto s : kObjectSizes) live += s;
  return live - 2003 - 1009 + (n - 1) * kLeak;
}

std::map<std::string, std::uint64_t> calls_per_iteration() {
  return {
      {"malloc", 8},  // leak, 5, 1009, huge (fails)
      {"calloc", 3},
      {"realloc", 5},  // from NULL, in place, moved, huge (fails), to 0
      {"memalign", 1},
      {"posix_memalign", 1},
      {"aligned_alloc", 1},
      {"valloc", 1},
      {"pvalloc", 1},
      {"free", 15},  // NULL, big, 5, 3, five aligned C blocks
      {"new", 2},
      {"new[]", 2},
      {"new(nothrow)", 2},  // 1027, and huge (fails)
      {"new[](nothrow)", 1},
      {"new(aligned)", 2},
      {"new[](aligned)", 2},
      {"new(aligned,nothrow)", 1},
      {"new[](aligned,nothrow)", 1},
      {"delete", 2},  // 1023, and nullptr
      {"delete[]", 1},
      {"delete(nothrow)", 1},
      {"delete[](nothrow)", 1},
      {"delete(aligned)", 1},
      {"delete[](aligned)", 1},
      {"delete(aligned,nothrow)", 1},
      {"delete[](aligned,nothrow)", 1},
      {"delete(sized)", 1},
      {"delete[](sized)", 1},
      {"delete(sized,aligned)", 1},
      {"delete[](sized,aligned)", 1},
  };
}
constexpr std::uint64_t kMemoryOps = 62;
constexpr std::uint64_t kReleases = 26;        // non-null free / delete
constexpr std::uint64_t kNullReleases = 2;     // free(NULL), delete nullptr
constexpr std::uint64_t kFailed = 3;           // malloc, new(nothrow), realloc of a huge size
constexpr std::uint64_t kReleasedObjects = 29; // the 26 releases and the old blocks of 3 reallocs (in place, moved, to 0)

json alignments(std::uint64_t n, std::uint64_t page) {
  json a = json::object();
  a["64"] = 6 * n;  // memalign, new 1031, new 1039, new[] 1049, new 1069, new[] 1087
  a["128"] = 2 * n; // posix_memalign, new[] 1033
  a["256"] = 1 * n; // aligned_alloc
  a[std::to_string(page)] = 2 * n;  // valloc, pvalloc
  return a;
}

// What `tailor stats --json` must say about n iterations and nothing else.
json expected_known_counts(std::uint64_t n, std::uint64_t page, std::uint64_t tid) {
  std::uint64_t bytes = 0;
  for (auto s : kObjectSizes) bytes += s;
  json calls = json::object();
  for (const auto& [kind, k] : calls_per_iteration()) calls[kind] = k * n;
  // Sizes by count, then by size: 1003 x5, 1001 x3, then every other size once per iteration.
  std::map<std::uint64_t, std::uint64_t> count;
  for (auto s : kObjectSizes) ++count[s];
  std::vector<std::pair<std::uint64_t, std::uint64_t>> sizes(count.begin(), count.end());
  std::stable_sort(sizes.begin(), sizes.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  json top = json::array();
  for (const auto& [size, k] : sizes) top.push_back({{"size", size}, {"count", k * n}, {"bytes", size * k * n}});
  return {
      {"objects", kObjectSizes.size() * n},
      {"total_bytes", bytes * n},
      {"max_in_use_bytes", peak(n)},
      {"average_size", static_cast<double>(bytes) / static_cast<double>(kObjectSizes.size())},
      {"memory_ops", kMemoryOps * n},
      {"events", 1 + kMemoryOps * n},  // and the main thread's ThreadStart
      {"calls", calls},
      {"releases", kReleases * n},
      {"null_releases", kNullReleases * n},
      {"failed_allocations", kFailed * n},
      {"max_live_objects", n + 27},  // at the peak: n leaks, 5 + 3 + 1 + 5 + 12 + 1 of this iteration
      {"live_objects_at_end", n},
      {"live_bytes_at_end", kLeak * n},
      {"unknown_releases", 0},
      {"reused_live", 0},
      {"cross_thread_releases", 0},
      {"realloc",
       {{"calls", 5 * n}, {"in_place", n}, {"moved", n}, {"from_null", n}, {"to_zero", n}, {"failed", n}}},
      {"aligned_calls", 11 * n},
      {"alignments", alignments(n, page)},
      {"distinct_sizes", count.size()},
      {"top_sizes", top},
      {"lifetime_events", {{"count", kReleasedObjects * n}}},
      {"lifetime_ns", {{"count", kReleasedObjects * n}}},
      {"threads",
       json::array({{{"thread", 0}, {"tid", tid}, {"allocations", kObjectSizes.size() * n}, {"bytes", bytes * n},
                     {"releases", kReleases * n}}})},
  };
}

struct Recording {
  std::string trace;
  tr::Header header;
  std::vector<tr::Module> modules;
  std::vector<Event> events;
};

Recording record_known_counts(const TempDir& dir, int iterations) {
  Recording r;
  r.trace = dir.file("kc" + std::to_string(iterations) + ".trace");
  Result rec = capture({TAILOR_BIN, "record", "-o", r.trace, "--", KNOWN_COUNTS, std::to_string(iterations)});
  if (!exited_zero(rec)) throw std::runtime_error("recording known_counts failed: " + rec.err);
  tr::Reader reader(r.trace);
  if (!reader.complete()) throw std::runtime_error("incomplete trace: " + reader.cut());
  r.header = reader.header();
  r.modules = reader.modules();
  r.events = reader.read_all();
  return r;
}

// The events made from the program's own code (plus thread starts and exits).
std::vector<Event> own_events(const Recording& r) {
  auto m = std::find_if(r.modules.begin(), r.modules.end(),
                        [&](const tr::Module& mod) { return mod.path == r.header.executable; });
  if (m == r.modules.end()) throw std::runtime_error("the executable is not among the trace's modules");
  std::vector<Event> own;
  for (const auto& e : r.events)
    if (e.op == Op::ThreadStart || e.op == Op::ThreadExit || (e.callsite >= m->start && e.callsite < m->end))
      own.push_back(e);
  return own;
}

// Writes events (of any threads, in order) as a trace of their own.
void write_trace(const std::string& path, const tr::Header& header, const std::vector<Event>& events) {
  tailor::test::TraceOut out(path, 1024);
  std::string cmd;
  for (const auto& a : header.command_line) {
    if (&a != &header.command_line.front()) cmd += '\0';
    cmd += a;
  }
  tr::HeaderFields h;
  h.page_size = header.page_size;
  h.pid = header.pid;
  h.ppid = header.ppid;
  h.start_realtime_ns = header.start_realtime_ns;
  h.start_monotonic_ns = header.start_monotonic_ns;
  h.executable = header.executable;
  h.command_line = cmd;
  const std::uint64_t last = events.empty() ? 0 : events.back().time_ns;
  const bool ok = out->write_header(h) && tailor::test::write_chunks_by_thread(out.writer(), events) &&
                  out->write_end({tr::EndReason::Exit, 0, events.size(), 0, last});
  out.close();
  if (!ok) throw std::runtime_error("cannot write " + path);
}

TEST(StatsExact, KnownCountsOwnCalls) {
  TempDir dir;
  constexpr std::uint64_t kIterations = 3;
  Recording rec = record_known_counts(dir, static_cast<int>(kIterations));
  std::vector<Event> own = own_events(rec);
  // The filter must have removed the libraries' noise, not the program's calls.
  ASSERT_LT(own.size(), rec.events.size());
  std::string filtered = dir.file("own.trace");
  write_trace(filtered, rec.header, own);

  json got = stats_json(filtered, 100);
  json want = expected_known_counts(kIterations, rec.header.page_size, rec.header.pid);
  expect_json_subset(got, want);
  // The biggest call site by bytes is the realloc that made the 10 MB blocks.
  ASSERT_FALSE(got["top_sites_by_bytes"].empty());
  EXPECT_EQ(got["top_sites_by_bytes"][0]["bytes"], kBig * kIterations);
  EXPECT_EQ(got["top_sites_by_bytes"][0]["calls"], kIterations);

  // The library gives the same numbers as the command.
  tr::Reader reader(filtered);
  json direct = tailor::analyze::to_json(tailor::analyze::compute_stats(reader, {100}));
  got.erase("trace");
  EXPECT_EQ(keys(direct), keys(got));
  expect_json_subset(direct, want);
}

TEST(StatsExact, KnownCountsOneIterationMoreAddsExactlyOneIteration) {
  TempDir dir;
  Recording one = record_known_counts(dir, 1);
  Recording two = record_known_counts(dir, 2);
  json a = stats_json(one.trace, 1000);
  json b = stats_json(two.trace, 1000);
  auto diff = [&](const json& x, const json& y) {
    return static_cast<std::int64_t>(y.get<std::uint64_t>()) - static_cast<std::int64_t>(x.get<std::uint64_t>());
  };
  std::uint64_t bytes = 0;
  for (auto s : kObjectSizes) bytes += s;
  auto n = static_cast<std::int64_t>(kObjectSizes.size());
  EXPECT_EQ(diff(a["objects"], b["objects"]), n);
  EXPECT_EQ(diff(a["total_bytes"], b["total_bytes"]), static_cast<std::int64_t>(bytes));
  EXPECT_EQ(diff(a["memory_ops"], b["memory_ops"]), static_cast<std::int64_t>(kMemoryOps));
  EXPECT_EQ(diff(a["events"], b["events"]), static_cast<std::int64_t>(kMemoryOps));
  EXPECT_EQ(diff(a["releases"], b["releases"]), static_cast<std::int64_t>(kReleases));
  EXPECT_EQ(diff(a["null_releases"], b["null_releases"]), static_cast<std::int64_t>(kNullReleases));
  EXPECT_EQ(diff(a["failed_allocations"], b["failed_allocations"]), static_cast<std::int64_t>(kFailed));
  EXPECT_EQ(diff(a["live_objects_at_end"], b["live_objects_at_end"]), 1);
  EXPECT_EQ(diff(a["live_bytes_at_end"], b["live_bytes_at_end"]), static_cast<std::int64_t>(kLeak));
  // The peak comes in the last iteration, over one more leaked block.
  EXPECT_EQ(diff(a["max_in_use_bytes"], b["max_in_use_bytes"]), static_cast<std::int64_t>(kLeak));
  EXPECT_EQ(diff(a["max_live_objects"], b["max_live_objects"]), 1);
  EXPECT_GE(a["max_in_use_bytes"].get<std::uint64_t>(), peak(1));
  EXPECT_EQ(diff(a["aligned_calls"], b["aligned_calls"]), 11);
  EXPECT_EQ(diff(a["lifetime_events"]["count"], b["lifetime_events"]["count"]),
            static_cast<std::int64_t>(kReleasedObjects));
  for (const char* k : {"calls", "in_place", "moved", "from_null", "to_zero", "failed"})
    EXPECT_EQ(diff(a["realloc"][k], b["realloc"][k]), std::string(k) == "calls" ? 5 : 1) << k;
  EXPECT_EQ(a["unknown_releases"], b["unknown_releases"]);
  EXPECT_EQ(a["reused_live"], b["reused_live"]);

  std::map<std::string, std::uint64_t> per = calls_per_iteration();
  std::map<std::string, std::int64_t> call_diff;
  for (auto it = b["calls"].begin(); it != b["calls"].end(); ++it)
    call_diff[it.key()] = static_cast<std::int64_t>(it.value().get<std::uint64_t>()) -
                          static_cast<std::int64_t>(a["calls"].value(it.key(), std::uint64_t{0}));
  for (const auto& [kind, k] : per) EXPECT_EQ(call_diff[kind], static_cast<std::int64_t>(k)) << kind;
  for (const auto& [kind, d] : call_diff)
    if (!per.count(kind)) {
      EXPECT_EQ(d, 0) << kind;
    }

  json want_align = alignments(1, one.header.page_size);
  for (auto it = want_align.begin(); it != want_align.end(); ++it)
    EXPECT_EQ(diff(a["alignments"][it.key()], b["alignments"][it.key()]), it.value().get<std::int64_t>()) << it.key();

  auto size_count = [](const json& j, std::uint64_t size) -> std::int64_t {
    for (const auto& s : j["top_sizes"])
      if (s["size"] == size) return s["count"].get<std::int64_t>();
    return 0;
  };
  EXPECT_EQ(size_count(b, 1003) - size_count(a, 1003), 5);
  EXPECT_EQ(size_count(b, 1001) - size_count(a, 1001), 3);
  EXPECT_EQ(size_count(b, kBig) - size_count(a, kBig), 1);
  EXPECT_EQ(size_count(b, kLeak) - size_count(a, kLeak), 1);
  EXPECT_EQ(size_count(a, kBig), 1);
}

// --- a synthetic trace -------------------------------------------------------------------------
//
// Two threads; the comment after each event gives its index in merged time
// order (#n, what lifetimes count in) and bytes in use after it.

Event ev(std::uint64_t time, Op op, std::uint8_t flags, std::uint64_t size, std::uint64_t address, std::uint64_t aux,
         std::uint64_t callsite) {
  return tailor::test::event(0, time, op, size, address, aux, flags, callsite);
}

std::vector<Event> thread0() {
  return {
      ev(1000, Op::ThreadStart, 0, 4242, 0, 0, 0),          // #1
      ev(1100, Op::Malloc, 0, 100, 0x1000, 0, 0x500),       // #3  100
      ev(1200, Op::Calloc, 0, 10, 0x2000, 30, 0x510),       // #4  400  (10 x 30)
      ev(1500, Op::Realloc, 0, 500, 0x4000, 0x2000, 0x540), // #7  564  moved: ends 0x2000 (lifetime 3 events, 300 ns)
      ev(1600, Op::Realloc, 0, 200, 0x4000, 0x4000, 0x540), // #8  264  in place: ends 0x4000 of #7 (1, 100)
      ev(1700, Op::Realloc, 0, 50, 0x5000, 0, 0x540),       // #9  314  from NULL
      ev(1900, Op::Realloc, 0, 1000, 0, 0x4000, 0x540),     // #11 264  failed: 0x4000 stays
      ev(2000, Op::Memalign, 0, 128, 0x6000, 64, 0x560),    // #12 392
      ev(2300, Op::Valloc, 0, 4096, 0x8000, 4096, 0x580),   // #15 4744 <- the peak, 5 live objects
      ev(2400, Op::Free, 0, 0, 0x8000, 0, 0x590),           // #16 648  (1, 100)
      ev(2700, Op::Free, 0, 0, 0x9999, 0, 0x590),           // #19 584  unknown block
      ev(2800, Op::Malloc, 0, 32, 0x6000, 0, 0x5b0),        // #20 488  0x6000 still live (128): reused_live
      ev(3100, Op::Malloc, 0, 7, 0, 0, 0x500),              // #23 546  failed
      ev(3200, Op::Delete, tr::kAligned, 0, 0xa000, 32, 0x5e0),  // #24 498  cross-thread (3, 300)
      ev(3400, Op::Malloc, 0, 100, 0xc000, 0, 0x500),       // #26 598
  };
}

std::vector<Event> thread1() {
  return {
      ev(1010, Op::ThreadStart, 0, 4343, 0, 0, 0),                         // #2
      ev(1300, Op::New, tr::kArray, 64, 0x3000, 0, 0x520),                 // #5  464
      ev(1400, Op::Free, 0, 0, 0x1000, 0, 0x530),                          // #6  364  cross-thread (3, 300)
      ev(1800, Op::Realloc, 0, 0, 0, 0x5000, 0x550),                       // #10 264  to zero, cross-thread (1, 100)
      ev(2100, Op::PosixMemalign, 0, 256, 0, 128, 0x570),                  // #13 392  failed
      ev(2200, Op::AlignedAlloc, 0, 256, 0x7000, 256, 0x570),              // #14 648
      ev(2500, Op::Free, 0, 0, 0, 0, 0x590),                               // #17 648  free(NULL)
      ev(2600, Op::Delete, tr::kArray | tr::kSized, 64, 0x3000, 0, 0x5d0), // #18 584  (13, 1300)
      ev(2900, Op::New, tr::kAligned | tr::kNothrow, 48, 0xa000, 32, 0x5a0),  // #21 536
      ev(3000, Op::Pvalloc, 0, 10, 0xb000, 4096, 0x5c0),                   // #22 546
      ev(3300, Op::ThreadExit, 0, 0, 0, 0, 0),                             // #25
  };
}

json expected_synthetic() {
  auto dist = [](std::uint64_t count, double mean, std::uint64_t min, std::uint64_t p50, std::uint64_t p90,
                 std::uint64_t p99, std::uint64_t max) {
    return json{{"count", count}, {"mean", mean}, {"min", min}, {"p50", p50},
                {"p90", p90},     {"p99", p99},   {"max", max}};
  };
  auto site = [](std::uint64_t address, std::uint64_t calls, std::uint64_t bytes, std::uint64_t peak_live) {
    return json{{"address", address}, {"calls", calls}, {"bytes", bytes}, {"peak_live_bytes", peak_live}, {"symbol", ""}};
  };
  auto leak = [](std::uint64_t address, std::uint64_t bytes) {  // one block each
    return json{{"address", address}, {"blocks", 1}, {"bytes", bytes}, {"largest_bytes", bytes}, {"symbol", ""}};
  };
  auto hist = [](std::vector<std::uint64_t> counts) {
    json a = json::array();
    for (std::size_t k = 0; k < counts.size(); ++k) a.push_back({{"upper_bound", std::uint64_t{1} << k}, {"count", counts[k]}});
    return a;
  };
  auto share = [](std::uint64_t size, std::uint64_t count, std::uint64_t bytes) {
    return json{{"size", size}, {"count", count}, {"bytes", bytes}};
  };
  return {
      {"objects", 13},
      {"total_bytes", 5884},  // 100+300+64+500+200+50+128+256+4096+32+48+10+100
      {"max_in_use_bytes", 4744},
      {"average_size", 5884.0 / 13.0},
      {"memory_ops", 23},
      {"events", 26},
      {"duration_ns", 2400},
      {"calls",
       {{"malloc", 4}, {"calloc", 1}, {"realloc", 5}, {"memalign", 1}, {"posix_memalign", 1},
        {"aligned_alloc", 1}, {"valloc", 1}, {"pvalloc", 1}, {"free", 4}, {"new[]", 1},
        {"new(aligned,nothrow)", 1}, {"delete[](sized)", 1}, {"delete(aligned)", 1}}},
      {"releases", 5},  // #6 #16 #18 #19 #24
      {"null_releases", 1},
      {"failed_allocations", 3},  // #11 #13 #23
      {"max_live_objects", 5},
      {"time_of_max_in_use_ns", 2300},
      {"live_objects_at_end", 5},   // 0x4000 0x6000 0x7000 0xb000 0xc000
      {"live_bytes_at_end", 598},   // 200 + 32 + 256 + 10 + 100
      {"unknown_releases", 1},
      {"reused_live", 1},
      {"sampling",  // an exact trace
       {{"interval", 0}, {"samples", 0}, {"objects_error", 0.0}, {"total_bytes_error", 0.0},
        {"max_in_use_error", 0.0}, {"live_bytes_at_end_error", 0.0}}},
      {"cross_thread_releases", 3},  // #6 #10 #24
      // #6 and #10 free thread 0's blocks on thread 1; #24 frees thread 1's on thread 0.
      {"cross_thread_pairs", json::array({{{"allocated_by", 0}, {"released_by", 1}, {"releases", 2}},
                                          {{"allocated_by", 1}, {"released_by", 0}, {"releases", 1}}})},
      {"realloc", {{"calls", 5}, {"in_place", 1}, {"moved", 1}, {"from_null", 1}, {"to_zero", 1}, {"failed", 1}}},
      {"aligned_calls", 6},
      {"alignments", {{"32", 1}, {"64", 1}, {"128", 1}, {"256", 1}, {"4096", 2}}},
      {"distinct_sizes", 12},
      {"top_sizes",
       json::array({share(100, 2, 200), share(10, 1, 10), share(32, 1, 32), share(48, 1, 48), share(50, 1, 50),
                    share(64, 1, 64), share(128, 1, 128), share(200, 1, 200), share(256, 1, 256),
                    share(300, 1, 300)})},
      {"size_buckets",
       json::array({share(16, 1, 10), share(32, 1, 32), share(64, 3, 162), share(128, 3, 328), share(256, 2, 456),
                    share(512, 2, 800), share(4096, 1, 4096)})},
      // Released objects: lifetimes 3 3 1 1 1 13 3 events, 300 300 100 100 100 1300 300 ns.
      // Percentile q is the element at floor(q * (n - 1)) of the sorted list.
      {"lifetime_events", dist(7, 25.0 / 7.0, 1, 3, 3, 3, 13)},
      {"lifetime_ns", dist(7, 2500.0 / 7.0, 100, 300, 300, 300, 1300)},
      // Power-of-two buckets (2^(k-1), 2^k]: events 1 x3 in k=0, 3 x3 in k=2, 13 in k=4;
      // ns 100 x3 in k=7, 300 x3 in k=9, 1300 in k=11.
      {"lifetime_events_histogram", hist({3, 0, 3, 0, 1})},
      {"lifetime_ns_histogram", hist({0, 0, 0, 0, 0, 0, 0, 3, 0, 3, 0, 1})},
      {"distinct_callsites", 10},
      {"distinct_stacks", 0},  // recorded without stacks
      {"top_stacks_by_bytes", json::array()},
      {"top_sites_by_calls",
       json::array({site(0x540, 3, 750, 500), site(0x500, 2, 200, 100), site(0x510, 1, 300, 300),
                    site(0x520, 1, 64, 64), site(0x560, 1, 128, 128), site(0x570, 1, 256, 256),
                    site(0x580, 1, 4096, 4096), site(0x5a0, 1, 48, 48), site(0x5b0, 1, 32, 32),
                    site(0x5c0, 1, 10, 10)})},
      {"top_sites_by_bytes",
       json::array({site(0x580, 1, 4096, 4096), site(0x540, 3, 750, 500), site(0x510, 1, 300, 300),
                    site(0x570, 1, 256, 256), site(0x500, 2, 200, 100), site(0x560, 1, 128, 128),
                    site(0x520, 1, 64, 64), site(0x5a0, 1, 48, 48), site(0x5b0, 1, 32, 32), site(0x5c0, 1, 10, 10)})},
      // Live at the end: 0x7000 (256, 0x570), 0x4000 (200, 0x540), 0xc000 (100, 0x500),
      // 0x6000 (32, 0x5b0; the 128 bytes of 0x560 it replaced are forgotten), 0xb000 (10, 0x5c0).
      {"leaks",
       {{"sites", 5},
        {"top_by_bytes", json::array({leak(0x570, 256), leak(0x540, 200), leak(0x500, 100), leak(0x5b0, 32),
                                      leak(0x5c0, 10)})}}},
      {"threads",
       json::array({{{"thread", 0}, {"tid", 4242}, {"allocations", 9}, {"bytes", 5506}, {"releases", 3},
                     {"first_ns", 1000}, {"last_ns", 3400}},
                    {{"thread", 1}, {"tid", 4343}, {"allocations", 4}, {"bytes", 378}, {"releases", 2},
                     {"first_ns", 1010}, {"last_ns", 3300}}})},
  };
}

std::string write_synthetic(const TempDir& dir) {
  std::string path = dir.file("synthetic.trace");
  tailor::test::TraceOut out(path);
  const tr::HeaderFields h = tailor::test::process_header(4242, 900, "/bin/synthetic", "synthetic");
  std::vector<Event> t0 = thread0(), t1 = thread1();
  // File order differs from time order: thread 1 first, thread 0 in two chunks.
  tr::Writer& w = out.writer();
  bool ok = w.write_header(h) && w.write_events(1, t1.data(), t1.size()) && w.write_events(0, t0.data(), 7) &&
            w.write_events(0, t0.data() + 7, t0.size() - 7) && w.write_end({tr::EndReason::Exit, 0, 26, 0, 3500});
  out.close();
  if (!ok) throw std::runtime_error("write failed");
  return path;
}

TEST(StatsExact, SyntheticTraceByHand) {
  TempDir dir;
  std::string path = write_synthetic(dir);
  tr::Reader r(path);
  ASSERT_EQ(r.event_count(), 26u);
  json want = expected_synthetic();

  json direct = tailor::analyze::to_json(tailor::analyze::compute_stats(r));
  EXPECT_EQ(keys(direct), keys(want)) << "unexpected or missing keys";
  expect_json_subset(direct, want);
  // compute_stats leaves the reader rewound: a second pass gives the same.
  EXPECT_EQ(tailor::analyze::to_json(tailor::analyze::compute_stats(r)).dump(), direct.dump());

  json cli = stats_json(path, 10);
  ASSERT_TRUE(cli.contains("trace"));
  EXPECT_EQ(cli["trace"]["pid"], 4242);
  EXPECT_EQ(cli["trace"]["complete"], true);
  cli.erase("trace");
  EXPECT_EQ(keys(cli), keys(want));
  expect_json_subset(cli, want);
}

TEST(StatsExact, TopListLength) {
  TempDir dir;
  std::string path = write_synthetic(dir);
  tr::Reader r(path);
  tailor::analyze::TraceStats s = tailor::analyze::compute_stats(r, {3});
  ASSERT_EQ(s.top_sizes.size(), 3u);
  EXPECT_EQ(s.top_sizes[0].size, 100u);
  EXPECT_EQ(s.top_sizes[2].size, 32u);
  ASSERT_EQ(s.top_sites_by_bytes.size(), 3u);
  EXPECT_EQ(s.top_sites_by_bytes[2].address, 0x510u);
  EXPECT_EQ(s.size_buckets.size(), 7u);  // not cut by --top
}

// --leaks: exactly the blocks a program leaks from two paths, by path, at exit.
TEST(StatsExact, LeaksOfTwoPathsByCallSite) {
  TempDir dir;
  const std::string trace = dir.file("leaks.trace");
  constexpr std::uint64_t kA = 37, kB = 23;
  Result rec = capture({TAILOR_BIN, "record", "-o", trace, "--", LEAKS_TWO_PATHS, std::to_string(kA), std::to_string(kB)});
  ASSERT_TRUE(exited_zero(rec)) << rec.err;
  Result r = capture({TAILOR_BIN, "stats", "--leaks", "--json", "--top", "1000", trace});
  ASSERT_TRUE(exited_zero(r)) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["trace"]["end"]["reason"], "exit");
  EXPECT_EQ(j["trace"]["end"]["status"], 0);
  EXPECT_FALSE(j.contains("objects")) << "--leaks prints the leaks only";
  const json& top = j["leaks"]["top_by_bytes"];
  EXPECT_EQ(j["leaks"]["sites"].get<std::size_t>(), top.size());
  auto find = [&](const std::string& function) -> json {
    json found;
    for (const auto& l : top)
      if (l["symbol"].get<std::string>().find(function) != std::string::npos) {
        EXPECT_TRUE(found.is_null()) << function << " is two call sites";
        found = l;
      }
    return found;
  };
  const json a = find("leak_path_a"), b = find("leak_path_b");
  ASSERT_FALSE(a.is_null()) << r.out;
  ASSERT_FALSE(b.is_null()) << r.out;
  EXPECT_EQ(a["blocks"], kA);
  EXPECT_EQ(a["bytes"], kA * 1031);
  EXPECT_EQ(a["largest_bytes"], 1031);
  EXPECT_EQ(b["blocks"], kB);
  EXPECT_EQ(b["bytes"], kB * 2063);
  EXPECT_TRUE(find("churn").is_null()) << "freed blocks are no leak";
  std::uint64_t blocks = 0, bytes = 0;
  for (const auto& l : top) {
    blocks += l["blocks"].get<std::uint64_t>();
    bytes += l["bytes"].get<std::uint64_t>();
  }
  EXPECT_EQ(blocks, j["live_objects_at_end"].get<std::uint64_t>());
  EXPECT_EQ(bytes, j["live_bytes_at_end"].get<std::uint64_t>());

  Result text = capture({TAILOR_BIN, "stats", "--leaks", "--top", "1", trace});
  ASSERT_TRUE(exited_zero(text)) << text.err;
  EXPECT_NE(text.out.find("live at exit (status 0)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("(top 1 by bytes)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("leak_path_b"), std::string::npos) << text.out;  // the larger of the two
  EXPECT_EQ(text.out.find("leak_path_a"), std::string::npos) << text.out;
}

// --- whole call stacks (record --stacks) ----------------------------------------------------

// `tailor stats --leaks --json` of a trace recorded with `extra` options.
json leaks_json(const TempDir& dir, const std::string& name, std::vector<std::string> program,
                std::vector<std::string> extra = {"--stacks"}) {
  const std::string trace = dir.file(name);
  std::vector<std::string> argv = {TAILOR_BIN, "record", "-q", "-o", trace};
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.push_back("--");
  argv.insert(argv.end(), program.begin(), program.end());
  Result rec = capture(argv);
  if (!exited_zero(rec)) throw std::runtime_error("recording failed: " + rec.err);
  Result r = capture({TAILOR_BIN, "stats", "--leaks", "--json", "--top", "1000", trace});
  if (!exited_zero(r)) throw std::runtime_error("stats failed: " + r.err);
  return json::parse(r.out);
}

// The leak (one stack) whose innermost frame is in `function`; null if none.
json leak_in(const json& j, const std::string& function) {
  for (const auto& l : j["leaks"]["top_by_bytes"])
    if (l.contains("stack") && !l["stack"].empty() &&
        l["stack"][0]["symbol"].get<std::string>().find(function) != std::string::npos)
      return l;
  return nullptr;
}

std::vector<std::string> frame_names(const json& leak) {
  std::vector<std::string> names;
  for (const auto& f : leak["stack"]) names.push_back(f["symbol"].get<std::string>());
  return names;
}

bool has_frame(const std::vector<std::string>& frames, std::size_t at, const std::string& function) {
  return at < frames.size() && frames[at].find(function) != std::string::npos;
}

// The three unwinders give each leak of the two paths its whole stack: the
// allocating function, then main, then the C library's start.
TEST(Stacks, LeaksOfTwoPathsHaveTheirStacks) {
  TempDir dir;
  for (const std::string unwind : {"dwarf", "libunwind", "fp"}) {
    json j = leaks_json(dir, unwind + ".trace", {STACK_PATHS, "fork"}, {"--stacks", "--unwind", unwind});
    json p = leak_in(j, "parent_work");
    ASSERT_FALSE(p.is_null()) << unwind << ": " << j.dump(1);
    const std::vector<std::string> frames = frame_names(p);
    EXPECT_TRUE(has_frame(frames, 1, "main")) << unwind << ": " << p.dump(1);
    EXPECT_EQ(p["blocks"], 1);
    EXPECT_EQ(p["bytes"], 4133);
    EXPECT_GE(frames.size(), 3u) << "main's callers in the C library";
  }
  json two = leaks_json(dir, "two.trace", {LEAKS_TWO_PATHS, "5", "4"});
  json a = leak_in(two, "leak_path_a"), b = leak_in(two, "leak_path_b");
  ASSERT_FALSE(a.is_null() || b.is_null()) << two.dump(1);
  EXPECT_EQ(a["blocks"], 5);
  EXPECT_EQ(b["blocks"], 4);
  EXPECT_TRUE(has_frame(frame_names(a), 1, "main"));
  EXPECT_TRUE(has_frame(frame_names(b), 1, "main"));
  EXPECT_NE(a["stack"][1]["address"], b["stack"][1]["address"]) << "two call sites in main";

  // The top stacks by bytes allocated: churn's (5 x 3079, all freed) first.
  Result r = capture({TAILOR_BIN, "stats", "--json", "--top", "1000", dir.file("two.trace")});
  ASSERT_TRUE(exited_zero(r)) << r.err;
  const json stats = json::parse(r.out);
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> by_function;  // calls, bytes
  for (const auto& st : stats["top_stacks_by_bytes"])
    for (const char* f : {"leak_path_a", "leak_path_b", "churn"})
      if (st["stack"][0]["symbol"].get<std::string>().find(f) != std::string::npos)
        by_function[f] = {st["calls"].get<std::uint64_t>(), st["bytes"].get<std::uint64_t>()};
  EXPECT_EQ(by_function["leak_path_a"], std::make_pair(std::uint64_t{5}, std::uint64_t{5 * 1031}));
  EXPECT_EQ(by_function["leak_path_b"], std::make_pair(std::uint64_t{4}, std::uint64_t{4 * 2063}));
  EXPECT_EQ(by_function["churn"], std::make_pair(std::uint64_t{5}, std::uint64_t{5 * 3079}));
  EXPECT_GE(stats["distinct_stacks"].get<std::uint64_t>(), 3u);
}

// The DWARF unwinder (each return address's call-frame rule, and the last
// walk reused where the stack has not changed) gives every leak the stack
// libunwind gives it, on a program without frame pointers: one function
// reached through two callers whose frames lie at the same address,
// recursion up and down, a frame found through rbp, signal handlers on the
// thread's stack and on an alternate one, a library loaded twice, threads.
TEST(Stacks, TheRulesWalkGivesLibunwindsStacks) {
  TempDir dir;
  std::map<std::string, std::map<std::vector<std::string>, std::pair<int, int>>> by_unwinder;
  for (const std::string unwind : {"dwarf", "libunwind"}) {
    json j = leaks_json(dir, unwind + ".trace", {UNWIND_PATHS, TEST_PLUGIN}, {"--stacks", "--unwind", unwind});
    for (const auto& l : j["leaks"]["top_by_bytes"]) {  // (stacks of two call sites on one line add up)
      auto& [blocks, bytes] = by_unwinder[unwind][frame_names(l)];
      blocks += l["blocks"].get<int>();
      bytes += l["bytes"].get<int>();
    }
  }
  const auto& rules = by_unwinder["dwarf"];
  EXPECT_EQ(rules, by_unwinder["libunwind"]);
  // leaf's blocks by the path that reached it.
  std::map<std::string, int> leaf_blocks;
  int climbs = 0;
  for (const auto& [frames, counts] : rules) {
    if (has_frame(frames, 0, "leaf") && frames.size() > 2) {
      const std::string via = has_frame(frames, 1, "via_a") ? "a" : has_frame(frames, 1, "via_b") ? "b" : "?";
      leaf_blocks[via + (has_frame(frames, 2, "thread_work") ? " thread" : has_frame(frames, 2, "main") ? " main" : " ?")] +=
          counts.first;
    }
    if (has_frame(frames, 0, "climb")) {
      ++climbs;
      EXPECT_EQ(counts.first, 1) << frames.size();
    }
  }
  EXPECT_EQ(leaf_blocks, (std::map<std::string, int>{{"a main", 3}, {"a thread", 4}, {"b main", 5}}));
  EXPECT_EQ(climbs, 6) << "one stack per depth, 1 to 6";
  bool vla = false, handler = false, alternate = false, plugin = false;
  for (const auto& [frames, counts] : rules) {
    vla |= has_frame(frames, 0, "with_vla") && has_frame(frames, 1, "main") && counts.first == 3;
    // Through the signal frame to raise's caller.
    const auto reaches_main = [&frames] {
      return std::any_of(frames.begin(), frames.end(), [](const std::string& f) { return f.find("main (") == 0; });
    };
    handler |= has_frame(frames, 0, "on_signal") && reaches_main();
    alternate |= has_frame(frames, 0, "on_alternate_stack") && reaches_main();
    plugin |= has_frame(frames, 0, "plugin_allocate") && has_frame(frames, 1, "plugin_round") && counts.first == 2;  // a load each
  }
  EXPECT_TRUE(vla) << "with_vla's blocks";
  EXPECT_TRUE(handler) << "the signal handler's block";
  EXPECT_TRUE(alternate) << "the block of the handler on the alternate stack";
  EXPECT_TRUE(plugin) << "the plugin's blocks";
}

// A stack deeper than DEPTH keeps its innermost DEPTH frames; one of 10 000
// frames is recorded (not crashed on), with each unwinder.
TEST(Stacks, DeepRecursionIsCutAtDepth) {
  TempDir dir;
  for (const std::string unwind : {"dwarf", "libunwind", "fp"}) {
    json j = leaks_json(dir, "deep-" + unwind + ".trace", {STACK_PATHS, "recurse", "10000"},
                        {"--stacks=100", "--unwind", unwind});
    json leak = leak_in(j, "recurse_down");
    ASSERT_FALSE(leak.is_null()) << j.dump(1);
    const std::vector<std::string> frames = frame_names(leak);
    ASSERT_EQ(frames.size(), 100u) << unwind;
    for (const auto& f : frames) EXPECT_NE(f.find("recurse_down"), std::string::npos) << unwind << ": " << f;
  }
  // A shallow one is whole: recurse_down x 5, then main.
  json shallow = leaks_json(dir, "shallow.trace", {STACK_PATHS, "recurse", "5"});
  const std::vector<std::string> frames = frame_names(leak_in(shallow, "recurse_down"));
  ASSERT_GE(frames.size(), 6u);
  for (std::size_t k = 0; k < 5; ++k) EXPECT_TRUE(has_frame(frames, k, "recurse_down")) << k;
  EXPECT_TRUE(has_frame(frames, 5, "main"));
}

// Threads' stacks start at their thread function; a forked child's trace has
// its own stacks (none of the parent's nodes, which its file does not hold).
TEST(Stacks, ThreadsAndForkedChildrenKeepTheirStacks) {
  TempDir dir;
  json j = leaks_json(dir, "threads.trace", {STACK_PATHS, "threads"});
  for (const char* f : {"thread_a_work", "thread_b_work"}) {
    json leak = leak_in(j, f);
    ASSERT_FALSE(leak.is_null()) << f << ": " << j.dump(1);
    const std::vector<std::string> frames = frame_names(leak);
    EXPECT_TRUE(std::any_of(frames.begin() + 1, frames.end(),
                            [](const std::string& s) { return s.find("start_thread") != std::string::npos; }))
        << leak.dump(1);
    EXPECT_FALSE(std::any_of(frames.begin(), frames.end(),
                             [](const std::string& s) { return s.find("main (") != std::string::npos; }));
  }

  const std::string trace = dir.file("fork.trace");
  Result rec = capture({TAILOR_BIN, "record", "-q", "--stacks", "-o", trace, "--", STACK_PATHS, "fork"});
  ASSERT_TRUE(exited_zero(rec)) << rec.err;
  int child = 0;
  ASSERT_EQ(std::sscanf(rec.out.c_str(), "child %d", &child), 1) << rec.out;
  Result r = capture({TAILOR_BIN, "stats", "--leaks", "--json", "--top", "1000", trace + "." + std::to_string(child)});
  ASSERT_TRUE(exited_zero(r)) << r.err;
  json c = json::parse(r.out);
  json leak = leak_in(c, "child_work");
  ASSERT_FALSE(leak.is_null()) << c.dump(1);
  EXPECT_TRUE(has_frame(frame_names(leak), 1, "main")) << leak.dump(1);
  EXPECT_TRUE(leak_in(c, "parent_work").is_null());
}

// An exec'd image is recorded with stacks too (the environment carries the
// option), into a trace file of its own.
TEST(Stacks, ExecKeepsRecordingStacks) {
  TempDir dir;
  const std::string trace = dir.file("e.trace");
  const std::string command = std::string("exec ") + STACK_PATHS + " recurse 4";
  Result rec = capture({TAILOR_BIN, "record", "-q", "--stacks", "-o", trace, "--", "/bin/sh", "-c", command});
  ASSERT_TRUE(exited_zero(rec)) << rec.err;
  std::vector<std::string> images;
  for (const auto& entry : fs::directory_iterator(dir.path()))
    if (entry.path().filename().string().rfind("e.trace.", 0) == 0) images.push_back(entry.path().string());
  ASSERT_EQ(images.size(), 1u) << "the exec'd image's trace";
  Result r = capture({TAILOR_BIN, "stats", "--leaks", "--json", "--top", "1000", images[0]});
  ASSERT_TRUE(exited_zero(r)) << r.err;
  json j = json::parse(r.out);
  json leak = leak_in(j, "recurse_down");
  ASSERT_FALSE(leak.is_null()) << j.dump(1);
  const std::vector<std::string> frames = frame_names(leak);
  ASSERT_GE(frames.size(), 5u);
  for (std::size_t k = 0; k < 4; ++k) EXPECT_TRUE(has_frame(frames, k, "recurse_down")) << k;
  EXPECT_TRUE(has_frame(frames, 4, "main"));
}

// A cut trace still gives stats, over the events it has, and says it is cut.
TEST(StatsExact, CutTraceIsReported) {
  TempDir dir;
  std::string path = write_synthetic(dir);
  std::uintmax_t size = fs::file_size(path);
  fs::resize_file(path, size - 1);  // into the end record
  Result r = capture({TAILOR_BIN, "stats", "--json", "--no-symbols", path});
  ASSERT_TRUE(exited_zero(r)) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["trace"]["complete"], false);
  EXPECT_NE(j["trace"]["cut"].get<std::string>().find("trace cut at byte"), std::string::npos);
  EXPECT_EQ(j["events"], 26);
  EXPECT_EQ(j["objects"], 13);
  EXPECT_NE(r.err.find("trace cut"), std::string::npos) << r.err;
}

// --- sampled recording (record --sample) ---------------------------------------------------

// The estimator on a trace made by hand: each kept block of n bytes stands
// for 1 / (1 - exp(-n / interval)) blocks (analyze/sampling.h).
TEST(Sampling, EstimatesWeighEachBlockByItsChanceOfBeingKept) {
  TempDir dir;
  const std::string path = dir.file("sampled.trace");
  {
    tailor::test::TraceOut out(path);
    tr::HeaderFields h = tailor::test::process_header(77, 100, "/bin/sampled", "sampled");
    h.sample_interval = 1000;
    const std::vector<Event> events = {
        tailor::test::event(0, 110, Op::Malloc, 1000, 0x1000, 0, 0, 0x400),
        tailor::test::event(0, 120, Op::Malloc, 10, 0x2000, 0, 0, 0x500),
        tailor::test::event(0, 130, Op::Free, 0, 0x1000, 0, 0, 0x600),
    };
    tr::Writer& w = out.writer();
    ASSERT_TRUE(w.write_header(h) && w.write_events(0, events.data(), events.size()) &&
                w.write_end({tr::EndReason::Exit, 0, 3, 0, 200}));
    out.close();
  }
  tr::Reader r(path);
  EXPECT_EQ(r.header().sample_interval, 1000u);
  const tailor::analyze::TraceStats s = tailor::analyze::compute_stats(r);
  const double w1 = 1 / -std::expm1(-1.0), w2 = 1 / -std::expm1(-0.01);  // 1.582, 100.50
  const auto b1 = static_cast<std::uint64_t>(std::llround(1000 * w1)), b2 = static_cast<std::uint64_t>(std::llround(10 * w2));
  EXPECT_EQ(s.sampling.interval, 1000u);
  EXPECT_EQ(s.sampling.samples, 2u);
  EXPECT_EQ(s.objects, static_cast<std::uint64_t>(std::llround(w1 + w2)));
  EXPECT_EQ(s.total_bytes, b1 + b2);
  EXPECT_EQ(s.max_in_use, b1 + b2);
  EXPECT_EQ(s.live_bytes_at_end, b2);
  EXPECT_EQ(s.releases, static_cast<std::uint64_t>(std::llround(w1)));
  EXPECT_NEAR(s.sampling.objects_error, std::sqrt(w1 * (w1 - 1) + w2 * (w2 - 1)), 1e-9);
  EXPECT_NEAR(s.sampling.total_bytes_error, std::sqrt(1e6 * w1 * (w1 - 1) + 100 * w2 * (w2 - 1)), 1e-6);
  EXPECT_NEAR(s.sampling.max_in_use_error, s.sampling.total_bytes_error, 1e-6);
  EXPECT_NEAR(s.sampling.live_bytes_at_end_error, std::sqrt(100 * w2 * (w2 - 1)), 1e-6);
  ASSERT_EQ(s.top_sites_by_bytes.size(), 2u);
  EXPECT_EQ(s.top_sites_by_bytes[0].bytes, b1);
  EXPECT_EQ(s.top_sites_by_bytes[0].calls, 2u);  // 1.58 rounded
  EXPECT_EQ(s.top_sites_by_bytes[1].calls, 101u);
  ASSERT_EQ(s.leaks.size(), 1u);
  EXPECT_EQ(s.leaks[0].blocks, 101u);
  EXPECT_EQ(s.leaks[0].bytes, b2);

  Result text = capture({TAILOR_BIN, "stats", "--no-symbols", path});
  ASSERT_TRUE(exited_zero(text)) << text.err;
  EXPECT_NE(text.out.find("one allocation per 1000 bytes on average"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("± "), std::string::npos) << text.out;
}

// `tailor record --sample` on a program of known amounts (support/sampled_paths.cpp),
// against the same program recorded exactly: the estimates lie within four
// standard errors of the exact figures, for three seeds; the sampled trace
// is a small fraction of the exact one; every recorded release is of a
// recorded block, across threads too.
TEST(Sampling, EstimatesCoverTheExactFiguresOfAKnownProgram) {
  TempDir dir;
  const std::string exact_trace = dir.file("exact.trace");
  Result rec = capture({TAILOR_BIN, "record", "-q", "--stacks", "-o", exact_trace, "--", SAMPLED_PATHS});
  ASSERT_TRUE(exited_zero(rec)) << rec.err;
  auto symbolized_stats = [](const std::string& trace) {
    Result r = capture({TAILOR_BIN, "stats", "--json", "--top", "1000", trace});
    if (!exited_zero(r)) throw std::runtime_error("tailor stats failed: " + r.err);
    return json::parse(r.out);
  };
  const json exact = symbolized_stats(exact_trace);
  auto stack_bytes = [](const json& j, const std::string& function) -> std::pair<double, double> {
    double bytes = 0, variance = 0;
    for (const auto& st : j["top_stacks_by_bytes"])
      if (!st["stack"].empty() && st["stack"][0]["symbol"].get<std::string>().find(function) != std::string::npos) {
        bytes += st["bytes"].get<double>();
        const double e = st.value("bytes_error", 0.0);
        variance += e * e;
      }
    return {bytes, std::sqrt(variance)};
  };
  for (const std::string seed : {"1", "2", "3"}) {
    SCOPED_TRACE("seed " + seed);
    const std::string trace = dir.file("sampled" + seed + ".trace");
    rec = capture({TAILOR_BIN, "record", "-q", "--sample", "64K", "--sample-seed", seed, "-o", trace, "--", SAMPLED_PATHS});
    ASSERT_TRUE(exited_zero(rec)) << rec.err;
    const json j = symbolized_stats(trace);
    ASSERT_EQ(j["sampling"]["interval"], 65536);
    EXPECT_LT(j["events"].get<double>(), exact["events"].get<double>() / 50);
    EXPECT_GT(j["sampling"]["samples"].get<double>(), 100);
    auto within = [&](const char* field, const char* error) {
      const double want = exact[field].get<double>(), got = j[field].get<double>(),
                   e = j["sampling"][error].get<double>();
      EXPECT_LE(std::abs(got - want), 4 * e + 1) << field << ": " << got << " ± " << e << ", exact " << want;
    };
    within("objects", "objects_error");
    within("total_bytes", "total_bytes_error");
    within("max_in_use_bytes", "max_in_use_error");
    within("live_bytes_at_end", "live_bytes_at_end_error");
    for (const char* function : {"hold_small", "hold_medium", "churn", "news"}) {
      const auto [got, e] = stack_bytes(j, function);
      const double want = stack_bytes(exact, function).first;
      EXPECT_GT(want, 0) << function;
      EXPECT_LE(std::abs(got - want), 4 * e + 1) << function << ": " << got << " ± " << e << ", exact " << want;
    }
    EXPECT_EQ(j["unknown_releases"], 0) << "a sampled block's release is recorded, and no other";
    EXPECT_GT(j["cross_thread_releases"].get<int>(), 0) << "hold_medium's blocks freed by the second thread";
  }
}

// Sampled recordings keep threads' and forked children's stacks as exact
// ones do: with an interval of one byte every block is sampled.
TEST(Sampling, ThreadsAndForkedChildrenAreSampled) {
  TempDir dir;
  json j = leaks_json(dir, "threads.trace", {STACK_PATHS, "threads"}, {"--sample", "1"});
  for (const char* f : {"thread_a_work", "thread_b_work"}) {
    json leak = leak_in(j, f);
    ASSERT_FALSE(leak.is_null()) << f << ": " << j.dump(1);
    EXPECT_EQ(leak["blocks"], 1) << leak.dump(1);
  }
  const std::string trace = dir.file("fork.trace");
  Result rec = capture({TAILOR_BIN, "record", "-q", "--sample", "1", "-o", trace, "--", STACK_PATHS, "fork"});
  ASSERT_TRUE(exited_zero(rec)) << rec.err;
  int child = 0;
  ASSERT_EQ(std::sscanf(rec.out.c_str(), "child %d", &child), 1) << rec.out;
  for (const auto& [file, function] : {std::pair{trace + "." + std::to_string(child), "child_work"},
                                       std::pair{trace, "parent_work"}}) {
    Result r = capture({TAILOR_BIN, "stats", "--leaks", "--json", "--top", "1000", file});
    ASSERT_TRUE(exited_zero(r)) << r.err;
    json c = json::parse(r.out);
    EXPECT_EQ(c["sampling"]["interval"], 1) << file;
    json leak = leak_in(c, function);
    ASSERT_FALSE(leak.is_null()) << function << ": " << c.dump(1);
    EXPECT_TRUE(has_frame(frame_names(leak), 1, "main")) << leak.dump(1);
  }
}

// A sampled trace is refused, in one line that says why, by the tools that
// need every call; --unwind and --sample-seed need what they modify.
TEST(Sampling, ToolsThatNeedEveryCallRefuseASampledTrace) {
  TempDir dir;
  const std::string trace = dir.file("s.trace");
  Result rec = capture({TAILOR_BIN, "record", "-q", "--sample", "64K", "-o", trace, "--", SAMPLED_PATHS});
  ASSERT_TRUE(exited_zero(rec)) << rec.err;
  for (const std::vector<std::string>& tool :
       {std::vector<std::string>{"simulate", trace}, {"replay", trace}, {"search", trace, "--generations", "1"}}) {
    SCOPED_TRACE(tool[0]);
    std::vector<std::string> argv = {TAILOR_BIN};
    argv.insert(argv.end(), tool.begin(), tool.end());
    Result r = capture(argv);
    EXPECT_FALSE(exited_zero(r));
    EXPECT_NE(r.err.find("a sampled trace (record --sample 65536"), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  for (const std::vector<std::string>& bad : {std::vector<std::string>{"--unwind", "fp"}, {"--sample-seed", "3"}}) {
    std::vector<std::string> argv = {TAILOR_BIN, "record", "-q", "-o", dir.file("x.trace")};
    argv.insert(argv.end(), bad.begin(), bad.end());
    argv.insert(argv.end(), {"--", "/bin/true"});
    Result r = capture(argv);
    EXPECT_FALSE(exited_zero(r)) << bad[0];
    EXPECT_NE(r.err.find(bad[0]), std::string::npos) << r.err;
  }
}

}  // namespace
