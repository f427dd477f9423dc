// SPDX-License-Identifier: MIT
// Replay plans built from hand-made traces: slots and their reuse, realloc
// chains, calloc and every aligned call, what is dropped and counted, an
// address reused while live, threads with cross-thread frees (through a trace
// file and the Reader's merge), and the plan file written and read back.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <vector>

#include "common/temp_dir.h"
#include "common/trace_file.h"
#include "replay/replay_plan.h"
#include "tailor/trace/reader.h"
#include "analyze/trace_stats.h"

namespace {

namespace tr = tailor::trace;
namespace rp = tailor::replay;
namespace plan = tailor::replay::plan;
using tailor::test::event;
using tr::Op;

// Events of thread 0 with times 1, 2, 3, ...
std::vector<tr::Event> timed(std::vector<tr::Event> v) {
  for (std::size_t i = 0; i < v.size(); ++i) v[i].time_ns = i + 1;
  return v;
}

tr::Event ev(Op op, std::uint64_t size, std::uint64_t address, std::uint64_t aux = 0, std::uint8_t flags = 0) {
  return event(0, 0, op, size, address, aux, flags);
}

struct Want {
  unsigned kind;
  std::uint32_t slot;
  std::uint64_t size = 0;
  unsigned flags = 0;
  std::uint64_t wait = 0;
};

void expect_ops(const rp::PlanThread& t, const std::vector<Want>& want) {
  const std::vector<plan::Op> ops = rp::decode(t);
  ASSERT_EQ(ops.size(), want.size());
  EXPECT_EQ(t.calls, want.size());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    SCOPED_TRACE("op " + std::to_string(i));
    EXPECT_EQ(ops[i].kind, want[i].kind);
    EXPECT_EQ(ops[i].slot, want[i].slot);
    EXPECT_EQ(ops[i].size, want[i].size);
    EXPECT_EQ(ops[i].flags & plan::kWait, want[i].flags);
    EXPECT_EQ(ops[i].wait, want[i].wait);
  }
}

TEST(ReplayPlan, SlotsAreReusedLastFreedFirst) {
  rp::Plan p = rp::build_plan(timed({
      ev(Op::Malloc, 10, 0x1000),  // slot 0
      ev(Op::Malloc, 20, 0x2000),  // slot 1
      ev(Op::New, 30, 0x3000),     // slot 2: new is malloc
      ev(Op::Free, 0, 0x1000),
      ev(Op::Delete, 30, 0x3000, 0, tr::kSized),  // sized delete is free
      ev(Op::Malloc, 40, 0x4000),  // slot 2 (freed last)
      ev(Op::Malloc, 50, 0x5000),  // slot 0
  }));
  ASSERT_EQ(p.threads.size(), 1u);
  expect_ops(p.threads[0], {{plan::kMalloc, 0, 10},
                            {plan::kMalloc, 1, 20},
                            {plan::kMalloc, 2, 30},
                            {plan::kFree, 0},
                            {plan::kFree, 2},
                            {plan::kMalloc, 2, 40},
                            {plan::kMalloc, 0, 50}});
  EXPECT_EQ(p.summary.slots, 3u);
  EXPECT_EQ(p.summary.max_live, 3u);
  EXPECT_EQ(p.summary.live_at_end, 3u);
  EXPECT_EQ(p.summary.calls[0], 7u);
  EXPECT_EQ(p.summary.calls[plan::kMalloc], 5u);
  EXPECT_EQ(p.summary.calls[plan::kFree], 2u);
  EXPECT_EQ(p.summary.cross_thread, 0u);
}

TEST(ReplayPlan, ReallocChainKeepsItsSlot) {
  rp::Plan p = rp::build_plan(timed({
      ev(Op::Malloc, 10, 0x1000),            // slot 0
      ev(Op::Malloc, 11, 0x9000),            // slot 1
      ev(Op::Realloc, 20, 0x2000, 0x1000),   // moved: realloc slot 0
      ev(Op::Realloc, 30, 0x2000, 0x2000),   // in place: realloc slot 0
      ev(Op::Realloc, 0, 0, 0x2000),         // realloc(p, 0) returned NULL: free slot 0
      ev(Op::Realloc, 5, 0x3000, 0),         // realloc(NULL, 5): malloc, slot 0 again
      ev(Op::Realloc, 1 << 20, 0, 0x3000),   // failed realloc: dropped, 0x3000 still live
      ev(Op::Realloc, 40, 0x4000, 0x3000),   // realloc slot 0
      ev(Op::Realloc, 50, 0x5000, 0x7777),   // old block unknown: malloc into a new slot
      ev(Op::Free, 0, 0x4000),
  }));
  ASSERT_EQ(p.threads.size(), 1u);
  expect_ops(p.threads[0], {{plan::kMalloc, 0, 10},
                            {plan::kMalloc, 1, 11},
                            {plan::kRealloc, 0, 20},
                            {plan::kRealloc, 0, 30},
                            {plan::kFree, 0},
                            {plan::kMalloc, 0, 5},
                            {plan::kRealloc, 0, 40},
                            {plan::kMalloc, 2, 50},
                            {plan::kFree, 0}});
  EXPECT_EQ(p.summary.calls[plan::kRealloc], 3u);
  EXPECT_EQ(p.summary.failed, 1u);
  EXPECT_EQ(p.summary.unknown_releases, 1u);
  EXPECT_EQ(p.summary.live_at_end, 2u);
}

