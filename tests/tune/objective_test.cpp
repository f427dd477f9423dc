// SPDX-License-Identifier: MIT
// The verdict rules of `tailor tune` (docs/tune.md, "Verdict"): what a
// finalist's ratios to default libtailor must be for it to be kept.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "tune/objective.h"
#include "tune/tuner.h"

namespace tn = tailor::tune;

namespace {

bool kept(tn::Objective o, tn::Ratios r) {
  std::string why;
  const bool k = tn::wins_real(o, r, why);
  EXPECT_EQ(k, why.empty()) << why;
  return k;
}

}  // namespace

TEST(Objective, MemoryKeepsLessMemoryWithinTheTimeLimit) {
  EXPECT_TRUE(kept(tn::Objective::kMemory, {1.05, 0.9, 1.02}));
  EXPECT_FALSE(kept(tn::Objective::kMemory, {0.9, 1.0, 0.9}));  // no less memory
  EXPECT_FALSE(kept(tn::Objective::kMemory, {1.3, 0.8, 1.25}));  // slower by both measures
}

TEST(Objective, MemoryTimeLimitNeedsBothMedianAndFastestRun) {
  // A neighbour's noise moves one estimate past the limit, not both.
  EXPECT_TRUE(kept(tn::Objective::kMemory, {1.24, 0.9, 1.05}));
  EXPECT_TRUE(kept(tn::Objective::kMemory, {1.02, 0.9, 1.28}));
  EXPECT_TRUE(std::isfinite(tn::score(tn::Objective::kMemory, {1.24, 0.9, 1.05})));
  EXPECT_TRUE(std::isinf(tn::score(tn::Objective::kMemory, {1.11, 0.9, 1.11})));
  std::string why;
  EXPECT_FALSE(tn::wins_real(tn::Objective::kMemory, {1.2, 0.9, 1.15}, why));
  EXPECT_NE(why.find("time above 1.100x default libtailor's on the real runs (--max-slowdown; median +20.0%, fastest "
                     "run +15.0%)"),
            std::string::npos)
      << why;
}

TEST(Objective, MaxSlowdownSetsTheMemoryObjectivesTimeLimit) {
  std::string why;
  EXPECT_TRUE(tn::wins_real(tn::Objective::kMemory, {1.15, 0.8, 1.15}, why, 1.20)) << why;
  EXPECT_FALSE(tn::wins_real(tn::Objective::kMemory, {1.15, 0.8, 1.15}, why, 1.05));
  EXPECT_NE(why.find("time above 1.050x"), std::string::npos) << why;
  EXPECT_TRUE(std::isfinite(tn::score(tn::Objective::kMemory, {1.15, 0.8, 1.15}, 1.20)));
}

TEST(Objective, TimeKeepsFasterWithinTheMemoryLimit) {
  EXPECT_TRUE(kept(tn::Objective::kTime, {0.95, 1.05, 0.97}));
  EXPECT_FALSE(kept(tn::Objective::kTime, {1.01, 0.5, 0.9}));  // not faster on the median
  EXPECT_FALSE(kept(tn::Objective::kTime, {0.8, 1.2, 0.8}));   // memory above 1.1x
  EXPECT_TRUE(std::isinf(tn::score(tn::Objective::kTime, {0.8, 1.2, 0.8})));
}

TEST(Objective, AWinnerMustGainMoreThanTheNoise) {
  // A median ratio of 0.99 is what a configuration that changes nothing
  // shows on a busy machine: no config file for it.
  EXPECT_FALSE(kept(tn::Objective::kTime, {0.99, 1.0, 0.99}));
  EXPECT_TRUE(kept(tn::Objective::kTime, {0.979, 1.0, 0.98}));
  EXPECT_FALSE(kept(tn::Objective::kMemory, {1.0, 0.985, 1.0}));
  EXPECT_TRUE(kept(tn::Objective::kMemory, {1.0, 0.97, 1.0}));
  EXPECT_FALSE(kept(tn::Objective::kBalanced, {0.99, 0.99, 0.99}));
  EXPECT_TRUE(kept(tn::Objective::kBalanced, {0.97, 0.98, 0.97}));
  std::string why;
  EXPECT_FALSE(tn::wins_real(tn::Objective::kTime, {0.995, 1.0, 0.99}, why));
  EXPECT_NE(why.find("within the noise of default libtailor on the real runs (-0.5% time) (a winner must gain 2%)"),
            std::string::npos)
      << why;
}

TEST(Objective, BalancedIsTheGeometricMean) {
  EXPECT_DOUBLE_EQ(tn::score(tn::Objective::kBalanced, {0.5, 2.0, 0.5}), 1.0);
  EXPECT_TRUE(kept(tn::Objective::kBalanced, {1.05, 0.9, 1.05}));
  EXPECT_FALSE(kept(tn::Objective::kBalanced, {1.2, 0.9, 1.2}));
}

TEST(Objective, MeasureIgnoresTheOtherLimit) {
  // One round's verdict in the search: a noisy round of a short replay that
  // is 1.3x slower still saved memory; the limit is judged on the medians.
  EXPECT_DOUBLE_EQ(tn::measure(tn::Objective::kMemory, {1.3, 0.9, 1.3}), 0.9);
  EXPECT_TRUE(std::isinf(tn::score(tn::Objective::kMemory, {1.3, 0.9, 1.3})));
  EXPECT_DOUBLE_EQ(tn::measure(tn::Objective::kTime, {0.8, 1.5, 0.8}), 0.8);
  EXPECT_DOUBLE_EQ(tn::measure(tn::Objective::kBalanced, {0.5, 2.0, 0.5}), 1.0);
}
