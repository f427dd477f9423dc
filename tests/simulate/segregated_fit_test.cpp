// SPDX-License-Identifier: MIT
// The DMM model's general mechanisms worked out by hand (simulated base
// B = 2^32, regions of 4096 bytes): SegregatedFit's carving, splitting,
// coalescing in both directions, merging into the uncarved rest, returning
// regions to the system; the four fits under both policies on a list and a
// tree; strict classes sending a block back to its own list; simple
// segregated storage's areas. Counting rules: segregated_fit.h,
// free_blocks.h, simple_segregated_storage.h.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dmm/segregated_fit.h"
#include "dmm/simple_segregated_storage.h"
#include "simulate/random_trace.h"
#include "simulate/dmm.h"
#include "simulate/dmm_spec.h"
#include "simulate/base_address.h"
#include "simulate/simulated_memory.h"
#include "simulate/simulator.h"

namespace {

namespace sim = tailor::simulate;
using Fit = sim::SegregatedFit<sim::SimulatedMemory>;
using Sss = sim::SimpleSegregatedStorage<sim::SimulatedMemory>;

sim::SizeClasses one_open_class() { return sim::make_classes({}, true); }

sim::SegregatedFitConfig dll_split_coalesce() {
  sim::SegregatedFitConfig c;
  c.structure = sim::Structure::kDll;
  c.split = c.coalesce = true;
  return c;
}

using Free = std::vector<std::pair<sim::Address, std::uint64_t>>;
// Every free block of a segregated fit as (address, bytes), in address order.
Free free_blocks(Fit& f) {
  Free all;
  f.each_free([&](sim::Address a, std::uint64_t bytes) { all.emplace_back(a, bytes); });
  std::sort(all.begin(), all.end());
  return all;
}

TEST(SegregatedFit, SplitAndCoalesceByHand) {
  sim::SimulatedMemory mem;
  Fit f(mem, one_open_class(), dll_split_coalesce());
  // The first region: B, 4096 bytes; 8 bytes of pad so that data (block + 8) is 16-aligned.
  const sim::Block a = f.allocate(100);  // 100 + 8 -> 112
  EXPECT_EQ(a.address, B + 16);
  EXPECT_EQ(a.bytes, 112u);
  EXPECT_EQ(mem.held(), 4096u);
  const sim::Block b = f.allocate(200);  // 208
  EXPECT_EQ(b.address, B + 128);
  EXPECT_EQ(b.bytes, 208u);
  const sim::Block c = f.allocate(50);   // 56 + 8 -> 64
  EXPECT_EQ(c.address, B + 336);

  EXPECT_EQ(f.release(a.address), 112u);  // neighbours in use: no coalescing
  EXPECT_EQ(free_blocks(f), (Free{{B + 8, 112}}));
  EXPECT_EQ(f.coalesces(), 0u);
  EXPECT_EQ(f.release(b.address), 208u);  // merges backward with a
  EXPECT_EQ(free_blocks(f), (Free{{B + 8, 320}}));
  EXPECT_EQ(f.coalesces(), 1u);

  const sim::Block d = f.allocate(40);  // 48 bytes split off the 320: 272 stay free
  EXPECT_EQ(d.address, B + 16);
  EXPECT_EQ(d.bytes, 48u);
  EXPECT_EQ(f.splits(), 1u);
  EXPECT_EQ(free_blocks(f), (Free{{B + 56, 272}}));

  // c is the last block carved: it merges backward with the 272 and both go
  // back into the uncarved rest of the region.
  EXPECT_EQ(f.release(c.address), 64u);
  EXPECT_EQ(f.coalesces(), 2u);
  EXPECT_TRUE(free_blocks(f).empty());
  EXPECT_EQ(f.allocate(8).address, B + 64);  // carved right after d
  EXPECT_EQ(mem.held(), 4096u);
}

TEST(SegregatedFit, CoalescesForwardAndReturnsWholeRegions) {
  sim::SimulatedMemory mem;
  sim::SegregatedFitConfig cfg = dll_split_coalesce();
  cfg.returns = true;
  Fit f(mem, one_open_class(), cfg);
  const sim::Block x = f.allocate(3000);  // 3008 bytes at B + 8
  const sim::Block y = f.allocate(3000);  // no room: the rest of region 1 (1072 bytes) becomes free; region 2
  EXPECT_EQ(mem.held(), 8192u);
  EXPECT_EQ(free_blocks(f), (Free{{B + 8 + 3008, 4096 - 16 - 3008}}));
  EXPECT_EQ(y.address, B + 4096 + 16);
  // x merges forward with the free rest: all of region 1 is free and goes back.
  f.release(x.address);
  EXPECT_EQ(f.coalesces(), 1u);
  EXPECT_EQ(mem.held(), 4096u);
  EXPECT_TRUE(free_blocks(f).empty());
  // y is the last carved block of the current region: the region goes back too.
  f.release(y.address);
  EXPECT_EQ(mem.held(), 0u);
  EXPECT_EQ(mem.held_high_water(), 8192u);
  EXPECT_EQ(mem.system_requests(), 4u);
}

// Five blocks of 112, 320, 208, 320, 160 bytes (requests 100, 300, 200, 300,
// 150), released in that order, then a request needing 208 (190 bytes).
struct FitCase {
  sim::Structure structure;
  sim::Fit fit;
  sim::Policy policy;
  int expected;  // index of the block taken, -1: any block of at least 208
};

TEST(SegregatedFit, EveryFitAndPolicyPicksTheExpectedBlock) {
  using S = sim::Structure;
  using F = sim::Fit;
  using P = sim::Policy;
  const FitCase cases[] = {
      {S::kSll, F::kFirst, P::kLifo, 3},    // list 4, 3, 2, 1, 0: 160 is too small, 320 (#3) fits
      {S::kSll, F::kFirst, P::kFifo, 1},    // list 0, 1, ...: 112 too small, 320 (#1)
      {S::kSll, F::kBest, P::kLifo, 2},     // 208 exactly
      {S::kSll, F::kExact, P::kFifo, 2},
      {S::kSll, F::kFarthest, P::kLifo, 1}, // farthest from the hottest block (#4, the last released)
      {S::kDll, F::kFirst, P::kLifo, 3},
      {S::kDll, F::kBest, P::kFifo, 2},
      {S::kDll, F::kFarthest, P::kFifo, 1},
      {S::kBst, F::kBest, P::kLifo, 2},
      {S::kBst, F::kExact, P::kFifo, 2},
      {S::kBst, F::kFarthest, P::kLifo, 1},
      {S::kBst, F::kFirst, P::kLifo, -1},
  };
  for (const FitCase& k : cases) {
    SCOPED_TRACE(std::string(sim::to_string(k.structure)) + " " + sim::to_string(k.fit) + " " +
                 sim::to_string(k.policy));
    sim::SimulatedMemory mem;
    sim::SegregatedFitConfig cfg;
    cfg.structure = k.structure;
    cfg.fit = k.fit;
    cfg.policy = k.policy;
    Fit f(mem, one_open_class(), cfg);
    std::vector<sim::Block> blocks;
    for (std::uint64_t n : {100, 300, 200, 300, 150}) {
      blocks.push_back(f.allocate(n));
      f.allocate(8);  // a spacer (no coalescing here anyway)
    }
    for (const auto& b : blocks) f.release(b.address);
    const sim::Block got = f.allocate(190);
    if (k.expected >= 0) {
      EXPECT_EQ(got.address, blocks[static_cast<std::size_t>(k.expected)].address);
      EXPECT_EQ(got.bytes, blocks[static_cast<std::size_t>(k.expected)].bytes);
    } else {
      EXPECT_GE(got.bytes, 208u);
    }
  }
}

TEST(SegregatedFit, FirstFitOnAListCountsAsSeed002) {
  sim::SimulatedMemory mem;
  Fit f(mem, one_open_class(), {});  // SLL, first fit, LIFO, no split, no coalesce
  std::vector<sim::Block> blocks;
  for (std::uint64_t n : {100, 300, 200, 300, 150}) blocks.push_back(f.allocate(n));
  for (const auto& b : blocks) f.release(b.address);
  const std::uint64_t steps = f.steps(), reads = mem.reads(), writes = mem.writes();
  f.allocate(190);  // examines #4 (160) and #3 (320): 2 steps, 2 x (header + link) reads
  EXPECT_EQ(f.steps() - steps, 2u);
  EXPECT_EQ(mem.reads() - reads, 4u);
  EXPECT_EQ(mem.writes() - writes, 1u);  // unlink (#4's link); the header is unchanged (no split, no coalescing)
}

TEST(SegregatedFit, StrictClassesSendABlockBackToItsOwnList) {
  sim::SimulatedMemory mem;
  sim::SegregatedFitConfig cfg;
  cfg.round_to_class = true;
  // Classes (0,32] and (32,40]: both have 48-byte blocks (32 + 8 and 40 + 8 round to 48).
  Fit f(mem, sim::make_classes({32, 40}, false), cfg);
  const sim::Block a = f.allocate(40);
  EXPECT_EQ(a.bytes, 48u);
  f.release(a.address);
  const sim::Block b = f.allocate(30);  // class (0,32]: its list is empty, a new block
  EXPECT_NE(b.address, a.address);
  EXPECT_EQ(f.allocate(33).address, a.address);  // class (32,40] takes its block back
}

TEST(SegregatedFit, AlignedRequestsAndLargerHeaders) {
  sim::SimulatedMemory mem;
  sim::SegregatedFitConfig cfg = dll_split_coalesce();
  cfg.header = 16;
  Fit f(mem, one_open_class(), cfg);
  const sim::Block a = f.allocate(10);
  EXPECT_EQ(a.address % 16, 0u);
  const sim::Block b = f.allocate(100, 256);
  EXPECT_EQ(b.address % 256, 0u);
  EXPECT_EQ(f.release(b.address), b.bytes);
  EXPECT_EQ(f.release(a.address), a.bytes);
  EXPECT_TRUE(free_blocks(f).empty());  // both merged back into the uncarved rest
}

TEST(SimpleSegregatedStorage, AreasByHand) {
  sim::SimulatedMemory mem;
  Sss s(mem, sim::make_classes({64, 128}, false), {});
  const sim::Block a = s.allocate(10);  // class 64: area 1 (4096-aligned), first block 16 bytes in
  const sim::Address area1 = a.address & ~sim::Address{4095};
  EXPECT_EQ(a.address, area1 + 16);
  EXPECT_EQ(a.bytes, 64u);
  const sim::Block b = s.allocate(100);  // class 128: its own area
  EXPECT_EQ(b.address & 4095, 16u);
  EXPECT_NE(b.address & ~sim::Address{4095}, area1);
  EXPECT_EQ(s.allocate(64).address, area1 + 80);
  EXPECT_EQ(mem.held(), 8192u);
  const sim::Block c = s.allocate(1, 64);  // 1 + 48 of slack -> 56: class 64, the block at area1 + 144
  EXPECT_EQ(c.address, area1 + 192);        // the first 64-aligned address inside it
  EXPECT_EQ(s.release(c.address), 64u);
  EXPECT_EQ(s.release(a.address), 64u);
  EXPECT_EQ(s.allocate(20).address, a.address);  // LIFO: the last released
  EXPECT_EQ(s.allocate(20).address, area1 + 144);  // then c's block, found from its aligned address
}

TEST(SimpleSegregatedStorage, AreaListsKeepBlocksInTheirAreasAndCarveAgainWhenAllAreFree) {
  sim::SimulatedMemory mem;
  sim::SimpleSegregatedConfig config;
  config.area_lists = true;
  Sss s(mem, sim::make_classes({64}, false), config);
  // An area of 4096 bytes: a 32-byte header, then (4096 - 32) / 64 = 63 blocks.
  std::vector<sim::Address> first;
  for (int i = 0; i < 63; ++i) first.push_back(s.allocate(64).address);
  const sim::Address area1 = first[0] & ~sim::Address{4095};
  for (int i = 0; i < 63; ++i) ASSERT_EQ(first[i], area1 + 32 + 64 * static_cast<sim::Address>(i));
  const sim::Address in_area2 = s.allocate(64).address;  // area 1 is full: a new area
  const sim::Address area2 = in_area2 & ~sim::Address{4095};
  EXPECT_NE(area2, area1);
  EXPECT_EQ(in_area2, area2 + 32);
  EXPECT_EQ(mem.held(), 8192u);
  // A block of the full area 1 is freed: area 1 goes on the class's stack,
  // but requests take from the current area (2) until it is full.
  EXPECT_EQ(s.release(first[10]), 64u);
  EXPECT_EQ(s.allocate(64).address, area2 + 96);
  for (int i = 2; i < 63; ++i) s.allocate(64);
  EXPECT_EQ(s.allocate(64).address, first[10]);  // area 2 full: area 1's free block
  // Area 1 freed whole, in a scattered order: it carves from its first block
  // again, in address order, not in the order its blocks were freed.
  for (int i = 62; i >= 0; i -= 2) s.release(first[i]);
  for (int i = 1; i < 63; i += 2) s.release(first[i]);
  EXPECT_EQ(s.allocate(64).address, area1 + 32);  // area 2 is full: area 1 from the stack
  EXPECT_EQ(s.allocate(64).address, area1 + 96);
  EXPECT_EQ(s.allocate(64).address, area1 + 160);
  // LIFO within an area while some of its blocks are in use.
  EXPECT_EQ(s.release(area1 + 96), 64u);
  EXPECT_EQ(s.allocate(40).address, area1 + 96);
  EXPECT_EQ(mem.held(), 8192u);  // no new area
}

TEST(SimpleSegregatedStorage, AreaListsAnAreaLeftFullHasAnEmptyListInItsHeader) {
  sim::SimulatedMemory mem;
  sim::SimpleSegregatedConfig config;
  config.area_lists = true;
  Sss s(mem, sim::make_classes({64}, false), config);
  std::vector<sim::Address> a1;
  for (int i = 0; i < 63; ++i) a1.push_back(s.allocate(64).address);
  const sim::Address area1 = a1[0] & ~sim::Address{4095};
  std::vector<sim::Address> a2{s.allocate(64).address};  // area 2 is current
  s.release(a1[5]);
  s.release(a1[7]);  // area 1 on the stack, its list a1[7] -> a1[5]
  for (int i = 1; i < 63; ++i) a2.push_back(s.allocate(64).address);
  EXPECT_EQ(s.allocate(64).address, a1[7]);  // area 2 full: area 1's list, while area 1 is current
  EXPECT_EQ(s.allocate(64).address, a1[5]);
  const sim::Address a3 = s.allocate(64).address;  // area 1 full again: left for a new area
  EXPECT_NE(a3 & ~sim::Address{4095}, area1);
  // A release into area 1 finds an empty list in its header, not the list
  // it had when it became current.
  s.release(a1[20]);
  EXPECT_EQ(mem.load(area1 + 8), a1[20]);
  EXPECT_EQ(mem.load(a1[20] + 8), 0u);
  s.release(a2[3]);
  for (int i = 1; i < 63; ++i) s.allocate(64);  // area 3 full
  EXPECT_EQ(s.allocate(64).address, a2[3]);      // the stack: area 2, then area 1
  EXPECT_EQ(s.allocate(64).address, a1[20]);
  EXPECT_EQ(mem.held(), 3 * 4096u);
}

TEST(SimpleSegregatedStorage, AreaListsFromASpecAndTheirRules) {
  auto spec_of = [](const std::string& extra) {
    return sim::parse_dmm_spec(nlohmann::json::parse(R"({"allocators": [{"mechanism": "simple_segregated_storage",
        "sizes": {"min": 0, "max": 64}, "classes": "single", "system": {"chunk": 65536})" + extra +
                                                     R"(}, {"mechanism": "segregated_free_lists", "sizes": {"min": 64}}]})"),
                               "t.json");
  };
  const sim::DmmSpec spec = spec_of(R"(, "lists": "area")");
  EXPECT_TRUE(spec.allocators[0].area_lists);
  EXPECT_EQ(sim::to_json(spec)["allocators"][0]["lists"], "area");
  EXPECT_EQ(sim::to_json(spec_of(""))["allocators"][0]["lists"], "class");
  EXPECT_TRUE(sim::parse_dmm_spec(sim::to_json(spec), "again") == spec);  // round trip
  auto why = [&](const std::string& extra) {
    try {
      spec_of(extra);
    } catch (const sim::SpecError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(why(R"(, "lists": "area", "structure": "dll")"),
            "t.json: allocators[0].structure: an area's free list is singly linked, taken from its head, last in first "
            "out: \"area\" lists need structure sll, fit first, policy lifo");
  EXPECT_NE(why(R"(, "lists": "pages")").find("allocators[0].lists: unknown lists 'pages' (known: class, area)"),
            std::string::npos);
  const std::string other = R"({"allocators": [{"mechanism": "segregated_free_lists", "sizes": {"min": 0}, "lists": "area"}]})";
  try {
    sim::parse_dmm_spec(nlohmann::json::parse(other), "u.json");
    ADD_FAILURE() << "lists=area accepted on segregated_free_lists";
  } catch (const sim::SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("allocators[0].lists: segregated_free_lists has no areas"), std::string::npos) << e.what();
  }
}

TEST(SimpleSegregatedStorage, AlignmentEightPacksOddWordSizes) {
  sim::SimulatedMemory mem;
  sim::SimpleSegregatedConfig config;
  config.alignment = 8;
  Sss s(mem, sim::make_classes({24, 32}, false), config);
  // Class 24: blocks of 24 bytes, 8 bytes in (after the class word), no padding.
  const sim::Block a = s.allocate(24);
  const sim::Address area = a.address & ~sim::Address{4095};
  EXPECT_EQ(a.address, area + 8);
  EXPECT_EQ(a.bytes, 24u);
  EXPECT_EQ(s.allocate(20).address, area + 32);
  // Class 32: a multiple of 16, so its blocks start 16 bytes in and stay 16-aligned.
  const sim::Block b = s.allocate(32);
  EXPECT_EQ(b.address & 4095, 16u);
  EXPECT_EQ(s.allocate(32).address, b.address + 32);
  // A 16-aligned request in class 24 takes the slack: 16 + 8 -> class 24 is
  // enough (its block at area + 56 has its 16-aligned address 8 bytes in).
  const sim::Block c = s.allocate(16, 16);
  EXPECT_EQ(c.address, area + 64);
  EXPECT_EQ(c.address % 16, 0u);
  EXPECT_EQ(s.release(c.address), 24u);
  EXPECT_EQ(s.allocate(24).address, area + 56);  // found from its aligned address
}

TEST(SegregatedFit, StrictClassesServeSlackPastTheLastClassFromTheirOwnList) {
  // Exact classes up to 96 with alignment 8: a 16-aligned 96-byte request
  // needs 104 + 8 bytes, more than the last class's block; it must not land
  // in (nor later be taken from) the list of 104-byte blocks.
  sim::SimulatedMemory mem;
  sim::SegregatedFitConfig c;
  c.round_to_class = true;
  c.alignment = 8;
  Fit f(mem, sim::make_classes({48, 96}, false), c);
  const sim::Block plain = f.allocate(96);
  EXPECT_EQ(plain.bytes, 104u);
  EXPECT_EQ(f.release(plain.address), 104u);
  const sim::Block aligned = f.allocate(96, 16);
  EXPECT_EQ(aligned.address % 16, 0u);
  EXPECT_EQ(aligned.bytes, 112u);
  EXPECT_EQ(f.release(aligned.address), 112u);
  EXPECT_EQ(f.allocate(96).bytes, 104u);  // the plain list still holds plain blocks
  EXPECT_EQ(f.allocate(96, 16).bytes, 112u);
}

TEST(SegregatedFit, CheckerPassesEveryConfigurationOnARandomTrace) {
  const sim::ReplayTrace t = sim::build_replay(tailor::test::random_events(5, 12000));
  int runs = 0;
  for (sim::Structure st : {sim::Structure::kSll, sim::Structure::kDll, sim::Structure::kBst})
    for (sim::Fit fit : {sim::Fit::kFirst, sim::Fit::kBest, sim::Fit::kExact, sim::Fit::kFarthest})
      for (int mode = 0; mode < 4; ++mode) {  // plain, split, split + coalesce, + returns
        sim::SegregatedFitConfig cfg;
        cfg.structure = st;
        cfg.fit = fit;
        cfg.policy = mode % 2 ? sim::Policy::kFifo : sim::Policy::kLifo;
        cfg.search_larger = mode >= 1;
        cfg.split = mode >= 1;
        cfg.coalesce = mode >= 2;
        cfg.returns = mode == 3;
        SCOPED_TRACE(std::string(sim::to_string(st)) + " " + sim::to_string(fit) + " mode " + std::to_string(mode));
        sim::SimulatedMemory mem;
        Fit f(mem, sim::powers_of_two_classes(4, 12, true), cfg);
        sim::SimulateOptions o;
        o.check = true;
        sim::Metrics m;
        ASSERT_NO_THROW(m = sim::run(f, mem, t, o));
        EXPECT_GE(m.memory_usage, t.summary.max_in_use_bytes);
        if (cfg.coalesce) {
          EXPECT_GT(m.coalesces, 0u);
        }
        ++runs;
      }
  EXPECT_EQ(runs, 48);
}

}  // namespace
