// SPDX-License-Identifier: MIT
// Where consecutive allocations land (docs/allocator.md, "Size classes and
// pages"): a thread's consecutive requests of one size class are served
// from a fresh page at increasing, adjacent addresses, as glibc's and
// mimalloc's are, also when requests of other sizes come between them, so
// that a structure built in allocation order is walked in address order
// (pointer-chasing programs, issue 36); and the free blocks of the page
// behind are handed out before the current page carves fresh ones. Secure
// mode's random placement is tested in secure_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

#include "tailor/tailor.h"

namespace {

// Of n blocks allocated one after the other, how many start exactly one
// block after the one before.
bool holds(const std::vector<void*>& v, const void* p) { return std::find(v.begin(), v.end(), p) != v.end(); }

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

// A page with free blocks right behind the class's current page is used
// before the current page carves blocks it never handed out: memory already
// touched before memory that would be faulted in (heap.cpp,
// malloc_from_class). 7000-byte blocks: a few dozen to a page, carved one at
// a time.
TEST(Layout, HolesInThePageBehindAreFilledBeforeTheCurrentPageCarvesFreshBlocks) {
  std::thread([] {
    std::vector<void*> first{tailor_malloc(7000)};  // the first page, filled
    void* next = nullptr;
    for (;;) {
      next = tailor_malloc(7000);
      const auto last = reinterpret_cast<std::uintptr_t>(first.back());
      if (reinterpret_cast<std::uintptr_t>(next) != last + tailor_usable_size(first.back())) break;
      first.push_back(next);
    }
    ASSERT_GE(first.size(), 30u);
    std::vector<void*> second{next, tailor_malloc(7000), tailor_malloc(7000)};  // the next page: three carved
    tailor_free(second.back());  // the current page has a free block
    second.pop_back();
    std::vector<void*> holes;
    for (std::size_t i : {3u, 13u, 23u}) {  // the full page goes back to the queue, behind the current one
      holes.push_back(first[i]);
      tailor_free(first[i]);
      first[i] = nullptr;
    }
    std::vector<void*> again;
    for (int i = 0; i < 4; ++i) again.push_back(tailor_malloc(7000));
    int reused = 0;
    for (void* p : again) reused += holds(holes, p) ? 1 : 0;
    EXPECT_EQ(reused, 3) << "the current page carved fresh blocks while the page behind it had free ones";
    for (auto* v : {&first, &second, &again})
      for (void* p : *v) tailor_free(p);
  }).join();
}

}  // namespace
