// SPDX-License-Identifier: MIT
// Lea (dlmalloc 2.8.6) worked out by hand (simulated base B = 2^32, 64 KiB
// granularity): padded sizes and tree bins, small-bin reuse, the designated
// victim, segments (top extension) and trimming, the mmap threshold,
// coalescing, steps and accesses (the counting rule is in src/simulate/lea.h),
// and the checker on a random trace.
#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <set>
#include <vector>

#include "common/trace_file.h"
#include "dmm/lea.h"
#include "simulate/replay_trace.h"
#include "simulate/checked_run.h"
#include "simulate/base_address.h"
#include "simulate/simulated_memory.h"
#include "simulate/simulator.h"

namespace {

using tailor::test::untimed;

namespace sim = tailor::simulate;
namespace tr = tailor::trace;
using Lea = sim::Lea<sim::SimulatedMemory>;
constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB;

TEST(Lea, PaddedSizesAndBins) {
  EXPECT_EQ(Lea::request2size(0), 32u);
  EXPECT_EQ(Lea::request2size(1), 32u);
  EXPECT_EQ(Lea::request2size(24), 32u);  // 24 + 8 = 32
  EXPECT_EQ(Lea::request2size(25), 48u);
  EXPECT_EQ(Lea::request2size(40), 48u);
  EXPECT_EQ(Lea::request2size(41), 64u);
  EXPECT_EQ(Lea::request2size(100), 112u);
  EXPECT_EQ(Lea::request2size(232), 240u);  // the largest small request
  EXPECT_EQ(Lea::request2size(233), 256u);  // the smallest large chunk
  EXPECT_EQ(Lea::request2size(1000), 1008u);
  EXPECT_EQ(Lea::tree_index(256), 0u);
  EXPECT_EQ(Lea::tree_index(383), 0u);
  EXPECT_EQ(Lea::tree_index(384), 1u);
  EXPECT_EQ(Lea::tree_index(512), 2u);
  EXPECT_EQ(Lea::tree_index(768), 3u);
  EXPECT_EQ(Lea::tree_index(65424), 15u);  // [48 Ki, 64 Ki)
  EXPECT_EQ(Lea::tree_index(8 * MiB), 30u);
  EXPECT_EQ(Lea::tree_index(12 * MiB - 16), 30u);
  EXPECT_EQ(Lea::tree_index(12 * MiB), 31u);
  EXPECT_EQ(Lea::tree_index(1024 * MiB), 31u);
}

TEST(Lea, FirstMallocAndSmallBinExactReuse) {
  sim::SimulatedMemory mem;
  Lea lea(mem);
  // One segment of granularity_align(32 + 96) = 64 KiB; top = its bytes - 80.
  sim::Block a = lea.allocate(1, 0);
  EXPECT_EQ(a.address, B + 16);
  EXPECT_EQ(a.bytes, 32u);
  EXPECT_EQ(mem.held(), 65536u);
  EXPECT_EQ(mem.system_requests(), 1u);
  EXPECT_EQ(lea.top(), B + 32);
  EXPECT_EQ(lea.top_size(), 65536u - 80 - 32);
  EXPECT_EQ(lea.steps(), 2u);     // system request, cut from top
  EXPECT_EQ(mem.writes(), 4u);    // top head and fencepost (init_top), new top head, chunk head
  EXPECT_EQ(mem.reads(), 0u);
  EXPECT_EQ(mem.load(B + 8), 32u | 3u);  // size | PINUSE | CINUSE

  sim::Block b = lea.allocate(40, 0);  // 48 bytes from top
  EXPECT_EQ(b.address, B + 32 + 16);
  EXPECT_EQ(b.bytes, 48u);
  sim::Block c = lea.allocate(1, 0);
  EXPECT_EQ(c.address, B + 80 + 16);

  // free(a): its neighbours are in use: small bin 4 (32 bytes), boundary tag written.
  const std::uint64_t s0 = lea.steps(), r0 = mem.reads(), w0 = mem.writes();
  EXPECT_EQ(lea.release(a.address), 32u);
  EXPECT_EQ(lea.steps() - s0, 1u);   // the insertion
  EXPECT_EQ(mem.reads() - r0, 3u);   // head, next head (cinuse), next head (clear its PINUSE)
  EXPECT_EQ(mem.writes() - w0, 5u);  // next head, head, foot, fd, bk
  EXPECT_EQ(lea.small_map(), 1u << 4);
  EXPECT_EQ(lea.small_bin(4), B);
  EXPECT_EQ(mem.load(B + 32), 32u);             // the foot: b's prev_foot
  EXPECT_EQ(mem.load(B + 32 + 8), 48u | 2u);    // b: CINUSE, PINUSE cleared

  // malloc(20) takes the exact bin's chunk back.
  const std::uint64_t s1 = lea.steps(), r1 = mem.reads(), w1 = mem.writes();
  sim::Block a2 = lea.allocate(20, 0);
  EXPECT_EQ(a2.address, a.address);
  EXPECT_EQ(a2.bytes, 32u);
  EXPECT_EQ(lea.steps() - s1, 1u);   // the pop
  EXPECT_EQ(mem.reads() - r1, 2u);   // fd, next head
  EXPECT_EQ(mem.writes() - w1, 2u);  // head, next head (PINUSE)
  EXPECT_EQ(lea.small_map(), 0u);
  EXPECT_EQ(mem.load(B + 32 + 8), 48u | 3u);
  EXPECT_EQ(mem.held(), 65536u);
}

TEST(Lea, SmallBinsAreLifo) {
  sim::SimulatedMemory mem;
  Lea lea(mem);
  std::vector<sim::Block> v;
  for (int i = 0; i < 6; ++i) v.push_back(lea.allocate(8, 0));  // 32-byte chunks
  lea.release(v[1].address);
  lea.release(v[3].address);
  EXPECT_EQ(lea.allocate(8, 0).address, v[3].address);  // the last freed first (2.8.6 inserts and takes at the front)
  EXPECT_EQ(lea.allocate(8, 0).address, v[1].address);
}

TEST(Lea, DesignatedVictim) {
  sim::SimulatedMemory mem;
  Lea lea(mem);
  sim::Block a = lea.allocate(100, 0);  // 112 at B
  sim::Block g = lea.allocate(1, 0);    // 32 at B + 112: keeps a away from top
  EXPECT_EQ(g.address, B + 112 + 16);
  lea.release(a.address);               // small bin 14
  EXPECT_EQ(lea.small_map(), 1u << 14);

  // malloc(24): bin 4 is empty, dv is empty: split the smallest non-empty bin
  // (14), the 80-byte remainder becomes dv.
  const std::uint64_t s0 = lea.steps();
  sim::Block x = lea.allocate(24, 0);
  EXPECT_EQ(x.address, B + 16);
  EXPECT_EQ(x.bytes, 32u);
  EXPECT_EQ(lea.steps() - s0, 1u);  // the pop (no old dv to bin)
  EXPECT_EQ(lea.dv(), B + 32);
  EXPECT_EQ(lea.dv_size(), 80u);
  EXPECT_EQ(lea.small_map(), 0u);  // dv is in no bin
  EXPECT_EQ(mem.load(B + 32 + 8), 80u | 1u);
  EXPECT_EQ(mem.load(B + 112), 80u);  // dv's foot

  // malloc(30) (48): no exact bin, fits dv: cut from dv, the rest stays dv.
  const std::uint64_t s1 = lea.steps();
  sim::Block y = lea.allocate(30, 0);
  EXPECT_EQ(y.address, B + 32 + 16);
  EXPECT_EQ(y.bytes, 48u);
  EXPECT_EQ(lea.steps() - s1, 1u);
  EXPECT_EQ(lea.dv(), B + 80);
  EXPECT_EQ(lea.dv_size(), 32u);
  // malloc(1) (32): dv exactly; a remainder of 0 < 32 exhausts dv.
  sim::Block z = lea.allocate(1, 0);
  EXPECT_EQ(z.address, B + 80 + 16);
  EXPECT_EQ(z.bytes, 32u);
  EXPECT_EQ(lea.dv(), 0u);
  EXPECT_EQ(lea.dv_size(), 0u);
  EXPECT_EQ(mem.load(B + 112 + 8), 32u | 3u);  // g's PINUSE set again

  // Freeing y (between the in-use x and z) bins it (bin 6); freeing z then
  // merges backward with y (unlinked); g is in use, so y + z = 80 go to bin 10.
  lea.release(y.address);
  lea.release(z.address);
  EXPECT_EQ(lea.small_map(), 1u << 10);
  EXPECT_EQ(lea.small_bin(10), B + 32);
  EXPECT_EQ(mem.held(), 65536u);
}

TEST(Lea, CoalescesThreeAdjacentChunks) {
  sim::SimulatedMemory mem;
  Lea lea(mem);
  sim::Block a = lea.allocate(100, 0);  // 112 at B
  sim::Block b = lea.allocate(100, 0);  // at B + 112
  sim::Block c = lea.allocate(100, 0);  // at B + 224
  sim::Block d = lea.allocate(1, 0);    // at B + 336, keeps c away from top
  EXPECT_EQ(c.address, B + 224 + 16);
  EXPECT_EQ(d.address, B + 336 + 16);
  lea.release(a.address);
  lea.release(c.address);
  EXPECT_EQ(lea.small_bin(14), B + 224);  // LIFO: c before a

  // free(b): PINUSE clear, so back to a (prev_foot 112) and unlink it; c is
  // free and neither top nor dv: unlink it too; 336 bytes go to tree bin 0.
  const std::uint64_t s0 = lea.steps();
  EXPECT_EQ(lea.release(b.address), 112u);
  EXPECT_EQ(lea.steps() - s0, 3u);  // two unlinks, one insertion (empty tree bin)
  EXPECT_EQ(lea.small_map(), 0u);
  EXPECT_EQ(lea.tree_map(), 1u);
  EXPECT_EQ(lea.tree_bin(0), B);
  EXPECT_EQ(mem.load(B + 8), 336u | 1u);
  EXPECT_EQ(mem.load(B + 336), 336u);           // d's prev_foot
  EXPECT_EQ(mem.load(B + 336 + 8), 32u | 2u);   // d: PINUSE clear

  // malloc(300) (320): best fit in tree bin 0 leaves 16 < 32 bytes: the whole chunk.
  sim::Block e = lea.allocate(300, 0);
  EXPECT_EQ(e.address, B + 16);
  EXPECT_EQ(e.bytes, 336u);
  EXPECT_EQ(lea.tree_map(), 0u);
  EXPECT_EQ(mem.load(B + 336 + 8), 32u | 3u);
}

TEST(Lea, TopExtensionAddsASegment) {
  sim::SimulatedMemory mem;
  Lea lea(mem);
  lea.allocate(1, 0);  // segment 1: 64 KiB, top 65424 at B + 32
  // 70000 (70016) > top: a new segment of granularity_align(70016 + 96) =
  // 128 KiB; the old top (65424) becomes a free chunk in tree bin 15, ended
  // by the segment record (in use) at the old segment's last 80 bytes.
  const std::uint64_t s0 = lea.steps();
  sim::Block big = lea.allocate(70000, 0);
  EXPECT_EQ(big.address, B + 65536 + 16);
  EXPECT_EQ(big.bytes, 70016u);
  EXPECT_EQ(lea.steps() - s0, 3u);  // system request, insertion of the old top, cut from top
  EXPECT_EQ(mem.held(), 65536u + 131072u);
  EXPECT_EQ(mem.system_requests(), 2u);
  EXPECT_EQ(lea.top(), B + 65536 + 70016);
  EXPECT_EQ(lea.top_size(), 131072u - 80 - 70016);
  EXPECT_EQ(lea.tree_map(), 1u << 15);
  EXPECT_EQ(lea.tree_bin(15), B + 32);
  EXPECT_EQ(mem.load(B + 32 + 8), 65424u | 1u);
  EXPECT_EQ(mem.load(B + 65456 + 8), 48u | 2u);  // segment record: in use, PINUSE cleared

  // A small request with no small bin and no dv: the smallest tree chunk, split,
  // its remainder becoming dv.
  sim::Block s = lea.allocate(10, 0);
  EXPECT_EQ(s.address, B + 32 + 16);
  EXPECT_EQ(lea.dv(), B + 64);
  EXPECT_EQ(lea.dv_size(), 65424u - 32);
  EXPECT_EQ(lea.tree_map(), 0u);
  EXPECT_EQ(mem.held(), 65536u + 131072u);
}

TEST(Lea, TrimsTopAboveTwoMebibytes) {
  sim::SimulatedMemory mem;
  Lea lea(mem);
  // The first request: no top yet, so no mmap: a segment of
  // granularity_align(3 MiB + 16 + 96) = 49 x 64 KiB.
  sim::Block big = lea.allocate(3 * MiB, 0);
  EXPECT_EQ(big.address, B + 16);
  EXPECT_EQ(big.bytes, 3 * MiB + 16);
  EXPECT_EQ(mem.held(), 49 * 65536u);
  sim::Block s = lea.allocate(100, 0);  // 112 from top, right after big
  EXPECT_EQ(s.address, B + 3 * MiB + 16 + 16);
  EXPECT_EQ(lea.top_size(), 49 * 65536u - 80 - (3 * MiB + 16) - 112);

  lea.release(big.address);  // s is in use: big goes to tree bin 21, nothing returned
  EXPECT_EQ(lea.tree_map(), 1u << Lea::tree_index(3 * MiB + 16));
  EXPECT_EQ(mem.held(), 49 * 65536u);

  // free(s): back into big (unlink), forward into top: top = the whole
  // segment less 80 = 3211184 > 2 MiB: trimmed to its last granule:
  // ((3211184 - 80 + 65535) / 65536 - 1) x 65536 = 48 x 64 KiB released.
  const std::uint64_t s0 = lea.steps(), q0 = mem.system_requests();
  EXPECT_EQ(lea.release(s.address), 112u);
  EXPECT_EQ(lea.steps() - s0, 3u);  // unlink, merge into top, trim
  EXPECT_EQ(mem.system_requests() - q0, 1u);
  EXPECT_EQ(mem.held(), 65536u);
  EXPECT_EQ(mem.held_high_water(), 49 * 65536u);
  EXPECT_EQ(lea.top(), B);
  EXPECT_EQ(lea.top_size(), 65536u - 80);
  EXPECT_EQ(lea.tree_map(), 0u);
  EXPECT_EQ(lea.allocate(100, 0).address, B + 16);  // from the trimmed top
  EXPECT_EQ(mem.held(), 65536u);
}

TEST(Lea, MmapThreshold) {
  sim::SimulatedMemory mem;
  Lea lea(mem);
  lea.allocate(1, 0);  // top exists
  // 300 KiB (nb 307216 >= 256 KiB, more than top): mmapped on its own,
  // page_align(307216 + 48 + 15) = 76 pages.
  const std::uint64_t s0 = lea.steps();
  sim::Block m = lea.allocate(300 * KiB, 0);
  EXPECT_EQ(m.address, B + 65536 + 16);
  EXPECT_EQ(m.bytes, 76u * 4096);
  EXPECT_EQ(lea.steps() - s0, 1u);
  EXPECT_EQ(mem.system_requests(), 2u);
  EXPECT_EQ(mem.held(), 65536u + 76 * 4096);
  EXPECT_EQ(mem.load(B + 65536 + 8), 76u * 4096 - 32);  // no in-use bits: mmapped
  const std::uint64_t r0 = mem.reads();
  EXPECT_EQ(lea.release(m.address), 76u * 4096);
  EXPECT_EQ(mem.reads() - r0, 2u);  // head, prev_foot
  EXPECT_EQ(mem.system_requests(), 3u);
  EXPECT_EQ(mem.held(), 65536u);
  // Just below the threshold: a new 64 KiB-step segment, kept after free.
  sim::Block n = lea.allocate(255 * KiB, 0);
  EXPECT_EQ(n.bytes, 255 * KiB + 16);
  EXPECT_EQ(mem.held(), 65536u + 4 * 65536);  // granularity_align(261136 + 96)
  lea.release(n.address);                      // into top (262064 bytes): below 2 MiB, kept
  EXPECT_EQ(mem.held(), 65536u + 4 * 65536);
}

TEST(Lea, AlignedRequests) {
  sim::SimulatedMemory mem;
  Lea lea(mem);
  std::vector<sim::Block> v;
  for (std::uint64_t align : {32u, 64u, 4096u, 16384u}) {
    for (std::uint64_t size : {1u, 100u, 5000u, 300000u}) {
      sim::Block b = lea.allocate(size, align);
      EXPECT_EQ(b.address % align, 0u) << size << " " << align;
      EXPECT_GE(b.bytes, size);
      v.push_back(b);
    }
  }
  for (const auto& b : v) EXPECT_EQ(lea.release(b.address), b.bytes);
}

// Walks every segment chunk by chunk and every bin, and checks dlmalloc's
// invariants: heads and boundary tags agree, no two free chunks are
// adjacent, PINUSE tells the previous chunk's state, every free chunk but dv
// and top is in exactly the bin of its size, tree links are consistent and
// every tree chunk's size matches its position in the trie.
void verify(const Lea& lea, sim::SimulatedMemory& mem) {
  std::set<sim::Address> free_chunks, binned;
  for (const auto& r : mem.regions()) {
    if ((mem.load(r.start + 8) & 3) == 0) continue;  // an mmapped chunk
    const sim::Address end = r.start + r.bytes;
    sim::Address p = r.start;
    bool prev_free = false;
    for (;;) {
      const std::uint64_t h = mem.load(p + 8), s = h & ~std::uint64_t{7};
      ASSERT_EQ((h & 1) == 0, prev_free) << "PINUSE of " << p;
      if (p == lea.top()) {
        ASSERT_EQ(s, lea.top_size());
        ASSERT_EQ(p + s, end - 80) << "top ends its segment";
        ASSERT_FALSE(prev_free);
        break;
      }
      if (s == 48 && (h & 2) && p + 48 + 32 >= end) break;  // segment record
      ASSERT_GE(s, 32u);
      ASSERT_LE(p + s, end - 80);
      if (!(h & 2)) {
        ASSERT_FALSE(prev_free) << "two adjacent free chunks at " << p;
        ASSERT_EQ(mem.load(p + s), s) << "boundary tag of " << p;
        if (p != lea.dv()) free_chunks.insert(p);
        else ASSERT_EQ(s, lea.dv_size());
        prev_free = true;
      } else {
        prev_free = false;
      }
      p += s;
    }
  }
  for (unsigned i = 0; i < 32; ++i) {
    ASSERT_EQ(lea.small_bin(i) != 0, ((lea.small_map() >> i) & 1) != 0);
    sim::Address prev = 0;
    for (sim::Address c = lea.small_bin(i); c; prev = c, c = mem.load(c + 16)) {
      ASSERT_EQ(mem.load(c + 8) & ~std::uint64_t{7}, std::uint64_t{i} << 3);
      ASSERT_EQ(mem.load(c + 24), prev);
      ASSERT_TRUE(binned.insert(c).second);
    }
  }
  std::function<void(sim::Address, sim::Address, unsigned)> tree = [&](sim::Address t, sim::Address parent,
                                                                       unsigned bin) {
    const std::uint64_t s = mem.load(t + 8) & ~std::uint64_t{7};
    ASSERT_EQ(Lea::tree_index(s), bin);
    ASSERT_EQ(mem.load(t + 48), parent);
    ASSERT_EQ(mem.load(t + 56), bin);
    ASSERT_TRUE(binned.insert(t).second);
    for (sim::Address c = mem.load(t + 16); c != t; c = mem.load(c + 16)) {  // the ring of equal sizes
      ASSERT_EQ(mem.load(mem.load(c + 24) + 16), c);
      ASSERT_EQ(mem.load(c + 8) & ~std::uint64_t{7}, s);
      ASSERT_EQ(mem.load(c + 48), 0u);
      ASSERT_TRUE(binned.insert(c).second);
    }
    for (int k = 0; k < 2; ++k)
      if (const sim::Address c = mem.load(t + 32 + 8 * k)) tree(c, t, bin);
  };
  for (unsigned i = 0; i < 32; ++i) {
    ASSERT_EQ(lea.tree_bin(i) != 0, ((lea.tree_map() >> i) & 1) != 0);
    if (lea.tree_bin(i)) tree(lea.tree_bin(i), 1, i);
  }
  ASSERT_EQ(binned, free_chunks);
}

// Random mallocs, memaligns and frees straight on the mechanism, verifying
// every structure after each operation, and live blocks never overlapping.
TEST(Lea, InvariantsHoldOnRandomOperations) {
  sim::SimulatedMemory mem;
  Lea lea(mem);
  std::mt19937_64 rng(11);
  std::vector<sim::Block> live;
  for (int i = 0; i < 20000; ++i) {
    const std::uint64_t r = rng() % 100;
    const bool growing = (i / 2000) % 2 == 0;
    if (live.empty() || r < (growing ? 60u : 40u)) {
      const std::uint64_t q = rng() % 100;
      const std::uint64_t n = q < 60 ? rng() % 300 : q < 95 ? rng() % 5000 : q < 99 ? rng() % 100000 : rng() % 3000000;
      live.push_back(lea.allocate(n, r < 4 ? std::uint64_t{32} << (rng() % 8) : 0));
    } else {
      const std::size_t k = rng() % live.size();
      lea.release(live[k].address);
      live[k] = live.back();
      live.pop_back();
    }
    verify(lea, mem);
    if (HasFatalFailure()) FAIL() << "after operation " << i;
  }
}


// 60k events: sizes mostly small, some up to 600 KiB (mmapped), memalign,
// realloc; phases of growth and release so that top is trimmed.
std::vector<tr::Event> random_lea_events(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<tr::Event> v;
  std::vector<std::uint64_t> live;
  std::uint64_t next_address = 0x10000;
  auto size = [&] {
    const std::uint64_t r = rng() % 100;
    if (r < 70) return 1 + rng() % 256;
    if (r < 95) return 1 + rng() % 8192;
    if (r < 99) return 1 + rng() % 200000;
    return 1 + rng() % 600000;
  };
  while (v.size() < 60000) {
    const bool growing = (v.size() / 5000) % 2 == 0;
    const std::uint64_t r = rng() % 100;
    tr::Event e;
    if (live.empty() || r < (growing ? 60u : 35u)) {
      e = untimed(tr::Op::Malloc, size(), next_address += 0x100000);
      if (r < 3) e.op = tr::Op::Memalign, e.aux = std::uint64_t{16} << (rng() % 10);
      live.push_back(e.address);
    } else {
      const std::size_t k = rng() % live.size();
      if (r < 40) {
        e = untimed(tr::Op::Realloc, size(), next_address += 0x100000);
        e.aux = live[k];
        live[k] = e.address;
      } else {
        e = untimed(tr::Op::Free, 0, live[k]);
        live[k] = live.back();
        live.pop_back();
      }
    }
    e.time_ns = v.size() + 1;
    v.push_back(e);
  }
  return v;
}

TEST(Lea, CheckerPassesOnARandomTrace) {
  const std::vector<tr::Event> events = random_lea_events(7);
  sim::ReplayTrace t = sim::build_replay(events);
  const sim::Metrics plain = tailor::test::expect_checked_run_as_plain(t, "lea").plain;
  // LEA returns memory: what it holds at the end is below its high-water mark.
  EXPECT_LT(plain.series.back().held, plain.held_usage);
  // And uses less than Kingsley on the same trace.
  EXPECT_LT(plain.memory_usage, sim::simulate(t, "kng").memory_usage);
}

}  // namespace
