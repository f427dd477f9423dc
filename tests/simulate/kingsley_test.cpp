// SPDX-License-Identifier: MIT
// Kingsley worked out by hand (page 4096, simulated base B = 2^32): bucket
// choice, the first-use alignment request, page refill cutting, LIFO reuse,
// exact held bytes, high-water mark, steps, reads and writes (the counting
// rule is in src/simulate/kingsley.h and docs/dmm.md).
#include <gtest/gtest.h>

#include <vector>

#include "dmm/composite.h"
#include "dmm/kingsley.h"
#include "simulate/replay_trace.h"
#include "simulate/base_address.h"
#include "simulate/simulated_memory.h"
#include "simulate/simulator.h"

namespace {

namespace sim = tailor::simulate;
namespace tr = tailor::trace;
using Kng = sim::Kingsley<sim::SimulatedMemory>;

TEST(Kingsley, BucketChoice) {
  sim::SimulatedMemory mem;
  Kng k(mem);
  // Below a page: smallest 2^(i+3) with room for the request and the 8-byte header.
  EXPECT_EQ(k.bucket_for(0), 1u);  // served as 1 byte
  EXPECT_EQ(k.bucket_for(1), 1u);  // 16-byte blocks
  EXPECT_EQ(k.bucket_for(8), 1u);
  EXPECT_EQ(k.bucket_for(9), 2u);  // 32
  EXPECT_EQ(k.bucket_for(16), 2u);
  EXPECT_EQ(k.bucket_for(17), 2u);
  EXPECT_EQ(k.bucket_for(24), 2u);
  EXPECT_EQ(k.bucket_for(25), 3u);
  EXPECT_EQ(k.bucket_for(4088), 9u);  // 4088 + 8 = one page: bucket 9, which has the extra page
  // A page or more: blocks of 2^(i+3) + page, from pagebucket 9 up.
  EXPECT_EQ(k.bucket_for(4096), 9u);
  EXPECT_EQ(k.bucket_for(5000), 9u);
  EXPECT_EQ(k.bucket_for(8184), 9u);   // 4096 + 4096 - 8
  EXPECT_EQ(k.bucket_for(8185), 10u);
  EXPECT_EQ(k.bucket_for((std::uint64_t{1} << 32) + 4088), 29u);
  EXPECT_EQ(k.bucket_for((std::uint64_t{1} << 32) + 4089), 30u);  // none
  EXPECT_EQ(k.block_bytes(1), 16u);
  EXPECT_EQ(k.block_bytes(2), 32u);
  EXPECT_EQ(k.block_bytes(8), 2048u);
  EXPECT_EQ(k.block_bytes(9), 8192u);
  EXPECT_EQ(k.block_bytes(10), 12288u);
  EXPECT_EQ(k.allocate((std::uint64_t{1} << 33), 0).address, 0u);  // no bucket: nothing served
}

TEST(Kingsley, RefillCuttingAndLifoReuseByHand) {
  sim::SimulatedMemory mem;
  Kng k(mem);
  // First allocation: page - 8 bytes to align the break, then one page cut
  // into 256 blocks of 16 at B + 4088 + 16 j; data 8 bytes after each header.
  sim::Block a = k.allocate(1, 0);
  EXPECT_EQ(a.address, B + 4096);
  EXPECT_EQ(a.bytes, 16u);
  EXPECT_EQ(mem.held(), 4088u + 4096u);
  EXPECT_EQ(mem.system_requests(), 2u);
  EXPECT_EQ(k.steps(), 1u + 1u + 255u + 1u);  // alignment request, refill request, 255 links, pop
  EXPECT_EQ(mem.writes(), 255u + 1u);         // links, header
  EXPECT_EQ(mem.reads(), 1u);                 // the head's link
  EXPECT_EQ(mem.load(B + 4088), 1u);          // header = bucket index
  EXPECT_EQ(mem.load(B + 4088 + 16), B + 4088 + 32);  // next free block's link

  sim::Block b = k.allocate(8, 0);
  EXPECT_EQ(b.address, B + 4096 + 16);
  sim::Block c = k.allocate(9, 0);  // bucket 2: a new page of 128 blocks of 32
  EXPECT_EQ(c.address, B + 4088 + 4096 + 8);
  EXPECT_EQ(c.bytes, 32u);
  EXPECT_EQ(mem.held(), 4088u + 2 * 4096u);

  // LIFO: the last block freed is the next one handed out.
  EXPECT_EQ(k.release(a.address), 16u);
  EXPECT_EQ(k.release(b.address), 16u);
  EXPECT_EQ(k.allocate(16 - 8, 0).address, b.address);
  EXPECT_EQ(k.allocate(3, 0).address, a.address);
  EXPECT_EQ(k.allocate(5, 0).address, B + 4096 + 32);  // then the rest of the page
  EXPECT_EQ(mem.held(), 4088u + 2 * 4096u);           // no new request
  EXPECT_EQ(mem.held_high_water(), mem.held());
}

TEST(Kingsley, BigBlocksTakeSizePlusAPage) {
  sim::SimulatedMemory mem;
  Kng k(mem);
  sim::Block a = k.allocate(5000, 0);
  EXPECT_EQ(a.address, B + 4096);
  EXPECT_EQ(a.bytes, 8192u);
  EXPECT_EQ(mem.held(), 4088u + 8192u);
  EXPECT_EQ(k.steps(), 3u);     // alignment request, refill request (one block: no link), pop
  EXPECT_EQ(mem.writes(), 1u);  // header
  sim::Block b = k.allocate(4096, 0);  // same bucket, a second block
  EXPECT_EQ(b.address, B + 4096 + 8192);
  k.release(a.address);
  k.release(b.address);
  EXPECT_EQ(mem.held(), 4088u + 2 * 8192u);  // never returned
  EXPECT_EQ(k.allocate(6000, 0).address, b.address);
}

TEST(Kingsley, Alignment) {
  sim::SimulatedMemory mem;
  Kng k(mem);
  for (std::uint64_t size : {1u, 8u, 9u, 100u, 3000u, 5000u, 70000u}) {
    sim::Block b = k.allocate(size, 0);
    EXPECT_EQ(b.address % 16, 0u) << size;
  }
  sim::Block a = k.allocate(10, 64);  // a 64-byte bucket, whose data is 64-aligned
  EXPECT_EQ(a.address % 64, 0u);
  EXPECT_EQ(a.bytes, 64u);
  sim::Block p = k.allocate(100, 4096);
  EXPECT_EQ(p.address % 4096, 0u);
  // Over a page: n + alignment - page bytes and a second header before the aligned address.
  for (int i = 0; i < 3; ++i) {
    sim::Block big = k.allocate(100, 16384);
    EXPECT_EQ(big.address % 16384, 0u);
    EXPECT_EQ(big.bytes, k.block_bytes(k.bucket_for(100 + 16384 - 4096)));
    const std::uint64_t held = mem.held();
    EXPECT_EQ(k.release(big.address), big.bytes);
    sim::Block again = k.allocate(100, 16384);  // the same block, found through the second header
    EXPECT_EQ(again.bytes, big.bytes);
    EXPECT_EQ(again.address % 16384, 0u);
    EXPECT_EQ(mem.held(), held);
  }
}

// The three-event trace of docs/dmm.md: malloc(1), malloc(1), free(first),
// on the mechanism alone (no front, dmm/front.h).
TEST(Kingsley, ThreeEventTraceMetrics) {
  std::vector<tr::Event> v(3);
  v[0].op = tr::Op::Malloc, v[0].size = 1, v[0].address = 0x10;
  v[1].op = tr::Op::Malloc, v[1].size = 1, v[1].address = 0x20;
  v[2].op = tr::Op::Free, v[2].address = 0x10;
  sim::ReplayTrace t = sim::build_replay(v);
  sim::SimulateOptions o;
  o.check = true;
  o.front = 0;
  sim::Metrics m = sim::simulate(t, "kng", o);
  EXPECT_EQ(m.operations, 3u);
  EXPECT_EQ(m.steps, 258u + 1u + 1u);  // first malloc as above, pop, push
  EXPECT_EQ(m.reads, 1u + 1u + 1u);    // head link, head link, header
  EXPECT_EQ(m.writes, 256u + 1u + 1u);  // links + header, header, link
  EXPECT_EQ(m.system_requests, 2u);
  EXPECT_EQ(m.held_usage, 8184u);
  {  // resident: the two pages those bytes touch and the state libtailor's Kingsley keeps
    sim::SimulatedMemory memory;
    const Kng k(memory);
    EXPECT_EQ(m.memory_usage, 8192u + tailor::dmm::Composite<sim::SimulatedMemory>::state_of(k));
  }
  EXPECT_EQ(m.peak_operation, 0u);
  EXPECT_EQ(m.requested_at_peak, 1u);
  EXPECT_EQ(m.block_bytes_at_peak, 16u);
  EXPECT_EQ(m.internal_fragmentation, 15u);
  EXPECT_EQ(m.external_fragmentation, 8184u - 16u);
  ASSERT_FALSE(m.series.empty());
  EXPECT_EQ(m.series.back().operation, 2u);
  EXPECT_EQ(m.series.back().requested, 1u);
  EXPECT_EQ(m.series.back().block_bytes, 16u);
  EXPECT_EQ(m.series.back().held, 8184u);
}

TEST(Simulator, UnknownDmmListsTheKnownOnes) {
  sim::ReplayTrace t;
  try {
    sim::simulate(t, "nope");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("known: kng"), std::string::npos) << e.what();
  }
}

}  // namespace

#if defined(TAILOR_DEBUG) && TAILOR_DEBUG
// Debug builds (TAILOR_DEBUG, src/dmm/assert.h) check the mechanisms'
// invariants: a release whose header names no bucket of this allocator (a
// program that wrote over the word before its block) stops at the check,
// before it corrupts a bucket's list.
TEST(KingsleyDebug, ReleaseOfACorruptHeaderIsCaught) {
  EXPECT_DEATH(
      {
        sim::SimulatedMemory mem;
        Kng k(mem);
        const auto b = k.allocate(40);
        mem.store(b.address - 8, 0xfe);  // bucket 254: no such bucket
        k.release(b.address);
      },
      "tailor: assertion failed: bucket < kBuckets");
}
#endif
