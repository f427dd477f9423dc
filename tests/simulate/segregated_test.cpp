// SPDX-License-Identifier: MIT
// Segregated free lists, S10 and EXA worked out by hand (page and chunk 4096,
// simulated base B = 2^32): class choice at the boundaries, carving and
// chunks with exact held bytes, LIFO vs FIFO reuse order, first, best and
// exact fit in S10's last list with their steps, reads and writes, EXA's
// exact-size reuse, alignment, and the checker on random traces (the counting
// rule is at the top of src/simulate/segregated_lists.h and free_list.h).
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "simulate/replay_trace.h"
#include "dmm/segregated_lists.h"
#include "simulate/dmm.h"
#include "simulate/base_address.h"
#include "simulate/simulated_memory.h"
#include "simulate/simulator.h"
#include "simulate/checked_run.h"
#include "simulate/random_trace.h"

namespace {

namespace sim = tailor::simulate;
namespace tr = tailor::trace;
using Seg = sim::SegregatedLists<sim::SimulatedMemory>;

Seg s10(sim::SimulatedMemory& m) { return Seg(m, sim::s10_classes(), sim::s10_config()); }

TEST(Segregated, S10ClassChoiceAtTheBoundaries) {
  sim::SimulatedMemory mem;
  Seg s = s10(mem);
  ASSERT_EQ(s.classes().count(), 10u);
  // Sizes are requests rounded up to 8 (0 counts as 1); classes (0,16], (16,32], ..., (2048,4096], (4096, inf).
  EXPECT_EQ(s.class_for(0), 0u);
  EXPECT_EQ(s.class_for(1), 0u);
  EXPECT_EQ(s.class_for(16), 0u);
  EXPECT_EQ(s.class_for(17), 1u);  // size 24
  EXPECT_EQ(s.class_for(32), 1u);
  EXPECT_EQ(s.class_for(33), 2u);  // size 40
  EXPECT_EQ(s.class_for(64), 2u);
  EXPECT_EQ(s.class_for(65), 3u);
  EXPECT_EQ(s.class_for(2048), 7u);
  EXPECT_EQ(s.class_for(2049), 8u);
  EXPECT_EQ(s.class_for(4096), 8u);
  EXPECT_EQ(s.class_for(4097), 9u);   // size 4104: the open last list
  EXPECT_EQ(s.class_for(40000), 9u);  // above the class table: binary search
  EXPECT_EQ(s.class_for(std::uint64_t{1} << 35), 9u);
  // Alignment slack counts in the size: 1 + (64 - 16) = 49 -> 56.
  EXPECT_EQ(s.class_for(1, 64), 2u);
  EXPECT_EQ(s.class_for(1, 16), 0u);  // 16 is every block's alignment: no slack
  EXPECT_EQ(s.class_for(100, 4096), 9u);
  EXPECT_EQ(s.class_for(std::uint64_t{1} << 41), sim::SizeClasses::kNone);
  EXPECT_EQ(s.allocate(std::uint64_t{1} << 41).address, 0u);  // no class: nothing served
  // Blocks: header + size, rounded to 16.
  EXPECT_EQ(Seg::block_for(8), 16u);
  EXPECT_EQ(Seg::block_for(16), 32u);
  EXPECT_EQ(Seg::block_for(24), 32u);
  EXPECT_EQ(Seg::block_for(32), 48u);
  // No S10 list holds a single block size (e.g. (0,16] holds blocks of 16 and 32).
  for (std::uint32_t c = 0; c < 10; ++c) EXPECT_FALSE(s.list(c).uniform) << c;
}

TEST(Segregated, ExaClassChoice) {
  sim::SimulatedMemory mem;
  Seg e(mem, sim::exa_classes({16, 24, 100, 70000}), sim::exa_config());
  ASSERT_EQ(e.classes().count(), 5u);  // 16, 24, 104, 70000 and the open class above
  EXPECT_EQ(e.class_for(1), 0u);
  EXPECT_EQ(e.class_for(16), 0u);
  EXPECT_EQ(e.class_for(17), 1u);
  EXPECT_EQ(e.class_for(24), 1u);
  EXPECT_EQ(e.class_for(100), 2u);
  EXPECT_EQ(e.class_for(104), 2u);
  EXPECT_EQ(e.class_for(70000), 3u);
  EXPECT_EQ(e.class_for(70001), 4u);
  for (std::uint32_t c = 0; c < 4; ++c) EXPECT_TRUE(e.list(c).uniform) << c;
  EXPECT_FALSE(e.list(4).uniform);
  // Strict classes: a request takes the block of its class's bound.
  EXPECT_EQ(e.allocate(1).bytes, 32u);       // class 16
  EXPECT_EQ(e.allocate(101).bytes, 112u);    // class 104
  EXPECT_EQ(e.allocate(70001).bytes, 70016u);  // open class: its own size, 70008 + 8
}

TEST(Segregated, SizesOfATrace) {
  sim::ReplayTrace t;
  t.sizes = {24, 17, 100000, 1};
  t.operations = {sim::Operation::make(sim::Operation::kAllocate, 0, 0, 0),
                  sim::Operation::make(sim::Operation::kAllocate, 1, 1, 0),  // 24 again
                  sim::Operation::make(sim::Operation::kAllocate, 2, 2, 0),
                  sim::Operation::make(sim::Operation::kRelease, 2, 2, 0),
                  sim::Operation::make(sim::Operation::kAllocate, 3, 3, 6),  // 1 + 48 -> 56
                  sim::Operation::make(sim::Operation::kAllocate, 4, 3, 0)};  // 1 -> 8
  EXPECT_EQ(sim::sizes_of(t), (std::vector<std::uint64_t>{8, 24, 56, 100000}));
}

TEST(Segregated, CarvingChunksAndHeldBytesByHand) {
  sim::SimulatedMemory mem;
  Seg s = s10(mem);
  // First block: one chunk [B, B + 4096), the block 8 bytes in so that data is 16-aligned.
  sim::Block a = s.allocate(1);
  EXPECT_EQ(a.address, B + 16);
  EXPECT_EQ(a.bytes, 16u);
  EXPECT_EQ(s.steps(), 2u);  // carve + system request (the empty list costs nothing)
  EXPECT_EQ(mem.writes(), 1u);  // the header
  EXPECT_EQ(mem.reads(), 0u);
  EXPECT_EQ(mem.held(), 4096u);
  EXPECT_EQ(mem.load(B + 8), sim::BlockHeader::make(16, 0));
  sim::Block b = s.allocate(20);  // size 24, class 1, a 32-byte block right after
  EXPECT_EQ(b.address, B + 32);
  EXPECT_EQ(b.bytes, 32u);
  sim::Block c = s.allocate(1000);  // block 1008 at B + 56
  EXPECT_EQ(c.address, B + 64);
  EXPECT_EQ(c.bytes, 1008u);
  EXPECT_EQ(s.steps(), 4u);
  // 5000: a block of 5008 does not fit the 3032 bytes left: a region of
  // round_up(5008 + 8, 4096) = 8192 at B + 4096; it has 3176 bytes left,
  // more than the old chunk's 3032, so the bump pointer moves there.
  sim::Block d = s.allocate(5000);
  EXPECT_EQ(d.address, B + 4096 + 16);
  EXPECT_EQ(d.bytes, 5008u);
  EXPECT_EQ(mem.held(), 4096u + 8192u);
  EXPECT_EQ(mem.system_requests(), 2u);
  EXPECT_EQ(s.steps(), 6u);
  sim::Block e = s.allocate(3100);  // size 3104, block 3120 fits the 3176 left
  EXPECT_EQ(e.address, B + 4096 + 8 + 5008 + 8);
  EXPECT_EQ(e.bytes, 3120u);
  EXPECT_EQ(mem.held(), 4096u + 8192u);
  // 100 bytes: block 112 does not fit the 56 left; a new page, with 3976 left (> 56): the bump moves.
  sim::Block f = s.allocate(100);
  EXPECT_EQ(f.address, B + 12288 + 16);
  EXPECT_EQ(mem.held(), 16384u);
  EXPECT_EQ(s.steps(), 7u + 2u);
  EXPECT_EQ(mem.writes(), 6u);  // six headers
  EXPECT_EQ(mem.reads(), 1u);   // only this test's own load of a's header
  // 4000 -> block 4016 does not fit the 3976 left; its own page leaves only
  // 72, so the bump pointer stays: the next 8 bytes follow f.
  sim::Block g = s.allocate(4000);
  EXPECT_EQ(g.address, B + 16384 + 16);
  EXPECT_EQ(g.bytes, 4016u);
  EXPECT_EQ(s.allocate(8).address, B + 12288 + 8 + 112 + 8);
  EXPECT_EQ(mem.held(), 20480u);
  // Releases give back the block's bytes; memory is never returned.
  EXPECT_EQ(s.release(d.address), 5008u);
  EXPECT_EQ(s.release(a.address), 16u);
  EXPECT_EQ(mem.held(), 20480u);
  EXPECT_EQ(mem.held_high_water(), 20480u);
}

TEST(Segregated, LifoAndFifoReuseOrder) {
  for (sim::Policy policy : {sim::Policy::kLifo, sim::Policy::kFifo}) {
    SCOPED_TRACE(sim::to_string(policy));
    sim::SimulatedMemory mem;
    sim::SegregatedConfig cfg = sim::s10_config();
    cfg.policy = policy;
    Seg s(mem, sim::s10_classes(), cfg);
    const sim::Address a = s.allocate(20).address, b = s.allocate(20).address, c = s.allocate(20).address;
    const std::uint64_t steps = s.steps(), reads = mem.reads(), writes = mem.writes();
    s.release(a);
    s.release(b);
    s.release(c);
    EXPECT_EQ(s.steps() - steps, 3u);
    EXPECT_EQ(mem.reads() - reads, 3u);  // the headers
    // LIFO: a link each; FIFO: the link (0) of each, and the old tail's link for b and c.
    EXPECT_EQ(mem.writes() - writes, policy == sim::Policy::kLifo ? 3u : 5u);
    const std::vector<sim::Address> expect =
        policy == sim::Policy::kLifo ? std::vector<sim::Address>{c, b, a} : std::vector<sim::Address>{a, b, c};
    for (sim::Address want : expect) {
      const std::uint64_t st = s.steps(), rd = mem.reads(), wr = mem.writes();
      EXPECT_EQ(s.allocate(24).address, want);
      EXPECT_EQ(s.steps() - st, 1u);   // the head fits
      EXPECT_EQ(mem.reads() - rd, 2u);  // its header and link
      EXPECT_EQ(mem.writes() - wr, 0u);  // taking the head writes nothing; the header stays
    }
    EXPECT_EQ(s.allocate(24).address, c + 32);  // empty again: carved after c
  }
}

// S10's last list after releasing 5000, 6000 and 9000-byte requests in the
// order given (LIFO: the last released is the head).
struct LastList {
  sim::SimulatedMemory mem;
  Seg s;
  sim::Block p, q, r;
  explicit LastList(sim::Fit fit) : s(mem, sim::s10_classes(), config(fit)) {
    p = s.allocate(5000);  // block 5008
    q = s.allocate(9000);  // 9008
    r = s.allocate(6000);  // 6016
  }
  static sim::SegregatedConfig config(sim::Fit fit) {
    sim::SegregatedConfig c = sim::s10_config();
    c.fit = fit;
    return c;
  }
};

TEST(Segregated, FirstFitSearchInS10sLastList) {
  LastList t(sim::Fit::kFirst);
  EXPECT_EQ(t.p.bytes, 5008u);
  EXPECT_EQ(t.q.bytes, 9008u);
  EXPECT_EQ(t.r.bytes, 6016u);
  t.s.release(t.p.address);
  t.s.release(t.q.address);
  t.s.release(t.r.address);  // list: r (6016) -> q (9008) -> p (5008)
  std::uint64_t st = t.s.steps(), rd = t.mem.reads(), wr = t.mem.writes();
  // 7000 needs 7008: r is too small, q fits; unlinking q rewrites r's link.
  sim::Block got = t.s.allocate(7000);
  EXPECT_EQ(got.address, t.q.address);
  EXPECT_EQ(got.bytes, 9008u);  // no splitting: the whole block
  EXPECT_EQ(t.s.steps() - st, 2u);
  EXPECT_EQ(t.mem.reads() - rd, 4u);
  EXPECT_EQ(t.mem.writes() - wr, 1u);
  EXPECT_EQ(t.mem.load(sim::BlockHeader::link(t.r.address - 8)), t.p.address - 8);
  // 20000 needs 20016: r and p are examined, then a block is carved (with a system request).
  st = t.s.steps(), rd = t.mem.reads(), wr = t.mem.writes();
  const std::uint64_t held = t.mem.held();
  got = t.s.allocate(20000);
  EXPECT_EQ(got.bytes, 20016u);
  EXPECT_EQ(t.s.steps() - st, 2u + 1u + 1u);
  EXPECT_EQ(t.mem.reads() - rd, 4u);
  EXPECT_EQ(t.mem.writes() - wr, 1u);  // the new header
  EXPECT_EQ(t.mem.held() - held, 20480u);  // round_up(20016 + 8, 4096)
  // 5500 needs 5520: r (6016) is the first that fits, at the head.
  EXPECT_EQ(t.s.allocate(5500).address, t.r.address);
  EXPECT_EQ(t.s.allocate(5000).address, t.p.address);
}

TEST(Segregated, BestAndExactFitInS10sLastList) {
  for (sim::Fit fit : {sim::Fit::kFirst, sim::Fit::kBest, sim::Fit::kExact}) {
    SCOPED_TRACE(sim::to_string(fit));
    LastList t(fit);
    t.s.release(t.p.address);
    t.s.release(t.r.address);
    t.s.release(t.q.address);  // list: q (9008) -> r (6016) -> p (5008)
    const std::uint64_t st = t.s.steps(), rd = t.mem.reads(), wr = t.mem.writes();
    const sim::Block got = t.s.allocate(5500);  // needs 5520
    if (fit == sim::Fit::kFirst) {  // q, at the head
      EXPECT_EQ(got.address, t.q.address);
      EXPECT_EQ(t.s.steps() - st, 1u);
      EXPECT_EQ(t.mem.writes() - wr, 0u);
    } else if (fit == sim::Fit::kBest) {  // r, the smallest that fits, after the whole list
      EXPECT_EQ(got.address, t.r.address);
      EXPECT_EQ(t.s.steps() - st, 3u);
      EXPECT_EQ(t.mem.reads() - rd, 6u);
      EXPECT_EQ(t.mem.writes() - wr, 1u);  // q's link now p
    } else {  // none of exactly 5520: the list, then a new block
      EXPECT_NE(got.address, t.p.address);
      EXPECT_NE(got.address, t.q.address);
      EXPECT_NE(got.address, t.r.address);
      EXPECT_EQ(got.bytes, 5520u);
      EXPECT_EQ(t.s.steps() - st, 3u + 1u + 1u);  // examined 3, carve, system request
    }
    if (fit != sim::Fit::kFirst) {
      // An exact size stops a best fit early: 5000 needs 5008, p's size (best: q -> p; exact: q -> r -> p).
      const std::uint64_t st2 = t.s.steps();
      const sim::Block again = t.s.allocate(5000);  // needs 5008 = p, the last
      EXPECT_EQ(again.address, t.p.address);
      EXPECT_EQ(t.s.steps() - st2, fit == sim::Fit::kBest ? 2u : 3u);
    }
  }
}

TEST(Segregated, ExaReusesABlockOnlyForItsOwnSize) {
  sim::SimulatedMemory mem;
  Seg e(mem, sim::exa_classes({16, 24}), sim::exa_config());
  const sim::Block a = e.allocate(24);
  EXPECT_EQ(a.bytes, 32u);
  EXPECT_EQ(e.release(a.address), 32u);
  const sim::Block b = e.allocate(16);  // a block of 32 bytes too, but of the other class: carved
  EXPECT_NE(b.address, a.address);
  EXPECT_EQ(b.address, a.address + 32);
  const std::uint64_t st = e.steps(), rd = mem.reads(), wr = mem.writes();
  const sim::Block c = e.allocate(24);  // the block freed at 24
  EXPECT_EQ(c.address, a.address);
  EXPECT_EQ(e.steps() - st, 1u);
  EXPECT_EQ(mem.reads() - rd, 1u);  // uniform list: the link only
  EXPECT_EQ(mem.writes() - wr, 0u);
  // And the other way round: freed at 16, not taken by 24.
  e.release(b.address);
  EXPECT_EQ(e.allocate(24).address, b.address + 32);
  EXPECT_EQ(e.allocate(9).address, b.address);  // 9 rounds to 16
}

std::vector<tr::Event> events(std::initializer_list<std::pair<std::uint64_t, std::uint64_t>> calls) {
  // (size, address): size 0 = free(address).
  std::vector<tr::Event> v;
  for (auto [size, address] : calls) {
    tr::Event e;
    e.op = size ? tr::Op::Malloc : tr::Op::Free;
    e.size = size;
    e.address = address;
    e.time_ns = v.size() + 1;
    v.push_back(e);
  }
  return v;
}

TEST(Segregated, ExaTraceMetricsByHand) {
  // malloc(24) A, free(A), malloc(16) B, malloc(24) C (= A's block).
  const sim::ReplayTrace t = sim::build_replay(events({{24, 0x10}, {0, 0x10}, {16, 0x20}, {24, 0x30}}));
  sim::SimulateOptions o;
  o.check = true;
  o.front = 0;  // the mechanism alone
  const sim::Metrics m = sim::simulate(t, "exa", o);
  EXPECT_EQ(m.steps, 2u + 1u + 1u + 1u);  // carve + system request, push, carve, pop
  EXPECT_EQ(m.reads, 1u + 1u);            // header at free, link at pop
  EXPECT_EQ(m.writes, 1u + 1u + 1u);      // header, FIFO link (empty list), header
  EXPECT_EQ(m.system_requests, 1u);
  EXPECT_EQ(m.held_usage, 4096u);
  EXPECT_GT(m.memory_usage, 4096u);  // the page and EXA's class tables
  EXPECT_EQ(m.peak_operation, 0u);
  EXPECT_EQ(m.internal_fragmentation, 8u);
  EXPECT_EQ(m.external_fragmentation, 4096u - 32u);
  ASSERT_FALSE(m.series.empty());
  EXPECT_EQ(m.series.back().block_bytes, 64u);
  EXPECT_EQ(m.series.back().requested, 40u);
}

TEST(Segregated, S10TraceMetricsByHand) {
  // The three-event trace of docs/dmm.md: malloc(1), malloc(1), free(first).
  const sim::ReplayTrace t = sim::build_replay(events({{1, 0x10}, {1, 0x20}, {0, 0x10}}));
  sim::SimulateOptions o;
  o.check = true;
  o.front = 0;  // the mechanism alone
  const sim::Metrics m = sim::simulate(t, "s10", o);
  EXPECT_EQ(m.steps, 2u + 1u + 1u);
  EXPECT_EQ(m.reads, 1u);
  EXPECT_EQ(m.writes, 3u);  // two headers, one link
  EXPECT_EQ(m.held_usage, 4096u);
  EXPECT_GT(m.memory_usage, 4096u);  // the page and S10's class tables
  EXPECT_EQ(m.internal_fragmentation, 15u);
  EXPECT_EQ(m.external_fragmentation, 4096u - 16u);
}

TEST(Segregated, Alignment) {
  sim::SimulatedMemory mem;
  Seg s = s10(mem);
  // 100 bytes at 64: size 100 + 48 -> 152, block 160 at B + 8, data B + 16,
  // returned at B + 64 with the alignment word (48 | 1) at B + 56.
  const sim::Block a = s.allocate(100, 64);
  EXPECT_EQ(a.address, B + 64);
  EXPECT_EQ(a.bytes, 160u);
  EXPECT_EQ(mem.load(B + 56), 49u);
  const std::uint64_t rd = mem.reads();
  EXPECT_EQ(s.release(a.address), 160u);
  EXPECT_EQ(mem.reads() - rd, 2u);  // the alignment word, then the header
  // Reused for a plain request: data at the block's start again.
  EXPECT_EQ(s.allocate(150).address, B + 16);  // size 152, the same class (128,256]
  for (std::uint64_t align : {32u, 128u, 4096u, 8192u, 65536u}) {
    for (std::uint64_t n : {1u, 100u, 5000u}) {
      const sim::Block x = s.allocate(n, align);
      EXPECT_EQ(x.address % align, 0u) << n << " at " << align;
      EXPECT_EQ(s.release(x.address), x.bytes);
      const sim::Block y = s.allocate(n, align);  // the same block (LIFO, first fit)
      EXPECT_EQ(y.address, x.address);
    }
  }
}

TEST(Segregated, CheckerPassesS10AndExaOnARandomTrace) {
  const sim::ReplayTrace t = sim::build_replay(tailor::test::random_events(7, 60000));
  ASSERT_GT(t.operations.size(), 50000u);
  for (const char* name : {"s10", "exa"}) {
    SCOPED_TRACE(name);
    tailor::test::expect_checked_run_as_plain(t, name);
  }
}

TEST(Segregated, CheckerPassesEveryFitAndPolicyOnARandomTrace) {
  const sim::ReplayTrace t = sim::build_replay(tailor::test::random_events(11, 30000));
  for (sim::Fit fit : {sim::Fit::kFirst, sim::Fit::kBest, sim::Fit::kExact})
    for (sim::Policy policy : {sim::Policy::kLifo, sim::Policy::kFifo})
      for (bool strict : {false, true}) {
        SCOPED_TRACE(std::string(sim::to_string(fit)) + " " + sim::to_string(policy) + (strict ? " strict" : ""));
        sim::SimulatedMemory memory;
        Seg s(memory, sim::s10_classes(), {fit, policy, strict, 4096});
        sim::SimulateOptions o;
        o.check = true;
        EXPECT_NO_THROW(sim::run(s, memory, t, o));
      }
}

}  // namespace
