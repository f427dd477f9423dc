// SPDX-License-Identifier: MIT
// SimulatedMemory: counting of reads, writes and system requests, held bytes
// and their high-water mark, regions, zero-filled pages, bad accesses.
#include <gtest/gtest.h>

#include "simulate/base_address.h"
#include "simulate/simulated_memory.h"

namespace {

namespace sim = tailor::simulate;

TEST(SimulatedMemory, CountsAndHeldBytes) {
  sim::SimulatedMemory m;
  EXPECT_EQ(B % 4096, 0u);
  EXPECT_NE(B, 0u);
  const sim::Address a = m.obtain(100, 8);
  EXPECT_EQ(a, B);
  const sim::Address b = m.obtain(4096, 4096);  // aligned: the gap is not held
  EXPECT_EQ(b, B + 4096);
  EXPECT_EQ(m.held(), 4196u);
  EXPECT_EQ(m.system_requests(), 2u);

  EXPECT_EQ(m.load(b + 8), 0u);  // never written: zero
  m.store(b + 8, 42);
  m.store(a, 7);
  EXPECT_EQ(m.load(b + 8), 42u);
  EXPECT_EQ(m.load(a), 7u);
  EXPECT_EQ(m.reads(), 3u);
  EXPECT_EQ(m.writes(), 2u);

  EXPECT_TRUE(m.holds(a, 100));
  EXPECT_FALSE(m.holds(a, 101));
  EXPECT_FALSE(m.holds(a + 200, 8));  // in the alignment gap
  EXPECT_TRUE(m.holds(b + 4000, 96));

  m.release(a, 100);
  EXPECT_EQ(m.held(), 4096u);
  EXPECT_EQ(m.held_high_water(), 4196u);
  EXPECT_EQ(m.system_requests(), 3u);
  EXPECT_FALSE(m.holds(a, 8));
  m.release(b + 2048, 2048);  // the tail of a region
  EXPECT_EQ(m.held(), 2048u);
  EXPECT_TRUE(m.holds(b, 2048));
  EXPECT_FALSE(m.holds(b + 2048, 8));
  EXPECT_THROW(m.release(b + 8, 16), std::logic_error);  // neither head nor tail
}

TEST(SimulatedMemory, ManyPagesAndBadAccesses) {
  sim::SimulatedMemory m;
  const sim::Address a = m.obtain(std::uint64_t{1} << 24, 8);  // 16 MiB: 512 host pages, none touched yet
  for (sim::Address p = a; p < a + (std::uint64_t{1} << 24); p += 65536) m.store(p, p);
  for (sim::Address p = a; p < a + (std::uint64_t{1} << 24); p += 65536) ASSERT_EQ(m.load(p), p);
  EXPECT_THROW(m.load(a + (std::uint64_t{1} << 24)), std::logic_error);  // past the obtained space
  EXPECT_THROW(m.store(a + 4, 1), std::logic_error);                     // misaligned
  EXPECT_THROW(m.load(8), std::logic_error);                             // below the base
  EXPECT_THROW(m.obtain(8, 3), std::invalid_argument);
}

}  // namespace