TEST(ReplayPlan, CallocAlignedCallsAndLargeSizes) {
  const std::uint64_t big = std::uint64_t{3} << 30;  // does not fit in the head word
  rp::Plan p = rp::build_plan(timed({
      ev(Op::Calloc, 3, 0x1000, 40),
      ev(Op::Memalign, 100, 0x2000, 64),
      ev(Op::PosixMemalign, 200, 0x3000, 4096),
      ev(Op::AlignedAlloc, 256, 0x4000, 128),
      ev(Op::Valloc, 300, 0x5000, 4096),
      ev(Op::Pvalloc, 5000, 0x6000, 4096),
      ev(Op::New, 64, 0x7000, 32, tr::kAligned),
      ev(Op::New, 64, 0x8000, 0, tr::kArray),  // plain new[]: malloc
      ev(Op::Malloc, big, 0x9000),
      ev(Op::Calloc, big, 0xa000, 2),
      ev(Op::Realloc, big + 1, 0xb000, 0x9000),
  }));
  ASSERT_EQ(p.threads.size(), 1u);
  const std::vector<plan::Op> ops = rp::decode(p.threads[0]);
  ASSERT_EQ(ops.size(), 11u);
  EXPECT_EQ(ops[0].kind, plan::kCalloc);
  EXPECT_EQ(ops[0].size, 3u);
  EXPECT_EQ(ops[0].element, 40u);
  struct Aligned {
    unsigned call;
    std::uint64_t size, alignment;
  } want[] = {{plan::kMemalign, 100, 64},     {plan::kPosixMemalign, 200, 4096}, {plan::kAlignedAlloc, 256, 128},
              {plan::kValloc, 300, 4096},     {plan::kPvalloc, 5000, 4096},      {plan::kNewAligned, 64, 32}};
  for (std::size_t i = 0; i < 6; ++i) {
    SCOPED_TRACE("aligned " + std::to_string(i));
    EXPECT_EQ(ops[1 + i].kind, plan::kAligned);
    EXPECT_EQ(ops[1 + i].call, want[i].call);
    EXPECT_EQ(ops[1 + i].size, want[i].size);
    EXPECT_EQ(ops[1 + i].alignment, want[i].alignment);
  }
  EXPECT_EQ(ops[7].kind, plan::kMalloc);
  EXPECT_EQ(ops[8].kind, plan::kMalloc);
  EXPECT_EQ(ops[8].size, big);
  EXPECT_TRUE(ops[8].flags & plan::kBigSize);
  EXPECT_EQ(ops[9].kind, plan::kCalloc);
  EXPECT_EQ(ops[9].size, big);
  EXPECT_EQ(ops[9].element, 2u);
  EXPECT_EQ(ops[10].kind, plan::kRealloc);
  EXPECT_EQ(ops[10].size, big + 1);
  EXPECT_EQ(ops[10].slot, ops[8].slot);
  EXPECT_EQ(p.summary.calls[plan::kAligned], 6u);
  EXPECT_EQ(p.summary.calls[plan::kCalloc], 2u);
  // head + calloc's element; head + alignment (x6); head (x1); head + size; head + size + element; head + size.
  EXPECT_EQ(p.threads[0].words.size(), 2u + 12u + 1u + 2u + 3u + 2u);
}

TEST(ReplayPlan, DroppedEventsAreCounted) {
  rp::Plan p = rp::build_plan(timed({
      ev(Op::ThreadStart, 1234, 0),
      ev(Op::Malloc, 10, 0),                 // failed
      ev(Op::PosixMemalign, 10, 0, 64),      // failed
      ev(Op::Realloc, 10, 0, 0),             // realloc(NULL, 10) failed
      ev(Op::Free, 0, 0),                    // free(NULL)
      ev(Op::Delete, 0, 0),                  // delete nullptr
      ev(Op::Free, 0, 0x5555),               // never allocated
      ev(Op::Malloc, 10, 0x1000),
      ev(Op::Free, 0, 0x1000),
      ev(Op::Free, 0, 0x1000),               // double free in the trace: unknown by then
      ev(Op::ThreadExit, 0, 0),
  }));
  const auto& s = p.summary;
  EXPECT_EQ(s.events, 11u);
  EXPECT_EQ(s.calls[0], 2u);
  EXPECT_EQ(s.failed, 3u);
  EXPECT_EQ(s.null_releases, 2u);
  EXPECT_EQ(s.unknown_releases, 2u);
  EXPECT_EQ(s.other_events, 2u);
  EXPECT_EQ(s.live_at_end, 0u);
}

