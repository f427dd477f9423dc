// SPDX-License-Identifier: MIT
// Composite::usable_inline: the front's free path (libtailor's DMM mode,
// src/alloc/dmm_front.cpp) reads a block's usable bytes inline, by the
// mechanism kind, instead of through the part's indirect call. Here every
// mechanism of the dmm layer, alone in a composition, has its blocks read
// inline (true), each block holds its request, and no two live blocks'
// usable ranges overlap: a read through the wrong mechanism's layout
// would give sizes that break one of the two.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "dmm/binary_buddy.h"
#include "dmm/composite.h"
#include "dmm/fibonacci_buddy.h"
#include "dmm/kingsley.h"
#include "dmm/lea.h"
#include "dmm/segregated_fit.h"
#include "dmm/segregated_lists.h"
#include "dmm/simple_segregated_storage.h"
#include "simulate/dmm.h"
#include "simulate/simulated_memory.h"

namespace {

namespace sim = tailor::simulate;
namespace dmm = tailor::dmm;
using M = sim::SimulatedMemory;
using Composite = dmm::Composite<M>;

// Requests of these sizes (and alignments) up to `max`, twice each, then
// every usable range checked against the others and released.
void check_blocks(Composite& c, const char* what, std::uint64_t max = UINT64_MAX) {
  SCOPED_TRACE(what);
  const std::pair<std::uint64_t, std::uint64_t> requests[] = {
      {1, 0}, {8, 0}, {24, 0}, {40, 0}, {100, 0}, {1000, 0}, {5000, 0}, {100, 64}, {24, 32}};
  std::vector<std::pair<dmm::Address, std::uint64_t>> ranges;
  for (int round = 0; round < 2; ++round) {
    for (const auto& [bytes, align] : requests) {
      if (bytes > max) continue;
      const dmm::Block b = c.allocate(bytes, align);
      ASSERT_NE(b.address, 0u) << bytes;
      std::uint64_t usable = 0;
      ASSERT_TRUE(c.usable_inline(0, b.address, usable)) << "not read inline";
      EXPECT_GE(usable, bytes);
      EXPECT_EQ(usable, c.usable(0, b.address));
      ranges.emplace_back(b.address, usable);
    }
  }
  std::sort(ranges.begin(), ranges.end());
  for (std::size_t i = 1; i < ranges.size(); ++i)
    EXPECT_LE(ranges[i - 1].first + ranges[i - 1].second, ranges[i].first) << "block " << i - 1 << " overlaps the next";
  for (const auto& r : ranges) c.release(0, r.first);
}

// Mech alone in a composition, built from `args` on a memory of its own.
template <class Mech, class... Args>
void check_mechanism(const char* what, std::uint64_t max, Args&&... args) {
  M memory;
  Composite c;
  ASSERT_EQ(c.build_one<Mech>(memory, std::forward<Args>(args)...), nullptr) << what;
  check_blocks(c, what, max);
}

TEST(CompositeUsable, EveryMechanismIsReadInline) {
  check_mechanism<dmm::Kingsley<M>>("kingsley", UINT64_MAX);
  check_mechanism<dmm::Lea<M>>("lea", UINT64_MAX);
  check_mechanism<dmm::FibonacciBuddy<M>>("fibonacci buddy", UINT64_MAX);
  check_mechanism<dmm::BinaryBuddy<M>>("binary buddy", UINT64_MAX);
  check_mechanism<dmm::SegregatedLists<M>>("segregated lists", UINT64_MAX, sim::s10_classes(), dmm::s10_config());
  dmm::SegregatedFitConfig fit;
  fit.search_larger = true;
  fit.split = true;
  fit.coalesce = true;
  check_mechanism<dmm::SegregatedFit<M>>("segregated fit", UINT64_MAX, sim::powers_of_two_classes(4, 14, true), fit);
  // Bounded classes, each in areas of one chunk (its check).
  dmm::SimpleSegregatedConfig simple;
  simple.chunk = 65536;
  ASSERT_EQ(dmm::SimpleSegregatedStorage<M>::check(sim::powers_of_two_classes(3, 10, false), simple), nullptr);
  check_mechanism<dmm::SimpleSegregatedStorage<M>>("simple segregated storage", 1024,
                                                   sim::powers_of_two_classes(3, 10, false), simple);
}

}  // namespace
