// SPDX-License-Identifier: MIT
// Where consecutive allocations land (docs/allocator.md, "Size classes and
// pages"): a thread's consecutive requests of one size class are served
// from a fresh page at increasing, adjacent addresses, as glibc's and
// mimalloc's are, also when requests of other sizes come between them, so
// that a structure built in allocation order is walked in address order
// (pointer-chasing programs, issue 36). Secure mode's random placement is
// tested in secure_test.cpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <thread>
#include <vector>

#include "tailor/tailor.h"

namespace {

// Of n blocks allocated one after the other, how many start exactly one
// block after the one before.
std::size_t adjacent_steps(const std::vector<void*>& v) {
  std::size_t steps = 0;
  for (std::size_t i = 1; i < v.size(); ++i) {
    const auto a = reinterpret_cast<std::uintptr_t>(v[i - 1]), b = reinterpret_cast<std::uintptr_t>(v[i]);
    if (b == a + tailor_usable_size(v[i - 1])) ++steps;
  }
  return steps;
}

TEST(Layout, AFreshPageHandsOutItsBlocksInAddressOrder) {
  std::thread([] {  // a thread of its own: its pages of these sizes are fresh
    for (const std::size_t size : {24u, 48u, 112u, 400u}) {
      std::vector<void*> v;
      for (int i = 0; i < 200; ++i) v.push_back(tailor_malloc(size));
      // One step may cross to the next page.
      EXPECT_GE(adjacent_steps(v), v.size() - 2) << size << "-byte blocks";
      for (void* p : v) tailor_free(p);
    }
  }).join();
}

TEST(Layout, ConsecutiveRequestsOfOneSizeStayAdjacentWhenOtherSizesComeBetween) {
  std::thread([] {
    std::vector<void*> nodes, keys, other;
    for (int i = 0; i < 200; ++i) {  // a node, its key, and a temporary freed at once
      nodes.push_back(tailor_malloc(40));
      keys.push_back(tailor_malloc(16));
      void* t = tailor_malloc(100);
      tailor_free(t);
      other.push_back(tailor_malloc(300));
    }
    EXPECT_GE(adjacent_steps(nodes), nodes.size() - 2);
    EXPECT_GE(adjacent_steps(keys), keys.size() - 2);
    EXPECT_GE(adjacent_steps(other), other.size() - 2);
    for (auto* v : {&nodes, &keys, &other})
      for (void* p : *v) tailor_free(p);
  }).join();
}

}  // namespace