TEST(ReplayPlan, NoCallsNoThreads) {
  rp::Plan p = rp::build_plan(timed({ev(Op::ThreadStart, 1, 0), ev(Op::Free, 0, 0)}));
  EXPECT_TRUE(p.threads.empty());
  EXPECT_EQ(p.summary.calls[0], 0u);
  EXPECT_EQ(p.summary.slots, 0u);
}

TEST(ReplayPlan, AllocationOverALiveAddressFreesTheOldBlockFirst) {
  rp::Plan p = rp::build_plan(timed({
      ev(Op::Malloc, 10, 0x1000),           // slot 0
      ev(Op::Malloc, 20, 0x1000),           // the trace missed a free: free slot 0, malloc into slot 0
      ev(Op::Malloc, 30, 0x2000),           // slot 1
      ev(Op::Realloc, 40, 0x2000, 0x1000),  // realloc slot 0 onto the live 0x2000: free slot 1 first
      ev(Op::Free, 0, 0x2000),
  }));
  ASSERT_EQ(p.threads.size(), 1u);
  expect_ops(p.threads[0], {{plan::kMalloc, 0, 10},
                            {plan::kFree, 0},
                            {plan::kMalloc, 0, 20},
                            {plan::kMalloc, 1, 30},
                            {plan::kFree, 1},
                            {plan::kRealloc, 0, 40},
                            {plan::kFree, 0}});
  EXPECT_EQ(p.summary.reused_live, 2u);
  EXPECT_EQ(p.summary.live_at_end, 0u);
}

// Two threads through a trace file. Thread 0 allocates A and B; thread 1
// frees A (waits for generation 1 of A's slot 0), then allocates C, which
// takes slot 0 (thread 1 freed it last; generation 2), reallocates B (waits
// for slot 1's generation 1; the new block is generation 2 and thread 1's);
// thread 0 frees C (waits for generation 2 of slot 0) and B's new block
// (generation 2 of slot 1); thread 0 frees its own D without waiting.
TEST(ReplayPlan, CrossThreadFreesWaitForTheAllocationsGeneration) {
  tailor::test::TempDir dir;
  const std::string path = dir.file("threads.trace");
  tailor::test::write_thread_trace(path, {
                                             event(0, 10, Op::Malloc, 8, 0xa000),          // A: slot 0 gen 1
                                             event(0, 11, Op::Malloc, 16, 0xb000),         // B: slot 1 gen 1
                                             event(1, 12, Op::ThreadStart, 99, 0),
                                             event(1, 20, Op::Free, 0, 0xa000),            // wait slot 0 gen 1
                                             event(1, 21, Op::Malloc, 24, 0xc000),         // C: slot 0 gen 2
                                             event(1, 22, Op::Realloc, 32, 0xd000, 0xb000),  // wait slot 1 gen 1
                                             event(0, 30, Op::Free, 0, 0xc000),            // wait slot 0 gen 2
                                             event(0, 31, Op::Free, 0, 0xd000),            // wait slot 1 gen 2
                                             event(0, 32, Op::Malloc, 40, 0xe000),         // D: slot 1 (freed last)
                                             event(0, 33, Op::Free, 0, 0xe000),
                                         });
  tr::Reader r(path);
  rp::Plan p = rp::build_plan(r);
  ASSERT_EQ(p.threads.size(), 2u);
  EXPECT_EQ(p.threads[0].trace_thread, 0u);
  EXPECT_EQ(p.threads[1].trace_thread, 1u);
  expect_ops(p.threads[0], {{plan::kMalloc, 0, 8},
                            {plan::kMalloc, 1, 16},
                            {plan::kFree, 0, 0, plan::kWait, 2},
                            {plan::kFree, 1, 0, plan::kWait, 2},
                            {plan::kMalloc, 1, 40},
                            {plan::kFree, 1}});
  expect_ops(p.threads[1], {{plan::kFree, 0, 0, plan::kWait, 1},
                            {plan::kMalloc, 0, 24},
                            {plan::kRealloc, 1, 32, plan::kWait, 1}});
  EXPECT_EQ(p.summary.cross_thread, 4u);
  EXPECT_EQ(p.summary.slots, 2u);
  EXPECT_EQ(p.summary.other_events, 1u);
}

