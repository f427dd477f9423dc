// SPDX-License-Identifier: MIT
// The front of free blocks in front of a DMM (src/dmm/front.h): which bin a
// request and a block belong to, which allocator owns a bin, the limit per
// bin, the bin a request learns to take from and the 16-byte rule.
#include "dmm/front.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>

namespace {

using tailor::dmm::Address;
using tailor::dmm::Front;

// Links in a map: the front's words as a memory holds them.
struct Words {
  std::map<Address, std::uint64_t> w;
  auto load() {
    return [this](Address a) { return w[a]; };
  }
  auto store() {
    return [this](Address a, std::uint64_t v) { w[a] = v; };
  }
};

TEST(Front, RequestsGoToTheBinOfTheirEightByteStep) {
  EXPECT_EQ(Front::bin_of_request(0, 0), 1u);
  EXPECT_EQ(Front::bin_of_request(1, 0), 1u);
  EXPECT_EQ(Front::bin_of_request(8, 0), 1u);
  EXPECT_EQ(Front::bin_of_request(9, 0), 2u);
  EXPECT_EQ(Front::bin_of_request(1024, 0), 128u);
  EXPECT_EQ(Front::bin_of_request(1025, 0), 0u);  // beyond the bins
  EXPECT_EQ(Front::bin_of_request(24, 16), 0u);   // aligned calls reach the allocators
}

TEST(Front, BlocksGoToTheBinTheirUsableBytesServe) {
  EXPECT_EQ(Front::bin_of_block(0x1000, 24), 3u);
  EXPECT_EQ(Front::bin_of_block(0x1008, 31), 3u);   // holds any request up to 24
  EXPECT_EQ(Front::bin_of_block(0x1000, 4), 0u);    // too small for a link
  EXPECT_EQ(Front::bin_of_block(0x1000, 1031), 128u);
  EXPECT_EQ(Front::bin_of_block(0x1000, 1032), 0u);  // no bin: its allocator takes it back
  EXPECT_EQ(Front::bin_of_block(0x1000, 32), 4u);
  EXPECT_EQ(Front::bin_of_block(0x1008, 32), 0u);  // a multiple of 16 bytes: 16-aligned blocks only
}

TEST(Front, ABinBelongsToTheAllocatorAllItsSizesGoTo) {
  std::uint8_t owner[Front::kBins + 1];
  // Allocator 0 up to 20 bytes, allocator 1 up to 512, allocator 2 above.
  Front::owners(owner, [](std::uint64_t bytes) -> std::size_t { return bytes <= 20 ? 0 : bytes <= 512 ? 1 : 2; });
  EXPECT_EQ(owner[0], Front::kNoOwner);
  EXPECT_EQ(owner[1], 0);  // 1..8
  EXPECT_EQ(owner[2], 0);  // 9..16
  EXPECT_EQ(owner[3], Front::kNoOwner);  // 17..24: 17-20 to one, 21-24 to the other
  EXPECT_EQ(owner[4], 1);
  EXPECT_EQ(owner[64], 1);  // 505..512
  EXPECT_EQ(owner[65], 2);
}

TEST(Front, ABinBeforeAnAllocatorThatNeverMergesKeepsMore) {
  std::uint8_t owner[Front::kBins + 1];
  Front::owners(owner, [](std::uint64_t bytes) -> std::size_t { return bytes <= 64 ? 0 : 1; });
  std::uint32_t limits[Front::kBins + 1];
  // Allocator 0 splits or coalesces (a block kept is one it cannot merge), allocator 1 never does.
  Front::limits(limits, owner, 16, [](std::size_t part) { return part == 0; });
  EXPECT_EQ(limits[0], 0u);
  EXPECT_EQ(limits[8], 16u);
  EXPECT_EQ(limits[9], Front::kUnmergedLimit);  // one thread: every block
  // A thread's front among several keeps a bounded number.
  Front::limits(limits, owner, 16, [](std::size_t part) { return part == 0; }, Front::kThreadsUnmergedLimit);
  EXPECT_EQ(limits[8], 16u);
  EXPECT_EQ(limits[9], Front::kThreadsUnmergedLimit);
  Front::limits(limits, owner, 0, [](std::size_t) { return false; });
  EXPECT_EQ(limits[9], 0u);  // 0: no front at all
}

// A program that frees a whole structure and builds it again (olden's
// treeadd) keeps every block in a bin of an allocator that never merges, so
// the rebuild takes them all back without the mechanism, last freed first.
TEST(Front, ABinBeforeAnAllocatorThatNeverMergesKeepsAWholeStructure) {
  std::uint8_t owner[Front::kBins + 1];
  Front::owners(owner, [](std::uint64_t) -> std::size_t { return 0; });
  std::uint32_t limits[Front::kBins + 1];
  Front::limits(limits, owner, 16, [](std::size_t) { return false; });
  Front f;
  Words m;
  constexpr Address kBlocks = 100000;  // more than a 16-bit count holds
  for (Address i = 1; i <= kBlocks; ++i) ASSERT_TRUE(f.push(3, i * 32, limits[3], m.store()));
  EXPECT_EQ(f.blocks(), kBlocks);
  for (Address i = kBlocks; i >= 1; --i) ASSERT_EQ(f.take(3, 24, m.load()), i * 32);
  EXPECT_EQ(f.take(3, 24, m.load()), 0u);
}

TEST(Front, ABinKeepsAtMostItsLimitLastInFirstOut) {
  Front f;
  Words m;
  EXPECT_TRUE(f.push(3, 0x100, 2, m.store()));
  EXPECT_TRUE(f.push(3, 0x200, 2, m.store()));
  EXPECT_FALSE(f.push(3, 0x300, 2, m.store()));  // full: the allocator takes it
  EXPECT_EQ(f.blocks(), 2u);
  EXPECT_EQ(f.take(3, 20, m.load()), 0x200u);
  EXPECT_EQ(f.take(3, 24, m.load()), 0x100u);
  EXPECT_EQ(f.take(3, 24, m.load()), 0u);
  EXPECT_EQ(f.blocks(), 0u);
}

TEST(Front, ARequestLearnsTheBinItsBlocksComeBackTo) {
  Front f;
  Words m;
  ASSERT_TRUE(f.push(3, 0x100, 8, m.store()));  // a 24-byte block
  EXPECT_EQ(f.take(2, 12, m.load()), 0u);       // a 12-byte request looks in bin 2
  f.learn(2, 3);                                // the allocator gives 12-byte requests 24-byte blocks
  EXPECT_EQ(f.target(2), 3u);
  EXPECT_EQ(f.take(2, 12, m.load()), 0x100u);
  f.learn(3, 2);  // never a smaller bin: its blocks may not hold the request
  EXPECT_EQ(f.target(3), 3u);
}

TEST(Front, ARequestOfAMultipleOf16TakesOnly16AlignedBlocks) {
  Front f;
  Words m;
  f.learn(2, 3);
  ASSERT_TRUE(f.push(3, 0x108, 8, m.store()));  // 8-aligned, 24 usable
  EXPECT_EQ(f.take(2, 16, m.load()), 0u);       // 16 bytes may hold a 16-aligned type
  EXPECT_EQ(f.take(2, 12, m.load()), 0x108u);
}

TEST(Front, DrainGivesEveryBlockBack) {
  Front f;
  Words m;
  for (Address a = 0x1000; a < 0x1000 + 10 * 64; a += 64) ASSERT_TRUE(f.push(7, a, 16, m.store()));
  ASSERT_TRUE(f.push(128, 0x9000, 16, m.store()));
  int n = 0;
  f.drain(m.load(), [&](Address) { ++n; });
  EXPECT_EQ(n, 11);
  EXPECT_EQ(f.blocks(), 0u);
}

}  // namespace
