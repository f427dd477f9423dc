// SPDX-License-Identifier: MIT
// The check the container tests (list_test.cpp, tree_test.cpp) make after
// every step of a random sequence of operations: a tailor container holds the
// same elements as its std counterpart, in the same order both ways.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>

namespace tailor::test {

template <class A, class B>
void expect_same_elements(const A& mine, const B& theirs, int step) {
  ASSERT_EQ(mine.size(), theirs.size()) << "step " << step;
  ASSERT_TRUE(std::equal(mine.begin(), mine.end(), theirs.begin(), theirs.end())) << "step " << step;
  ASSERT_TRUE(std::equal(mine.rbegin(), mine.rend(), theirs.rbegin(), theirs.rend())) << "step " << step;
}

}  // namespace tailor::test
