// SPDX-License-Identifier: MIT
// ReplayStream: simulations that follow a trace while it loads measure
// exactly what simulations of the loaded trace measure, also when the
// operation array moves under them (more operations than the builder
// reserved), when several follow one load, and on a cut trace; the stream's
// finished trace is load_replay's.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <random>
#include <thread>
#include <vector>

#include "common/temp_dir.h"
#include "common/trace_file.h"
#include "simulate/replay_stream.h"
#include "simulate/random_trace.h"
#include "simulate/simulator.h"
#include "tailor/trace/reader.h"

namespace sim = tailor::simulate;
namespace tr = tailor::trace;

namespace {

// Mostly reallocs that move: about 1.8 operations per event, past the
// 1.25 per event the builder reserves, so the array grows while simulations read it.
std::vector<tr::Event> moving_reallocs(std::uint64_t seed, std::size_t count) {
  std::mt19937_64 rng(seed);
  std::vector<tr::Event> v;
  std::vector<std::uint64_t> live;
  std::uint64_t next = 0x100000;
  while (v.size() < count) {
    tr::Event e;
    const unsigned r = static_cast<unsigned>(rng() % 100);
    if (live.size() < 64 || r < 10) {
      e.op = tr::Op::Malloc, e.size = 16 + rng() % 4000, e.address = next += 0x2000;
      live.push_back(e.address);
    } else if (r < 20) {
      const std::size_t k = rng() % live.size();
      e.op = tr::Op::Free, e.address = live[k];
      live[k] = live.back();
      live.pop_back();
    } else {
      const std::size_t k = rng() % live.size();
      e.op = tr::Op::Realloc, e.size = 16 + rng() % 4000, e.aux = live[k], e.address = next += 0x2000;
      live[k] = e.address;
    }
    e.time_ns = v.size() + 1;
    v.push_back(e);
  }
  return v;
}

void expect_same_measures(const sim::Metrics& a, const sim::Metrics& b) {
  EXPECT_EQ(a.dmm, b.dmm);
  EXPECT_EQ(a.operations, b.operations);
  EXPECT_EQ(a.steps, b.steps);
  EXPECT_EQ(a.reads, b.reads);
  EXPECT_EQ(a.writes, b.writes);
  EXPECT_EQ(a.system_requests, b.system_requests);
  EXPECT_EQ(a.splits, b.splits);
  EXPECT_EQ(a.coalesces, b.coalesces);
  EXPECT_EQ(a.memory_usage, b.memory_usage);
  EXPECT_EQ(a.max_in_use, b.max_in_use);
  EXPECT_EQ(a.peak_operation, b.peak_operation);
  EXPECT_EQ(a.requested_at_peak, b.requested_at_peak);
  EXPECT_EQ(a.block_bytes_at_peak, b.block_bytes_at_peak);
  EXPECT_EQ(a.internal_fragmentation, b.internal_fragmentation);
  EXPECT_EQ(a.external_fragmentation, b.external_fragmentation);
  EXPECT_EQ(a.energy_nj, b.energy_nj);
  ASSERT_EQ(a.series.empty(), b.series.empty());
  if (a.series.empty()) return;
  EXPECT_EQ(a.series.back().operation, b.series.back().operation);
  EXPECT_EQ(a.series.back().held, b.series.back().held);
}

// Simulates `names` on a stream of `path` (each on its own thread, beside
// the load) and on the loaded trace, and compares.
// With a window, the operations pass through a ring of that many, and the
// finished trace keeps none of them.
void streamed_equals_loaded(const std::string& path, const std::vector<std::string>& names,
                            std::uint64_t window = 0) {
  tr::Reader loaded_reader(path);
  const sim::ReplayTrace loaded = sim::load_replay(loaded_reader);

  tr::Reader reader(path);
  sim::ReplayStream stream(reader, window, static_cast<unsigned>(names.size()));
  std::vector<sim::Metrics> streamed(names.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < names.size(); ++i)
    threads.emplace_back([&, i] { streamed[i] = sim::simulate(stream, names[i]); });
  stream.build();
  for (auto& t : threads) t.join();

  const sim::ReplayTrace& t = stream.wait_complete();
  EXPECT_EQ(stream.expected_operations(), loaded.operations.size());
  EXPECT_EQ(t.summary.allocations + t.summary.releases, loaded.operations.size());
  if (window != 0) {
    EXPECT_TRUE(t.operations.empty());
  } else {
    EXPECT_TRUE(t.operations == loaded.operations);
  }
  EXPECT_EQ(t.sizes, loaded.sizes);
  EXPECT_EQ(t.event_offsets, loaded.event_offsets);
  EXPECT_EQ(t.summary.max_live_blocks, loaded.summary.max_live_blocks);
  EXPECT_EQ(t.summary.max_in_use_bytes, loaded.summary.max_in_use_bytes);
  EXPECT_EQ(t.summary.events, loaded.summary.events);
  for (std::size_t i = 0; i < names.size(); ++i) {
    SCOPED_TRACE(names[i]);
    expect_same_measures(streamed[i], sim::simulate(loaded, names[i]));
  }
}

}  // namespace