// The plan makes as many calls as tailor stats counts memory operations,
// less the dropped ones, and allocates as many objects.
TEST(ReplayPlan, CountsAgreeWithTailorStats) {
  tailor::test::TempDir dir;
  const std::string path = dir.file("mixed.trace");
  std::vector<tr::Event> v;
  std::uint64_t t = 1;
  for (std::uint32_t thread = 0; thread < 3; ++thread)
    for (std::uint64_t i = 0; i < 500; ++i) {
      const std::uint64_t a = 0x100000 * (thread + 1) + i * 0x100;
      v.push_back(event(thread, t++, i % 7 ? Op::Malloc : Op::Calloc, 8 + i % 100, a, i % 7 ? 0 : 3));
      if (i % 3 == 0) v.push_back(event(thread, t++, Op::Realloc, 200, a + 0x80000, a));
      if (i % 2 == 0) v.push_back(event((thread + 1) % 3, t++, Op::Free, 0, i % 3 == 0 ? a + 0x80000 : a));
    }
  v.push_back(event(0, t++, Op::Free, 0, 0));
  tailor::test::write_thread_trace(path, v);
  tr::Reader r(path);
  rp::Plan p = rp::build_plan(r);
  auto stats = tailor::analyze::compute_stats(r, {});
  const auto& s = p.summary;
  EXPECT_EQ(s.calls[0] + s.null_releases + s.failed + s.unknown_releases + s.other_events, stats.memory_ops);
  EXPECT_EQ(s.calls[plan::kMalloc] + s.calls[plan::kCalloc] + s.calls[plan::kRealloc] + s.calls[plan::kAligned],
            stats.objects);
  EXPECT_GT(s.cross_thread, 0u);
  EXPECT_EQ(s.live_at_end, stats.live_objects_at_end);
}

TEST(ReplayPlan, FileRoundTrip) {
  tailor::test::TempDir dir;
  std::vector<tr::Event> v;
  std::uint64_t t = 1;
  for (std::uint32_t thread = 0; thread < 2; ++thread)
    for (std::uint64_t i = 0; i < 3000; ++i) {
      v.push_back(event(thread, t++, Op::Malloc, i * 977, 0x1000000 * (thread + 1) + i * 16));
      v.push_back(event(thread, t++, Op::AlignedAlloc, 64, 0x9000000 * (thread + 1) + i * 64, 64));
      if (i % 2) v.push_back(event(1 - thread, t++, Op::Free, 0, 0x1000000 * (thread + 1) + (i - 1) * 16));
    }
  const std::string trace = dir.file("t.trace");
  tailor::test::write_thread_trace(trace, v);
  tr::Reader r(trace);
  rp::Plan p = rp::build_plan(r);
  const std::string file = dir.file("t.plan");
  rp::write_plan(p, file);
  rp::Plan q = rp::read_plan(file);
  ASSERT_EQ(q.threads.size(), p.threads.size());
  for (std::size_t i = 0; i < p.threads.size(); ++i) {
    EXPECT_EQ(q.threads[i].trace_thread, p.threads[i].trace_thread);
    EXPECT_EQ(q.threads[i].calls, p.threads[i].calls);
    EXPECT_EQ(q.threads[i].words, p.threads[i].words);
  }
  EXPECT_EQ(q.summary.slots, p.summary.slots);
  for (unsigned k = 0; k < plan::kKinds; ++k) EXPECT_EQ(q.summary.calls[k], p.summary.calls[k]);
}

TEST(ReplayPlan, DamagedPlanFilesAreRejectedWithTheirName) {
  tailor::test::TempDir dir;
  rp::Plan p = rp::build_plan(timed({ev(Op::Malloc, 10, 0x1000), ev(Op::Calloc, 2, 0x2000, 8), ev(Op::Free, 0, 0x1000)}));
  const std::string good = dir.file("good.plan");
  rp::write_plan(p, good);
  std::ifstream in(good, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());

  auto expect_rejected = [&](const std::string& name, const std::string& content, const std::string& what) {
    const std::string path = dir.file(name);
    std::ofstream(path, std::ios::binary) << content;
    try {
      rp::read_plan(path);
      ADD_FAILURE() << name << " was accepted";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  expect_rejected("truncated.plan", bytes.substr(0, bytes.size() - 8), "its ops lie outside the file");
  expect_rejected("short.plan", bytes.substr(0, 20), "not a valid replay plan: cut inside its header");
  std::string magic = bytes;
  magic[0] = 'X';
  expect_rejected("magic.plan", magic, "bad magic");
  std::string slot = bytes;
  slot[sizeof(plan::PlanHeader) + sizeof(plan::PlanThreadEntry) + 1] = 9;  // first op's slot
  expect_rejected("slot.plan", slot, "slot out of range");
  EXPECT_THROW(rp::read_plan(dir.file("missing.plan")), std::runtime_error);
  EXPECT_THROW(rp::write_plan(p, dir.file("no/such/dir.plan")), std::runtime_error);
}

}  // namespace
