// SPDX-License-Identifier: MIT
// The checker: it catches deliberately broken allocators (test doubles that
// overlap blocks, misalign them, hand out memory never obtained, or hold less
// than is in use), names the trace event, and passes KNG on a random trace of
// 100k events and on a recorded workload.
#include <gtest/gtest.h>

#include "simulate/recorded_cfrac.h"

#include <cstdlib>
#include <initializer_list>
#include <string>
#include <vector>

#include "simulate/checker.h"
#include "common/temp_dir.h"
#include "common/trace_file.h"
#include "dmm/kingsley.h"
#include "simulate/replay_trace.h"
#include "simulate/checked_run.h"
#include "simulate/random_trace.h"
#include "simulate/simulated_memory.h"
#include "simulate/simulator.h"
#include "tailor/trace/reader.h"
#include "analyze/trace_stats.h"

namespace {

using tailor::test::untimed;

namespace sim = tailor::simulate;
namespace tr = tailor::trace;

// A bump allocator with a configurable defect.
struct Broken {
  enum Defect { kNone, kOverlap, kMisaligned, kOutside, kShort, kWrongRelease };
  static constexpr std::uint64_t kMinAlignment = 16;

  Broken(sim::SimulatedMemory& m, Defect d) : memory(m), defect(d) {}

  sim::Block allocate(std::uint64_t bytes, std::uint64_t alignment) {
    const std::uint64_t size = (std::max<std::uint64_t>(bytes, 1) + 15) & ~std::uint64_t{15};
    const std::uint64_t align = std::max<std::uint64_t>(alignment, 16);
    ++count;
    if (defect == kOutside && count == 3) return {next + (std::uint64_t{1} << 20), size};
    sim::Address a = memory.obtain(size + align, 8);
    a = (a + align - 1) & ~(align - 1);
    if (defect == kOverlap && count == 3) a = last;  // the same block as the previous allocation
    if (defect == kMisaligned && count == 3) a += 8;
    last = a;
    next = a + size;
    return {a, defect == kShort && count == 3 ? bytes - 1 : size};
  }
  std::uint64_t release(sim::Address) { return defect == kWrongRelease ? 1 : 16; }
  std::uint64_t steps() const { return 0; }