TEST(ReplayStream, EveryStreamingDmmMeasuresWhatTheLoadedTraceGives) {
  tailor::test::TempDir dir;
  const std::string path = dir.file("random.trace");
  tailor::test::write_trace(path, tailor::test::random_events(7, 400000));  // about six publications
  streamed_equals_loaded(path, {"kng", "lea", "fib", "buddy", "s10"});
}

TEST(ReplayStream, TheOperationArrayMovesUnderItsReaders) {
  tailor::test::TempDir dir;
  const std::string path = dir.file("reallocs.trace");
  tailor::test::write_trace(path, moving_reallocs(11, 300000));
  tr::Reader reader(path);
  const sim::ReplayTrace loaded = sim::load_replay(reader);
  ASSERT_GT(loaded.operations.size(), reader.event_count() + reader.event_count() / 4);  // past the reserve
  streamed_equals_loaded(path, {"kng", "lea", "kng", "s10"});
}

// The smallest window (2^18 operations) goes round about four times, under
// five readers of different speeds, and as many times under the reallocs'
// 1.8 operations per event; under the sanitizers, a little over twice.
#if defined(TAILOR_SANITIZED)
constexpr std::uint64_t kWindowEvents = 600000, kWindowReallocs = 350000;
#else
constexpr std::uint64_t kWindowEvents = 1000000, kWindowReallocs = 600000;
#endif
TEST(ReplayStream, ThroughAWindowEveryDmmMeasuresWhatTheLoadedTraceGives) {
  tailor::test::TempDir dir;
  const std::string path = dir.file("random.trace");
  tailor::test::write_trace(path, tailor::test::random_events(7, kWindowEvents));
  streamed_equals_loaded(path, {"kng", "lea", "fib", "buddy", "s10"}, std::uint64_t{1} << 18);
  const std::string reallocs = dir.file("reallocs.trace");
  tailor::test::write_trace(reallocs, moving_reallocs(11, kWindowReallocs));
  streamed_equals_loaded(reallocs, {"kng", "lea"}, std::uint64_t{1} << 18);
}

// A reader that fails before it reads anything (an unknown DMM) lets go of
// the window: the build and the other reader finish.
TEST(ReplayStream, AFailedReaderDoesNotHoldTheWindow) {
  tailor::test::TempDir dir;
  const std::string path = dir.file("random.trace");
  tailor::test::write_trace(path, tailor::test::random_events(9, 600000));
  tr::Reader loaded_reader(path);
  const sim::ReplayTrace loaded = sim::load_replay(loaded_reader);
  tr::Reader reader(path);
  sim::ReplayStream stream(reader, std::uint64_t{1} << 18, 2);
  sim::Metrics kng;
  std::thread good([&] { kng = sim::simulate(stream, "kng"); });
  std::thread bad([&] { EXPECT_THROW(sim::simulate(stream, "nope"), std::invalid_argument); });
  stream.build();
  good.join();
  bad.join();
  expect_same_measures(kng, sim::simulate(loaded, "kng"));
}

TEST(ReplayStream, AWindowMustBeAPowerOfTwoOfAtLeastFourPublications) {
  tailor::test::TempDir dir;
  const std::string path = dir.file("small.trace");
  tailor::test::write_trace(path, tailor::test::random_events(5, 1000));
  for (std::uint64_t window : {std::uint64_t{1} << 17, (std::uint64_t{1} << 18) + 1}) {
    tr::Reader reader(path);
    sim::ReplayStream stream(reader, window, 1);
    std::thread reader_thread([&] { EXPECT_EQ(sim::simulate(stream, "kng").operations, 0u); });  // ends with the failed build
    EXPECT_THROW(stream.build(), std::invalid_argument);
    reader_thread.join();
  }
}

TEST(ReplayStream, ACutTraceStreamsWhatItHolds) {
  tailor::test::TempDir dir;
  const std::string path = dir.file("cut.trace");
  tailor::test::write_trace(path, tailor::test::random_events(3, 200000));
  std::filesystem::resize_file(path, std::filesystem::file_size(path) * 2 / 3);
  tr::Reader reader(path);
  ASSERT_FALSE(reader.complete());
  streamed_equals_loaded(path, {"kng", "lea"});
}

TEST(ReplayStream, AnEmptyTraceEndsItsReaders) {
  tailor::test::TempDir dir;
  const std::string path = dir.file("empty.trace");
  tailor::test::write_trace(path, {});
  streamed_equals_loaded(path, {"kng"});
}

TEST(ReplayStream, DmmsThatNeedTheWholeTraceAreRefused) {
  tailor::test::TempDir dir;
  const std::string path = dir.file("small.trace");
  tailor::test::write_trace(path, tailor::test::random_events(5, 1000));
  tr::Reader reader(path);
  sim::ReplayStream stream(reader);
  EXPECT_FALSE(sim::streams("exa"));
  EXPECT_TRUE(sim::streams("kng"));
  try {
    sim::simulate(stream, "exa");
    FAIL() << "exa streamed";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("whole trace"), std::string::npos) << e.what();
  }
  try {
    sim::simulate(stream, "nope");
    FAIL() << "an unknown DMM streamed";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("known: kng"), std::string::npos) << e.what();
  }
  stream.build();
  EXPECT_FALSE(stream.failed());
  EXPECT_EQ(stream.wait_complete().summary.events, 1000u);
}
