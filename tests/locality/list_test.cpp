// SPDX-License-Identifier: MIT
// tailor::list against std::list: the same random sequences of operations
// (inserts at both ends and in the middle, erase, splice, sort, merge,
// unique, remove, reverse, resize, copy and move) must leave both lists
// equal after every step; plus the hints the list gives and its dynamism.
#include <gtest/gtest.h>

#include <algorithm>
#include <list>
#include <random>
#include <string>

#include "locality/same_elements.h"
#include "tailor/list.h"

namespace {

using tailor::locality_heap;
using tailor::test::expect_same_elements;


template <class P>
void random_ops(unsigned seed, unsigned k) {
  locality_heap heap{{k, false}};
  using L = tailor::list<std::string, tailor::allocator<std::string, P>>;
  tailor::allocator<std::string, P> alloc(heap);
  L a(alloc), other(alloc);
  std::list<std::string> b, other_b;
  std::mt19937 rng(seed);
  auto val = [&] { return std::to_string(rng() % 50) + std::string(rng() % 3 == 0 ? 20 : 0, 'x'); };
  auto pos = [&](auto& l) {
    auto it = l.begin();
    std::advance(it, l.empty() ? 0 : static_cast<long>(rng() % (l.size() + 1)));
    return it;
  };
  for (int step = 0; step < 3000; ++step) {
    const auto op = rng() % 20;
    if (op < 4) {
      auto v = val();
      a.push_back(v), b.push_back(v);
    } else if (op < 7) {
      auto v = val();
      a.push_front(v), b.push_front(v);
    } else if (op < 9) {
      const std::size_t i = a.empty() ? 0 : rng() % (a.size() + 1);
      auto ia = a.begin();
      auto ib = b.begin();
      std::advance(ia, static_cast<long>(i)), std::advance(ib, static_cast<long>(i));
      auto v = val();
      const std::size_t n = rng() % 3;
      auto ra = a.insert(ia, n, v);
      auto rb = b.insert(ib, n, v);
      ASSERT_EQ(std::distance(a.begin(), ra), std::distance(b.begin(), rb));
    } else if (op < 11 && !a.empty()) {
      const std::size_t i = rng() % a.size();
      auto ia = a.begin();
      auto ib = b.begin();
      std::advance(ia, static_cast<long>(i)), std::advance(ib, static_cast<long>(i));
      auto ra = a.erase(ia);
      auto rb = b.erase(ib);
      ASSERT_EQ(std::distance(a.begin(), ra), std::distance(b.begin(), rb));
    } else if (op == 11 && !a.empty()) {
      if (rng() % 2)
        a.pop_back(), b.pop_back();
      else
        a.pop_front(), b.pop_front();
    } else if (op == 12) {
      a.sort(), b.sort();
    } else if (op == 13) {
      auto v = val();
      other.push_back(v), other_b.push_back(v);
      other.sort(), other_b.sort();
      a.sort(), b.sort();
      a.merge(other), b.merge(other_b);
    } else if (op == 14) {
      ASSERT_EQ(a.unique(), b.unique());
    } else if (op == 15) {
      auto v = val();
      ASSERT_EQ(a.remove(v), b.remove(v));
    } else if (op == 16) {
      a.reverse(), b.reverse();
    } else if (op == 17) {
      // splice a range of `other` into the middle, then one element back
      for (int i = 0; i < 3; ++i) {
        auto v = val();
        other.push_back(v), other_b.push_back(v);
      }
      const std::size_t i = a.empty() ? 0 : rng() % (a.size() + 1);
      auto ia = a.begin();
      auto ib = b.begin();
      std::advance(ia, static_cast<long>(i)), std::advance(ib, static_cast<long>(i));
      a.splice(ia, other, std::next(other.begin()), other.end());
      b.splice(ib, other_b, std::next(other_b.begin()), other_b.end());
      if (!a.empty()) {
        other.splice(other.end(), a, a.begin());
        other_b.splice(other_b.end(), b, b.begin());
      }
      expect_same_elements(other, other_b, step);
    } else if (op == 18) {
      const std::size_t n = rng() % (a.size() + 5);
      a.resize(n, "r"), b.resize(n, "r");
    } else if (op == 19) {
      L copy(a);
      expect_same_elements(copy, b, step);
      L moved(std::move(copy));
      a = moved;
      L assigned(alloc);
      assigned = std::move(moved);
      a.swap(assigned);
      expect_same_elements(assigned, b, step);
      if (rng() % 10 == 0) a.clear(), b.clear();
    }
    (void)pos;
    expect_same_elements(a, b, step);
  }
}

TEST(List, RandomOperationsMatchStdListMatch) { random_ops<tailor::locality::Match>(1, 52); }
TEST(List, RandomOperationsMatchStdListFirst) { random_ops<tailor::locality::First>(2, 48); }
TEST(List, RandomOperationsMatchStdListSmallClasses) { random_ops<tailor::locality::Match>(3, 58); }

TEST(List, ConstructorsAndComparisons) {
  tailor::list<int> a{3, 1, 2};
  tailor::list<int> b(3, 7);
  tailor::list<int> c(a.begin(), a.end());
  EXPECT_EQ(a, c);
  EXPECT_NE(a, b);
  EXPECT_TRUE(a < b);
  EXPECT_EQ(b.front(), 7);
  a.assign({5, 6});
  EXPECT_EQ(a, (tailor::list<int>{5, 6}));
  a.emplace_back(9);
  a.emplace_front(4);
  EXPECT_EQ(a, (tailor::list<int>{4, 5, 6, 9}));
  tailor::list<int> d(4);
  EXPECT_EQ(d, (tailor::list<int>{0, 0, 0, 0}));
  EXPECT_EQ(*std::prev(a.cend()), 9);
}

TEST(List, StableSortKeepsEqualElementsInOrder) {
  tailor::list<std::pair<int, int>> l;
  std::list<std::pair<int, int>> s;
  std::mt19937 rng(7);
  for (int i = 0; i < 5000; ++i) {
    std::pair<int, int> v{static_cast<int>(rng() % 20), i};
    l.push_back(v), s.push_back(v);
  }
  auto by_first = [](const auto& x, const auto& y) { return x.first < y.first; };
  l.sort(by_first), s.sort(by_first);
  EXPECT_TRUE(std::equal(l.begin(), l.end(), s.begin(), s.end()));
}

TEST(List, NeighboursShareAKClass) {
  locality_heap heap;
  tailor::list<int> l{tailor::allocator<int>(heap)};
  for (int i = 0; i < 1000; ++i) {
    l.push_back(i);
    l.push_front(-i);
  }
  std::size_t same = 0, pairs = 0;
  for (auto it = l.begin(), next = std::next(it); next != l.end(); ++it, ++next, ++pairs)
    same += heap.kclass_of(&*it) == heap.kclass_of(&*next);
  // 2000 nodes of 32 bytes fill about 16 pages: only the page changes break a pair.
  EXPECT_GE(same, pairs - 40);
}

TEST(List, CountsDynamism) {
  tailor::list<int, tailor::allocator<int>, tailor::count_dynamism> l;
  for (int i = 0; i < 10; ++i) l.push_back(i);  // 10 M
  long sum = 0;
  for (int x : l) sum += x;  // 10 steps: 10 NM
  EXPECT_EQ(sum, 45);
  l.sort();        // 1 M
  (void)l.front();  // 1 NM
  l.clear();        // 10 M
  const auto d = l.dynamism();
  EXPECT_EQ(d.modifying, 21u);
  EXPECT_EQ(d.non_modifying, 11u);
  EXPECT_NEAR(d.dynamism(), 100.0 * 21 / 32, 1e-9);
  tailor::list<int> off;
  off.push_back(1);
  EXPECT_EQ(off.dynamism().modifying, 0u);
  static_assert(sizeof(tailor::list<int>::iterator) == sizeof(void*));
}

TEST(List, WorksWithStdAllocator) {
  tailor::list<int, std::allocator<int>> l{1, 2, 3};
  l.push_front(0);
  EXPECT_EQ(l.size(), 4u);
}

}  // namespace
