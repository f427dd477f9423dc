// SPDX-License-Identifier: MIT
// Size classes: every size up to MIDDLE_MAX maps to the smallest class that
// holds it, classes are multiples of 16 (but the 8-byte one), and the waste
// is bounded by the spacing.
#include <gtest/gtest.h>

#include "alloc/config.h"
#include "alloc/heap.h"
#include "alloc/size_class.h"

namespace tailor::alloc {
namespace {

TEST(SizeClass, SmallestClassThatHolds) {
  process_init();
  const SizeClasses& t = g_classes;
  ASSERT_GT(t.count, 10u);
  EXPECT_EQ(t.cls[0].size, 16u);  // no 8-byte class: free marks the second word
  for (std::size_t s = 0; s <= g_config.middle_max; s += (s < 4096 ? 1 : 97)) {
    std::uint32_t c = class_of(s);
    ASSERT_LT(c, t.count) << s;
    EXPECT_GE(t.cls[c].size, s) << s;
    if (c > 0) {
      EXPECT_LT(t.cls[c - 1].size, s == 0 ? 1 : s) << s;
    }
  }
}

TEST(SizeClass, AlignedAndBoundedWaste) {
  process_init();
  const SizeClasses& t = g_classes;
  const double spacing = static_cast<double>(1u << g_config.class_bits);
  for (std::uint32_t c = 1; c < t.count; ++c) {
    EXPECT_EQ(t.cls[c].size % 16, 0u) << c;
    EXPECT_GT(t.cls[c].size, t.cls[c - 1].size);
    if (t.cls[c].size > 256) {
      double growth = static_cast<double>(t.cls[c].size) / t.cls[c - 1].size;
      EXPECT_LE(growth, 1.0 + 1.0 / spacing + 1e-9) << t.cls[c].size;
    }
    EXPECT_GE(t.cls[c].blocks, 8u) << t.cls[c].size;
    EXPECT_LE(std::uint64_t{t.cls[c].blocks} * t.cls[c].size, std::uint64_t{t.cls[c].slices} * g_config.slice_size);
  }
}

TEST(SizeClass, PowersOfTwoAreClasses) {
  process_init();
  for (std::size_t s = 16; s <= g_config.middle_max; s *= 2) EXPECT_EQ(g_classes.cls[class_of(s)].size, s);
}

}  // namespace
}  // namespace tailor::alloc
