// SPDX-License-Identifier: MIT
// ReplayTrace: dense block ids, realloc, dropped events, allocations over a
// live address, the event index of each operation, and max in use equal to
// tailor stats' on the same trace.
#include <gtest/gtest.h>

#include <vector>

#include "common/temp_dir.h"
#include "common/trace_file.h"
#include "simulate/replay_trace.h"
#include "simulate/random_trace.h"
#include "tailor/trace/reader.h"
#include "analyze/trace_stats.h"

namespace {

namespace tr = tailor::trace;
namespace sim = tailor::simulate;
using sim::Operation;
using tr::Event;
using tr::Op;

Event ev(Op op, std::uint64_t size, std::uint64_t address, std::uint64_t aux = 0) {
  return tailor::test::untimed(op, size, address, aux);
}

std::vector<Event> mixed_events() {
  std::vector<Event> v = {
      ev(Op::ThreadStart, 77, 0),                // e0: dropped
      ev(Op::Malloc, 100, 0x1000),               // e1: op0 alloc id0 100
      ev(Op::Malloc, 200, 0x2000),               // e2: op1 alloc id1 200
      ev(Op::Free, 0, 0x1000),                   // e3: op2 release id0
      ev(Op::Malloc, 50, 0x3000),                // e4: op3 alloc id0 50 (id reused)
      ev(Op::Realloc, 300, 0x4000, 0x2000),      // e5: op4 alloc id2 300, op5 release id1 (a move allocates first)
      ev(Op::Free, 0, 0x9999),                   // e6: unknown release
      ev(Op::Free, 0, 0),                        // e7: free(NULL)
      ev(Op::Malloc, 1000, 0),                   // e8: failed
      ev(Op::Calloc, 10, 0x5000, 7),             // e9: op6 alloc id1 70
      ev(Op::Memalign, 100, 0x6000, 64),         // e10: op7 alloc id3 100, align 64
      ev(Op::Malloc, 8, 0x3000),                 // e11: over live 0x3000: op8 release id0, op9 alloc id0 8
      ev(Op::Realloc, 0, 0, 0x4000),             // e12: realloc(p, 0): op10 release id2
      ev(Op::Realloc, 30, 0x7000, 0),            // e13: realloc(NULL, 30): op11 alloc id2 30
  };
  for (std::size_t i = 0; i < v.size(); ++i) v[i].time_ns = 1000 + i;
  return v;
}

TEST(ReplayTrace, IdsReallocAndDroppedEvents) {
  sim::ReplayTrace t = sim::build_replay(mixed_events());
  struct Want {
    Operation::Kind kind;
    std::uint32_t block;
    std::uint64_t bytes;
    std::uint64_t alignment;
    std::uint64_t event;
  };
  const auto A = Operation::kAllocate, R = Operation::kRelease;
  const std::vector<Want> want = {
      // a release carries its block's request
      {A, 0, 100, 0, 1}, {A, 1, 200, 0, 2}, {R, 0, 100, 0, 3}, {A, 0, 50, 0, 4},
      {A, 2, 300, 0, 5}, {R, 1, 200, 0, 5}, {A, 1, 70, 0, 9},  {A, 3, 100, 64, 10},
      {R, 0, 50, 0, 11}, {A, 0, 8, 0, 11},  {R, 2, 300, 0, 12}, {A, 2, 30, 0, 13},
  };
  ASSERT_EQ(t.operations.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(t.operations[i].kind(), want[i].kind);
    EXPECT_EQ(t.operations[i].block, want[i].block);
    EXPECT_EQ(t.bytes(t.operations[i]), want[i].bytes);
    EXPECT_EQ(t.operations[i].alignment(), want[i].alignment);
    EXPECT_EQ(t.event_of(i), want[i].event);
  }
  const sim::ReplaySummary& s = t.summary;
  EXPECT_EQ(s.events, 14u);
  EXPECT_EQ(s.allocations, 8u);
  EXPECT_EQ(s.releases, 4u);
  EXPECT_EQ(s.reallocs, 3u);
  EXPECT_EQ(s.failed, 1u);
  EXPECT_EQ(s.null_releases, 1u);
  EXPECT_EQ(s.unknown_releases, 1u);
  EXPECT_EQ(s.reused_live, 1u);
  EXPECT_EQ(s.other_events, 1u);
  EXPECT_EQ(s.max_live_blocks, 4u);
  EXPECT_EQ(s.live_blocks_at_end, 4u);
  EXPECT_EQ(s.max_in_use_bytes, 520u);  // after e10: 50 + 300 + 70 + 100
  // The distinct sizes, once each in order of first request (100 twice: once plain, once aligned).
  EXPECT_EQ(t.sizes, (std::vector<std::uint64_t>{100, 200, 50, 300, 70, 8, 30}));
}

TEST(ReplayTrace, OperationsAreEightBytesAndKeepEveryField) {
  static_assert(sizeof(Operation) == 8);
  for (const auto kind : {Operation::kAllocate, Operation::kRelease})
    for (const std::uint32_t block : {0u, 1u, 0xffffffffu})
      for (const std::uint32_t size : {0u, 1u, Operation::kMaxSizes - 1})
        for (const unsigned align : {0u, 4u, 63u}) {
          const Operation op = Operation::make(kind, block, size, align);
          EXPECT_EQ(op.kind(), kind);
          EXPECT_EQ(op.block, block);
          EXPECT_EQ(op.size(), size);
          EXPECT_EQ(op.align_log2(), align);
          EXPECT_EQ(op.alignment(), align ? std::uint64_t{1} << align : 0);
        }
}

TEST(ReplayTrace, LargeAndSmallSizesShareOneTable) {
  std::vector<Event> v;
  std::uint64_t address = 0x10000;
  for (std::uint64_t size : {8ull, 65535ull, 65536ull, 1ull << 40, 8ull, 1ull << 40, 65536ull}) {
    v.push_back(ev(Op::Malloc, size, address));
    v.push_back(ev(Op::Free, 0, address));
    address += 0x1000;
  }
  sim::ReplayTrace t = sim::build_replay(v);
  EXPECT_EQ(t.sizes, (std::vector<std::uint64_t>{8, 65535, 65536, 1ull << 40}));
  ASSERT_EQ(t.operations.size(), 14u);
  for (std::size_t i = 0; i < 14; ++i) EXPECT_EQ(t.bytes(t.operations[i]), v[i - i % 2].size) << i;
}

TEST(ReplayTrace, FailedReallocChangesNothing) {
  std::vector<Event> v = {ev(Op::Malloc, 10, 0x1000), ev(Op::Realloc, 1u << 30, 0, 0x1000), ev(Op::Free, 0, 0x1000)};
  sim::ReplayTrace t = sim::build_replay(v);
  ASSERT_EQ(t.operations.size(), 2u);
  EXPECT_EQ(t.operations[1].kind(), Operation::kRelease);
  EXPECT_EQ(t.summary.failed, 1u);
  EXPECT_EQ(t.event_of(1), 2u);
}

TEST(ReplayTrace, MaxInUseMatchesTailorStats) {
  tailor::test::TempDir dir;
  const std::string path = dir.file("mixed.trace");
  tailor::test::write_trace(path, mixed_events());
  tr::Reader reader(path);
  sim::ReplayTrace t = sim::load_replay(reader);
  tailor::analyze::TraceStats stats = tailor::analyze::compute_stats(reader);
  EXPECT_EQ(t.summary.max_in_use_bytes, stats.max_in_use);
  EXPECT_EQ(t.summary.allocations, stats.objects);
  EXPECT_EQ(t.summary.unknown_releases, stats.unknown_releases);
  EXPECT_EQ(t.summary.reused_live, stats.reused_live);
  EXPECT_EQ(t.summary.events, stats.events);
  EXPECT_EQ(t.operations.size(), 12u);
}

// load_replay reads neither times nor call sites, and gives what
// build_replay gives on every event; the reader reads every column again
// afterwards.
TEST(ReplayTrace, LoadedWithoutTimesAndCallSitesAsBuiltFromEveryEvent) {
  tailor::test::TempDir dir;
  const std::string path = dir.file("random.trace");
  tailor::test::write_trace(path, tailor::test::random_events(21, 200000));
  tr::Reader reader(path);
  const std::vector<Event> all = reader.read_all();
  const sim::ReplayTrace built = sim::build_replay(all, reader.header().page_size);
  const sim::ReplayTrace loaded = sim::load_replay(reader);
  EXPECT_TRUE(loaded.operations == built.operations);
  EXPECT_EQ(loaded.sizes, built.sizes);
  EXPECT_EQ(loaded.event_offsets, built.event_offsets);
  EXPECT_EQ(loaded.summary.max_in_use_bytes, built.summary.max_in_use_bytes);
  EXPECT_EQ(reader.read_all(), all);
}

}  // namespace
