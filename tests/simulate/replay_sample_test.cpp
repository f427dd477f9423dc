// SPDX-License-Identifier: MIT
// Sampling a replay by object (replay_sample.h): one in k keeps whole objects
// (an allocation and its release), dense ids, a consistent summary, and
// event_of() naming the whole trace's events; the sample replays under the
// checker.
#include <gtest/gtest.h>

#include <vector>

#include "simulate/replay_sample.h"
#include "simulate/random_trace.h"
#include "simulate/simulator.h"

namespace {

namespace sim = tailor::simulate;

// In-use bytes, live blocks and their peaks by replaying the operations.
struct Replayed {
  std::uint64_t allocations = 0, releases = 0, max_in_use = 0, live = 0, ids = 0;
};
Replayed replay(const sim::ReplayTrace& t) {
  Replayed r;
  std::vector<std::uint64_t> bytes;
  std::vector<bool> live;
  std::uint64_t in_use = 0;
  for (const auto& op : t.operations) {
    if (op.block >= bytes.size()) bytes.resize(op.block + 1), live.resize(op.block + 1);
    if (op.kind() == sim::Operation::kAllocate) {
      EXPECT_FALSE(live[op.block]) << "block " << op.block << " allocated twice";
      live[op.block] = true;
      bytes[op.block] = t.bytes(op);
      in_use += t.bytes(op);
      ++r.allocations, ++r.live;
      r.max_in_use = std::max(r.max_in_use, in_use);
    } else {
      EXPECT_TRUE(live[op.block]) << "block " << op.block << " released while not live";
      EXPECT_EQ(t.bytes(op), bytes[op.block]) << "a release carries its block's size";
      live[op.block] = false;
      in_use -= bytes[op.block];
      ++r.releases, --r.live;
    }
  }
  r.ids = bytes.size();
  return r;
}

TEST(ReplaySample, OneInOneIsTheWholeTrace) {
  const sim::ReplayTrace t = sim::build_replay(tailor::test::random_events(3, 5000));
  const sim::ReplayTrace s = sim::sample_objects(t, 1);
  ASSERT_EQ(s.operations.size(), t.operations.size());
  for (std::size_t i = 0; i < t.operations.size(); ++i) {
    EXPECT_EQ(s.operations[i].kind(), t.operations[i].kind());
    EXPECT_EQ(s.bytes(s.operations[i]), t.bytes(t.operations[i]));
    EXPECT_EQ(s.event_of(i), t.event_of(i));
  }
  EXPECT_EQ(s.summary.max_in_use_bytes, t.summary.max_in_use_bytes);
  EXPECT_EQ(s.summary.max_live_blocks, t.summary.max_live_blocks);
  EXPECT_EQ(s.summary.live_blocks_at_end, t.summary.live_blocks_at_end);
}

TEST(ReplaySample, KeepsWholeObjectsAndAConsistentSummary) {
  const sim::ReplayTrace t = sim::build_replay(tailor::test::random_events(4, 40000));
  for (std::uint32_t k : {2u, 5u, 17u}) {
    SCOPED_TRACE(k);
    const sim::ReplayTrace s = sim::sample_objects(t, k);
    const Replayed r = replay(s);
    EXPECT_EQ(r.allocations, s.summary.allocations);
    EXPECT_EQ(r.releases, s.summary.releases);
    EXPECT_EQ(r.max_in_use, s.summary.max_in_use_bytes);
    EXPECT_EQ(r.live, s.summary.live_blocks_at_end);
    EXPECT_EQ(r.ids, s.summary.max_live_blocks);  // ids are dense
    EXPECT_EQ(s.summary.events, s.operations.size());
    // About one object in k.
    const double share = static_cast<double>(s.summary.allocations) / static_cast<double>(t.summary.allocations);
    EXPECT_NEAR(share, 1.0 / k, 0.25 / k);
    // Each kept operation names the whole trace's event of the same request.
    std::size_t j = 0;
    for (std::size_t i = 0; i < s.operations.size(); ++i) {
      // (a realloc is two operations of one event: a release, then an allocation)
      while (j < t.operations.size() &&
             (t.event_of(j) != s.event_of(i) || t.operations[j].kind() != s.operations[i].kind()))
        ++j;
      ASSERT_LT(j, t.operations.size()) << "operation " << i << " names no event of the whole trace";
      EXPECT_EQ(t.operations[j].kind(), s.operations[i].kind());
      EXPECT_EQ(t.bytes(t.operations[j]), s.bytes(s.operations[i]));
    }
    // Deterministic, and it replays under the checker.
    EXPECT_EQ(sim::sample_objects(t, k).operations.size(), s.operations.size());
    sim::SimulateOptions o;
    o.check = true;
    EXPECT_NO_THROW(sim::simulate(s, "kng", o));
  }
}

TEST(ReplaySample, RateLeavesAtMostTheOperationsAsked) {
  const sim::ReplayTrace t = sim::build_replay(tailor::test::random_events(5, 3000));
  const std::uint64_t n = t.operations.size();
  EXPECT_EQ(sim::sampling_rate(t, n), 1u);
  EXPECT_EQ(sim::sampling_rate(t, n * 10), 1u);
  EXPECT_EQ(sim::sampling_rate(t, n / 4), 4u);
  EXPECT_EQ(sim::sampling_rate(t, n / 4 - 1), 5u);
  EXPECT_THROW(sim::sampling_rate(t, 0), std::invalid_argument);
  EXPECT_THROW(sim::sample_objects(t, 0), std::invalid_argument);
}

}  // namespace

TEST(ReplaySample, PrefixIsTheFirstOperationsWithTheirOwnSummary) {
  const sim::ReplayTrace t = sim::build_replay(tailor::test::random_events(9, 20000));
  for (std::uint64_t n : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{777}, std::uint64_t{5000},
                          static_cast<std::uint64_t>(t.operations.size()), std::uint64_t{1} << 40}) {
    SCOPED_TRACE(n);
    const sim::ReplayTrace p = sim::prefix(t, n);
    const std::size_t want = std::min<std::uint64_t>(n, t.operations.size());
    ASSERT_EQ(p.operations.size(), want);
    for (std::size_t i = 0; i < want; ++i) {
      EXPECT_EQ(p.operations[i].word, t.operations[i].word);
      EXPECT_EQ(p.operations[i].block, t.operations[i].block);
      EXPECT_EQ(p.event_of(i), t.event_of(i));
    }
    const Replayed r = replay(p);
    EXPECT_EQ(r.allocations, p.summary.allocations);
    EXPECT_EQ(r.releases, p.summary.releases);
    EXPECT_EQ(r.max_in_use, p.summary.max_in_use_bytes);
    EXPECT_EQ(r.live, p.summary.live_blocks_at_end);
    EXPECT_LE(p.summary.max_live_blocks, t.summary.max_live_blocks);
    if (want == t.operations.size()) {
      EXPECT_EQ(p.summary.max_in_use_bytes, t.summary.max_in_use_bytes);
      EXPECT_EQ(p.summary.events, t.event_of(want - 1) + 1);
    }
    sim::SimulateOptions o;
    o.check = true;
    EXPECT_NO_THROW(sim::simulate(p, "kng", o));
  }
}
