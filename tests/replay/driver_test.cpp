// SPDX-License-Identifier: MIT
// tailor-replay-driver on real allocators: a plan of four threads that free
// and reallocate each other's blocks completes under glibc and libtailor with
// every call made; under the recorder, the driver's calls are the trace's
// calls, one for one; it links no C++ runtime; and its failures (a damaged
// plan, a preload that did not take) are reported.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/temp_dir.h"
#include "common/trace_file.h"
#include "replay/run_command.h"
#include "replay/replay_plan.h"
#include "replay/replay_runner.h"
#include "tailor/trace/reader.h"

namespace {

namespace tr = tailor::trace;
namespace rp = tailor::replay;
namespace plan = tailor::replay::plan;
using tailor::test::event;
using tr::Op;

rp::Tools tools() { return {REPLAY_DRIVER, LIBTAILOR}; }

// Four threads in a ring: at every step each thread allocates a block (some
// calloc, some large), and frees the block its left neighbour allocated the
// step before; every fifth block is first reallocated by the thread that
// frees it. Thread 0 starts with one block of every aligned call, which
// thread 1 frees at the end.
std::vector<tr::Event> ring_events(std::uint64_t steps) {
  constexpr std::uint32_t kThreads = 4;
  std::vector<tr::Event> v;
  std::uint64_t t = 1;
  auto address = [](std::uint32_t thread, std::uint64_t step) { return 0x10000000 * (thread + 1) + step * 0x1000; };
  const Op aligned[] = {Op::Memalign, Op::PosixMemalign, Op::AlignedAlloc, Op::Valloc, Op::Pvalloc, Op::New};
  for (std::size_t i = 0; i < std::size(aligned); ++i)
    v.push_back(event(0, t++, aligned[i], 100 + i, 0x9000000 + i * 0x10000, aligned[i] == Op::New ? 64 : 4096,
                      aligned[i] == Op::New ? tr::kAligned : 0));
  for (std::uint64_t i = 0; i <= steps; ++i) {
    for (std::uint32_t k = 0; k < kThreads && i < steps; ++k) {
      const std::uint64_t size = i % 997 == 0 ? 300000 : 16 + (i * 37 + k * 101) % 2000;
      if (i % 7 == 0)
        v.push_back(event(k, t++, Op::Calloc, size / 8 + 1, address(k, i), 8));
      else
        v.push_back(event(k, t++, Op::Malloc, size, address(k, i)));
    }
    for (std::uint32_t k = 0; k < kThreads && i > 0; ++k) {
      const std::uint32_t other = (k + 1) % kThreads;
      std::uint64_t a = address(k, i - 1);
      if (i % 5 == 0) {
        v.push_back(event(other, t++, Op::Realloc, 5000, a + 0x800, a));
        a += 0x800;
      }
      v.push_back(event(other, t++, Op::Free, 0, a));
    }
  }
  for (std::size_t i = 0; i < std::size(aligned); ++i) v.push_back(event(1, t++, Op::Free, 0, 0x9000000 + i * 0x10000));
  return v;
}

std::string ring_plan(const tailor::test::TempDir& dir, std::uint64_t steps, rp::PlanSummary& summary) {
  const std::string trace = dir.file("ring.trace");
  tailor::test::write_thread_trace(trace, ring_events(steps));
  tr::Reader r(trace);
  rp::Plan p = rp::build_plan(r);
  summary = p.summary;
  const std::string path = dir.file("ring.plan");
  rp::write_plan(p, path);
  return path;
}

class DriverOn : public ::testing::TestWithParam<const char*> {};

TEST_P(DriverOn, ThreadsWithCrossThreadFreesComplete) {
  tailor::test::TempDir dir;
  rp::PlanSummary s;
  const std::string path = ring_plan(dir, 20000, s);
  ASSERT_EQ(s.cross_thread, 4u * 20000u + 6u);
  const rp::Allocator a = rp::resolve_allocator(GetParam(), tools(), {});
  const nlohmann::json j = rp::run_driver(tools(), a, path);
  EXPECT_EQ(j["allocator"], GetParam());
  EXPECT_EQ(j["threads"], 4);
  EXPECT_EQ(j["slots"], s.slots);
  EXPECT_EQ(j["calls"]["total"], s.calls[0]);
  EXPECT_EQ(j["calls"]["malloc"], s.calls[plan::kMalloc]);
  EXPECT_EQ(j["calls"]["calloc"], s.calls[plan::kCalloc]);
  EXPECT_EQ(j["calls"]["realloc"], s.calls[plan::kRealloc]);
  EXPECT_EQ(j["calls"]["aligned"], 6);
  EXPECT_EQ(j["calls"]["free"], s.calls[plan::kFree]);
  EXPECT_EQ(j["failed"], 0);
  EXPECT_EQ(j["emulated_aligned"], 0);  // glibc and libtailor have every aligned call
  EXPECT_GT(j["seconds"].get<double>(), 0);
  EXPECT_LT(j["seconds"].get<double>(), 60);
  EXPECT_GE(j["peak_rss_bytes"].get<double>(), j["rss_before_bytes"].get<double>());
  EXPECT_TRUE(j["peak_reset"].get<bool>());
  EXPECT_GT(j["os_bytes"].get<double>(), 0) << j["os_bytes_source"];
}

INSTANTIATE_TEST_SUITE_P(Replay, DriverOn, ::testing::Values("glibc", "libtailor"));

// jemalloc has no pvalloc of its own: the driver makes it with jemalloc's
// posix_memalign rather than glibc's, whose block jemalloc's free would not know.
TEST(Driver, AlignedCallsAnAllocatorLacksAreMadeWithItsPosixMemalign) {
  if (!std::ifstream("/usr/lib/x86_64-linux-gnu/libjemalloc.so.2")) GTEST_SKIP() << "no jemalloc";
  tailor::test::TempDir dir;
  rp::PlanSummary s;
  const std::string path = ring_plan(dir, 100, s);
  const nlohmann::json j = rp::run_driver(tools(), rp::resolve_allocator("jemalloc", tools(), {}), path);
  EXPECT_EQ(j["allocator"], "jemalloc");
  EXPECT_EQ(j["emulated_aligned"], 1);
  EXPECT_EQ(j["failed"], 0);
}

// Recorded while it replays, the driver's worker makes the plan's calls, in
// order, with the trace's sizes: the allocator sees the trace, nothing else
// (its main thread adds the allocation of pthread_create, before the loop).
TEST(Driver, MakesExactlyTheTracesCalls) {
  tailor::test::TempDir dir;
  std::vector<tr::Event> original;
  std::uint64_t t = 1;
  for (std::uint64_t i = 0; i < 3000; ++i) {
    const std::uint64_t a = 0x100000 + i * 0x1000;
    switch (i % 6) {
      case 0: original.push_back(event(0, t++, Op::Malloc, i, a)); break;
      case 1: original.push_back(event(0, t++, Op::Calloc, i % 50, a, 12)); break;
      case 2: original.push_back(event(0, t++, Op::Memalign, i, a, 64)); break;
      case 3: original.push_back(event(0, t++, Op::New, i, a)); break;
      case 4: original.push_back(event(0, t++, Op::PosixMemalign, i, a, 256)); break;
      default: original.push_back(event(0, t++, Op::AlignedAlloc, 512, a, 512)); break;
    }
    if (i % 3 == 0) original.push_back(event(0, t++, Op::Realloc, i + 100, a + 0x800, a));
    if (i % 2 == 0) original.push_back(event(0, t++, Op::Free, 0, i % 3 == 0 ? a + 0x800 : a));
  }
  rp::Plan p = rp::build_plan(original);
  const std::string plan_path = dir.file("calls.plan");
  rp::write_plan(p, plan_path);
  const std::string recorded = dir.file("driver.trace");
  auto o = tailor::test::run_command(std::string(TAILOR_BIN) + " record -q -o " + recorded + " -- " + REPLAY_DRIVER +
                                     " " + plan_path);
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(nlohmann::json::parse(o.out)["calls"]["total"], p.summary.calls[0]);

  // A trace of one thread is replayed on the driver's main thread, as its
  // program ran: the recording holds exactly the trace's calls, and no
  // thread start-up's.
  tr::Reader r(recorded);
  std::vector<tr::Event> worker;
  for (const tr::Event& e : r.read_all()) {
    if (e.op == Op::ThreadStart || e.op == Op::ThreadExit) continue;
    EXPECT_EQ(e.thread, 0u);
    worker.push_back(e);
  }
  ASSERT_EQ(worker.size(), p.summary.calls[0]);
  std::size_t k = 0;
  for (const tr::Event& e : original) {
    SCOPED_TRACE("event " + std::to_string(k));
    const tr::Event& got = worker[k++];
    const Op want = e.op == Op::New ? Op::Malloc : e.op;
    ASSERT_EQ(got.op, want);
    EXPECT_EQ(got.size, e.size);
    if (e.op == Op::Calloc || tr::is_aligned(e)) {
      EXPECT_EQ(got.aux, e.aux);
    }
  }
}

TEST(Driver, UsesNoCxxRuntime) {
  auto o = tailor::test::run_command(std::string("ldd ") + REPLAY_DRIVER);
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("libc.so"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("libstdc++"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("libgcc_s"), std::string::npos) << o.out;
}

TEST(Driver, EmptyPlanTakesNoTime) {
  tailor::test::TempDir dir;
  const std::string path = dir.file("empty.plan");
  rp::write_plan(rp::build_plan(std::vector<tr::Event>{}), path);
  const nlohmann::json j = rp::run_driver(tools(), rp::resolve_allocator("glibc", tools(), {}), path);
  EXPECT_EQ(j["threads"], 0);
  EXPECT_EQ(j["calls"]["total"], 0);
  EXPECT_EQ(j["seconds"], 0.0);
}

TEST(Driver, DamagedPlanIsAnErrorWithTheDriversMessage) {
  tailor::test::TempDir dir;
  const std::string path = dir.file("bad.plan");
  std::ofstream(path) << "TAILORPL but not really a plan, and long enough to hold a header of eighty bytes......";
  auto o = tailor::test::run_command(std::string(REPLAY_DRIVER) + " " + path);
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.err.find("tailor-replay-driver: " + path), std::string::npos) << o.err;
  rp::Allocator glibc = rp::resolve_allocator("glibc", tools(), {});
  EXPECT_THROW(rp::run_driver(tools(), glibc, path), std::runtime_error);
  auto missing = tailor::test::run_command(std::string(REPLAY_DRIVER) + " " + dir.file("none.plan"));
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.err.find("cannot open " + dir.file("none.plan")), std::string::npos) << missing.err;
}

TEST(Driver, APreloadThatDoesNotTakeIsAnError) {
  tailor::test::TempDir dir;
  rp::PlanSummary s;
  const std::string path = ring_plan(dir, 10, s);
  rp::Allocator a{"fake", dir.file("libnothing.so"), "", "jemalloc", {}};
  try {
    rp::run_driver(tools(), a, path);
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("replay: fake: the driver ran on glibc"), std::string::npos) << what;
    EXPECT_NE(what.find("libnothing.so"), std::string::npos) << what;
  }
}

}  // namespace
