// SPDX-License-Identifier: MIT
// tailor::set and tailor::map against std::set and std::map on random
// sequences of operations (insert, emplace, erase by key and by iterator,
// find, count, lower_bound, upper_bound, equal_range, iteration both ways,
// copy, move, swap), with the red-black invariants checked as it goes; plus
// the path the tree gives its allocator and its dynamism.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <string>

#include "locality/same_elements.h"
#include "tailor/map.h"
#include "tailor/set.h"

namespace {

using tailor::locality_heap;

template <class A, class B>
void expect_same(const A& mine, const B& theirs, int step) {
  ASSERT_TRUE(mine.is_valid()) << "step " << step;
  tailor::test::expect_same_elements(mine, theirs, step);
}

template <class P>
void random_set_ops(unsigned seed, unsigned k) {
  locality_heap heap{{k, false}};
  using S = tailor::set<int, std::less<int>, tailor::allocator<int, P>>;
  S a{tailor::allocator<int, P>(heap)};
  std::set<int> b;
  std::mt19937 rng(seed);
  for (int step = 0; step < 20000; ++step) {
    const int key = static_cast<int>(rng() % 2000);
    switch (rng() % 10) {
      case 0:
      case 1:
      case 2: {
        auto ra = a.insert(key);
        auto rb = b.insert(key);
        ASSERT_EQ(ra.second, rb.second);
        ASSERT_EQ(*ra.first, *rb.first);
        break;
      }
      case 3:
        ASSERT_EQ(a.emplace(key).second, b.emplace(key).second);
        break;
      case 4:
        ASSERT_EQ(a.erase(key), b.erase(key));
        break;
      case 5: {
        auto ia = a.lower_bound(key);
        auto ib = b.lower_bound(key);
        ASSERT_EQ(ia == a.end(), ib == b.end());
        if (ia != a.end()) {
          ASSERT_EQ(*ia, *ib);
          auto na = a.erase(ia);
          auto nb = b.erase(ib);
          ASSERT_EQ(na == a.end(), nb == b.end());
          if (na != a.end()) {
            ASSERT_EQ(*na, *nb);
          }
        }
        break;
      }
      case 6: {
        ASSERT_EQ(a.count(key), b.count(key));
        ASSERT_EQ(a.contains(key), b.contains(key));
        ASSERT_EQ(a.find(key) == a.end(), b.find(key) == b.end());
        break;
      }
      case 7: {
        auto ua = a.upper_bound(key);
        auto ub = b.upper_bound(key);
        ASSERT_EQ(ua == a.end(), ub == b.end());
        if (ua != a.end()) {
          ASSERT_EQ(*ua, *ub);
        }
        auto ea = a.equal_range(key);
        auto eb = b.equal_range(key);
        ASSERT_EQ(std::distance(ea.first, ea.second), std::distance(eb.first, eb.second));
        break;
      }
      case 8: {
        if (step % 50 == 0) {
          S copy(a);
          expect_same(copy, b, step);
          S moved(std::move(copy));
          S other{tailor::allocator<int, P>(heap)};
          other.insert(-1);
          other.swap(moved);
          a = other;
          S assigned{tailor::allocator<int, P>(heap)};
          assigned = std::move(other);
          expect_same(assigned, b, step);
        }
        break;
      }
      case 9: {
        if (!a.empty() && rng() % 100 == 0) {
          auto first = a.lower_bound(key);
          auto bfirst = b.lower_bound(key);
          a.erase(first, a.end());
          b.erase(bfirst, b.end());
        }
        break;
      }
    }
    if (step % 97 == 0) expect_same(a, b, step);
  }
  expect_same(a, b, -1);
  a.clear();
  EXPECT_TRUE(a.empty());
  EXPECT_TRUE(heap.index_is_valid(S::node_bytes));
}

TEST(Set, RandomOperationsMatchStdSetPath) { random_set_ops<tailor::locality::Path>(1, 52); }
TEST(Set, RandomOperationsMatchStdSetMatch) { random_set_ops<tailor::locality::Match>(2, 56); }
TEST(Set, RandomOperationsMatchStdSetFirst) { random_set_ops<tailor::locality::First>(3, 44); }

TEST(Map, RandomOperationsMatchStdMap) {
  locality_heap heap;
  using A = tailor::allocator<std::pair<const int, std::string>, tailor::locality::Path>;
  tailor::map<int, std::string, std::less<int>, A> a{A(heap)};
  std::map<int, std::string> b;
  std::mt19937 rng(11);
  for (int step = 0; step < 20000; ++step) {
    const int key = static_cast<int>(rng() % 1000);
    const std::string v = std::to_string(rng() % 100);
    switch (rng() % 8) {
      case 0:
        a[key] += v, b[key] += v;
        break;
      case 1:
        ASSERT_EQ(a.try_emplace(key, v).second, b.try_emplace(key, v).second);
        break;
      case 2:
        ASSERT_EQ(a.insert_or_assign(key, v).second, b.insert_or_assign(key, v).second);
        break;
      case 3:
        ASSERT_EQ(a.insert({key, v}).second, b.insert({key, v}).second);
        break;
      case 4:
        ASSERT_EQ(a.erase(key), b.erase(key));
        break;
      case 5:
        if (b.count(key)) {
          ASSERT_EQ(a.at(key), b.at(key));
        } else {
          ASSERT_THROW((void)a.at(key), std::out_of_range);
        }
        break;
      case 6: {
        auto it = a.find(key);
        if (it != a.end()) {
          it->second = v;
          b[key] = v;
          a.erase(it);
          b.erase(key);
        }
        break;
      }
      case 7:
        ASSERT_EQ(a.emplace(key, v).second, b.emplace(key, v).second);
        break;
    }
    if (step % 101 == 0) expect_same(a, b, step);
  }
  expect_same(a, b, -1);
}

/// Fraction of neighbours in key order whose nodes sit within 4 K-classes of
/// each other, for random keys inserted into a heap full of holes.
template <class P>
double close_neighbours() {
  locality_heap heap;
  using A = tailor::allocator<int, P>;
  using S = tailor::set<int, std::less<int>, A>;
  std::vector<void*> warm;
  for (int i = 0; i < 30000; ++i) warm.push_back(heap.allocate(S::node_bytes));
  std::mt19937 rng(5);
  for (std::size_t i = 0; i < warm.size(); ++i)
    if (rng() % 2) heap.deallocate(std::exchange(warm[i], nullptr));
  std::size_t close = 0, pairs = 0;
  {
    S s{A(heap)};
    for (int i = 0; i < 10000; ++i) s.insert(static_cast<int>(rng() % 1000000));
    for (auto it = s.begin(), next = std::next(it); next != s.end(); ++it, ++next, ++pairs) {
      const auto x = heap.kclass_of(&*it), y = heap.kclass_of(&*next);
      close += (x > y ? x - y : y - x) <= 4;
    }
  }
  for (void* p : warm) heap.deallocate(p);
  return static_cast<double>(close) / static_cast<double>(pairs);
}

TEST(Set, PathPutsCloseKeysInCloseClasses) {
  // About 15000 free 32-byte chunks (a node's) over some 240 K-classes.
  const double path = close_neighbours<tailor::locality::Path>();
  const double first = close_neighbours<tailor::locality::First>();
  std::printf("close neighbours: Path %.3f, First %.3f\n", path, first);
  // Measured 0.21 against 0.06: a path locates a key only to a few percent
  // of the range (docs/locality.md), but a placement blind to keys stays
  // far below.
  EXPECT_GT(path, 2 * first);
}

TEST(Set, InitializerListsAndComparisons) {
  tailor::set<int> a{3, 1, 2, 3};
  EXPECT_EQ(a.size(), 3u);
  EXPECT_EQ(*a.begin(), 1);
  tailor::set<int> b{1, 2, 4};
  EXPECT_TRUE(a < b);
  EXPECT_NE(a, b);
  tailor::map<std::string, int> m{{"b", 2}, {"a", 1}};
  EXPECT_EQ(m.begin()->first, "a");
  EXPECT_EQ(m["b"], 2);
}

TEST(Set, CountsDynamism) {
  tailor::set<int, std::less<int>, tailor::allocator<int, tailor::locality::Path>, tailor::count_dynamism> s;
  for (int i = 0; i < 8; ++i) s.insert(i);  // 8 M
  for (int i = 0; i < 4; ++i) (void)s.find(i);  // 4 NM
  int n = 0;
  for (int x : s) n += x >= 0;  // 8 NM
  s.erase(3);                  // 1 NM (the find) + 1 M
  const auto d = s.dynamism();
  EXPECT_EQ(d.modifying, 9u);
  EXPECT_EQ(d.non_modifying, 13u);
  EXPECT_EQ(n, 8);
}

TEST(Set, WorksWithStdAllocator) {
  tailor::set<int, std::less<int>, std::allocator<int>> s{5, 4};
  EXPECT_EQ(*s.begin(), 4);
}

}  // namespace