  sim::SimulatedMemory& memory;
  Defect defect;
  std::uint64_t count = 0;
  sim::Address last = 0, next = 0;
};


// e0 thread start, e1..e4 malloc(16) x 4, e5 free(first).
sim::ReplayTrace small_trace() {
  return sim::build_replay(std::vector<tr::Event>{untimed(tr::Op::ThreadStart, 1, 0), untimed(tr::Op::Malloc, 16, 0x100),
                                                  untimed(tr::Op::Malloc, 16, 0x200), untimed(tr::Op::Malloc, 16, 0x300),
                                                  untimed(tr::Op::Malloc, 16, 0x400), untimed(tr::Op::Free, 0, 0x100)});
}

std::string check_error(Broken::Defect d) {
  sim::ReplayTrace t = small_trace();
  sim::SimulatedMemory memory;
  Broken broken(memory, d);
  sim::SimulateOptions o;
  o.check = true;
  try {
    sim::run(broken, memory, t, o);
  } catch (const sim::CheckError& e) {
    return e.what();
  }
  return "";
}

// The checker's error for `d` says each of `parts`.
void expect_check_error(Broken::Defect d, std::initializer_list<const char*> parts) {
  const std::string e = check_error(d);
  for (const char* part : parts) EXPECT_NE(e.find(part), std::string::npos) << e;
}

TEST(Checker, PassesACorrectAllocator) { EXPECT_EQ(check_error(Broken::kNone), ""); }

TEST(Checker, CatchesOverlap) { expect_check_error(Broken::kOverlap, {"at event 3 (operation 2)", "overlaps"}); }

TEST(Checker, CatchesMisalignment) { expect_check_error(Broken::kMisaligned, {"at event 3", "not aligned to 16"}); }

// Below 16, alignment follows the size: 24 bytes may be 8-aligned, 32 may not.
TEST(Checker, SizesThatAreMultiplesOf16Need16) {
  const sim::ReplayTrace t = small_trace();
  sim::SimulatedMemory memory;
  const sim::Address a = memory.obtain(4096, 4096);
  sim::Checker checker(t, memory, 8);
  checker.allocated(1, 24, 0, {a + 8, 24});
  try {
    checker.allocated(2, 32, 0, {a + 40, 32});
    ADD_FAILURE() << "an 8-aligned block for 32 bytes passed";
  } catch (const sim::CheckError& e) {
    EXPECT_NE(std::string(e.what()).find("not aligned to 16"), std::string::npos) << e.what();
  }
}

TEST(Checker, CatchesMemoryNotObtained) {
  expect_check_error(Broken::kOutside, {"at event 3", "not inside memory obtained"});
}

TEST(Checker, CatchesShortBlock) { expect_check_error(Broken::kShort, {"a block of 15 bytes serves a request of 16"}); }

TEST(Checker, CatchesWrongReleaseSize) { expect_check_error(Broken::kWrongRelease, {"at event 5 (operation 4)"}); }

TEST(Checker, CatchesHeldBelowInUse) {
  // A memory that gives back what is still in use: held drops below in use.
  struct Leaky : Broken {
    using Broken::Broken;
    std::uint64_t release(sim::Address) {
      for (int i = 0; i < 3; ++i)  // of the four 32-byte regions, while 48 bytes stay in use
        memory.release(memory.regions().front().start, memory.regions().front().bytes);
      return 16;
    }
  };
  sim::ReplayTrace t = small_trace();
  sim::SimulatedMemory memory;
  Leaky leaky(memory, Broken::kNone);
  sim::SimulateOptions o;
  o.check = true;
  try {
    sim::run(leaky, memory, t, o);
    FAIL() << "no error";
  } catch (const sim::CheckError& e) {
    EXPECT_EQ(e.event(), 5u);
    EXPECT_NE(std::string(e.what()).find("32 bytes held from the system, below the 48 bytes in use"), std::string::npos) << e.what();
  }
}

TEST(Checker, KingsleyOnARandomTrace) {
  tailor::test::TempDir dir;
  const std::string path = dir.file("random.trace");
  tailor::test::write_trace(path, tailor::test::random_events(2024, 100000));
  tr::Reader reader(path);
  sim::ReplayTrace t = sim::load_replay(reader);
  EXPECT_EQ(t.summary.max_in_use_bytes, tailor::analyze::compute_stats(reader).max_in_use);
  EXPECT_EQ(t.summary.unknown_releases, 0u);
  const auto [checked, plain] = tailor::test::expect_checked_run_as_plain(t, "kng");
  EXPECT_EQ(plain.internal_fragmentation, checked.internal_fragmentation);
  EXPECT_EQ(plain.external_fragmentation, checked.external_fragmentation);
  EXPECT_EQ(plain.series.size(), sim::SimulateOptions::kDefaultSamples + 1);  // every n/1000 ops, and the last
}

TEST(Checker, KingsleyOnARecordedWorkload) {
  TAILOR_SKIP_UNLESS_CFRAC();
  tailor::test::TempDir dir;
  const std::string path = tailor::test::record_cfrac(dir);
  ASSERT_FALSE(path.empty());
  tr::Reader reader(path);
  sim::ReplayTrace t = sim::load_replay(reader);
  EXPECT_EQ(t.summary.max_in_use_bytes, tailor::analyze::compute_stats(reader).max_in_use);
  EXPECT_GT(t.operations.size(), 1000000u);
  sim::SimulateOptions o;
  o.check = true;
  sim::Metrics m = sim::simulate(t, "kng", o);
  EXPECT_GE(m.memory_usage, t.summary.max_in_use_bytes);
}

}  // namespace
