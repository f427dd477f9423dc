// Call-site pools (site_pool.cpp, docs/pools.md) under the default
// PURGE_DELAY: a pool keeps its emptied pages for that long and lays a
// structure built again on them in the same order, without new page
// faults; afterwards it gives them back. (pools_test.cpp runs with
// PURGE_DELAY=0, where a pool keeps one.)
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "pool_sites.h"
#include "tailor/tailor.h"

namespace {

const bool kEnvironment = [] {
  setenv("TAILOR_CONFIG", "/dev/null", 1);
  setenv("TAILOR_POOLS", "2", 1);  // every one-size site: one site makes a pool
  setenv("TAILOR_PURGE_DELAY", "200", 1);
  tailor_free(tailor_malloc(1));  // sets libtailor up before the tests' sites are seen
  return true;
}();

TAILOR_TEST_SITE(site_node, tailor_malloc(n))
TAILOR_TEST_SITE(site_other, tailor_malloc(n))

long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

// 200 000 nodes of 48 bytes: 9.2 MiB, on pages of 64 KiB, 128 KiB, ... 8
// MiB, the last one touched only in part.
constexpr int kNodes = 200000;
constexpr std::size_t kNode = 48;

// The site's monitor window, so that every node of a build is pooled.
void warm() {
  std::vector<void*> v(kWindow);
  for (void*& p : v) p = site_node(kNode);
  for (void* p : v) tailor_free(p);
}

void build(std::vector<void*>& v) {
  for (int i = 0; i < kNodes; ++i) {
    v[i] = site_node(kNode);
    std::memset(v[i], 0x3c, kNode);
  }
}

TEST(PoolsReuse, AStructureBuiltAgainLandsOnTheSameMemoryWithoutNewFaults) {
  std::vector<void*> first(kNodes), second(kNodes);  // touched before the counts
  std::memset(first.data(), 0, kNodes * sizeof(void*));
  std::memset(second.data(), 0, kNodes * sizeof(void*));
  warm();
  build(first);
  ASSERT_NE(tailor_pool_slot_size(first.front()), 0u) << "the site was not pooled";
  ASSERT_NE(tailor_pool_slot_size(first.back()), 0u) << "the site was not pooled";
  EXPECT_GE(stats().largest_area, std::size_t{4} << 20);
  for (void* p : first) tailor_free(p);
  const long before = minor_faults();
  build(second);
  const long faults = minor_faults() - before;
  // The same pages, carved again in the order they were first: the
  // largest page's untouched tail stays untouched.
  EXPECT_LT(faults, 64) << "a rebuild faulted in " << faults << " pages";
  EXPECT_EQ(second.front(), first.front());
  int same = 0;
  for (int i = 0; i < kNodes; ++i) same += first[i] == second[i];
  EXPECT_EQ(same, kNodes);
  for (void* p : second) tailor_free(p);
}

TEST(PoolsReuse, KeptPagesGoBackAfterThePurgeDelay) {
  // site_other must not be site_node's own site (under the sanitizers
  // every request has one return address).
  if (!sites_distinguished()) GTEST_SKIP() << "one call site for every request in this build";
  std::vector<void*> v(kNodes);
  build(v);
  ASSERT_NE(tailor_pool_slot_size(v.back()), 0u) << "the site was not pooled";
  for (void* p : v) tailor_free(p);
  const tailor_pools_stats kept = stats();
  EXPECT_GE(kept.area_bytes, std::size_t{8} << 20);  // kept for the next growth
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // The owner's frees beat the heap's heartbeat, which gives them back.
  for (int i = 0; i < 4096; ++i) tailor_free(site_other(200));
  const tailor_pools_stats after = stats();
  EXPECT_GT(after.areas_released, kept.areas_released);
  EXPECT_LT(after.area_bytes, std::size_t{1} << 20) << "kept: " << kept.area_bytes;
}

}  // namespace
