// TAILOR_POOLS=1 (site_pool.cpp, docs/pools.md): of the call sites that
// keep one size, the first to be decided for each slot size keeps the
// heap's pages of that size, and the later ones get pools of their own if
// their requests interleave with another site's of the slot size.
// (TAILOR_POOLS=2, which pools every such site: pools_test.cpp.)
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "pool_sites.h"
#include "tailor/tailor.h"

namespace {

const bool kEnvironment = [] {
  setenv("TAILOR_CONFIG", "/dev/null", 1);
  setenv("TAILOR_POOLS", "1", 1);
  tailor_free(tailor_malloc(1));  // sets libtailor up before the tests' sites are seen
  return true;
}();

TAILOR_TEST_SITE(site_a, tailor_malloc(n))
TAILOR_TEST_SITE(site_b, tailor_malloc(n))
TAILOR_TEST_SITE(site_c, tailor_malloc(n))
TAILOR_TEST_SITE(site_d, tailor_malloc(n))
TAILOR_TEST_SITE(site_alone, tailor_malloc(n))
TAILOR_TEST_SITE(site_quiet_first, tailor_malloc(n))
TAILOR_TEST_SITE(site_quiet_later, tailor_malloc(n))
TAILOR_TEST_SITE(site_many, tailor_malloc(n))
TAILOR_TEST_SITE(site_few, tailor_malloc(n))
TAILOR_TEST_SITE(site_busy, tailor_malloc(n))
TAILOR_TEST_SITE(site_idle, tailor_malloc(n))

// Past the site's window: the slot size of a block it makes now; with
// `other`, each of the site's requests is followed by one of other's.
std::size_t slot_after_window(void* (*site)(std::size_t), std::size_t n, void* (*other)(std::size_t) = nullptr) {
  std::vector<void*> v, w;
  for (int i = 0; i <= kWindow; ++i) {
    v.push_back(site(n));
    if (other != nullptr) w.push_back(other(n));
  }
  const std::size_t slot = tailor_pool_slot_size(v.back());
  for (void* p : v) tailor_free(p);
  for (void* p : w) tailor_free(p);
  return slot;
}

TEST(PoolsSlotRule, FirstSiteOfASlotSizeKeepsTheHeapInterleavedLaterOnesArePooled) {
  ASSERT_EQ(stats().mode, 1);
  if (!sites_distinguished()) GTEST_SKIP() << "one call site for every request in this build";
  const std::size_t unpooled = stats().sites_unpooled, pooled = stats().sites_pooled;
  EXPECT_EQ(slot_after_window(&site_a, 24), 0u);                  // first of slot 32: the heap's
  EXPECT_EQ(slot_after_window(&site_b, 24, &site_a), 32u);  // second, between site_a's: a pool
  EXPECT_EQ(slot_after_window(&site_c, 20, &site_a), 32u);  // another size of slot 32: a pool too
  EXPECT_EQ(slot_after_window(&site_d, 200), 0u);                 // first of slot 208
  // A later site of slot 32 whose requests no other site's come between:
  // the heap's pages already keep its blocks together, in its order.
  EXPECT_EQ(slot_after_window(&site_alone, 24), 0u);
  EXPECT_EQ(stats().sites_unpooled, unpooled + 3);
  EXPECT_EQ(stats().sites_pooled, pooled + 2);
  // The first site stays with the heap after its window too.
  EXPECT_EQ(slot_after_window(&site_a, 24), 0u);
}

// A size whose requests all come from a site left to the heap leaves the
// routing after 4096 of them (quiet sizes, site_pool.cpp); a one-size site
// that starts at that size later is still seen, when one of its requests
// reaches the slow path, and pooled after its window.
TEST(PoolsSlotRule, ASiteThatStartsAfterItsSizeWentQuietIsStillPooled) {
  if (!sites_distinguished()) GTEST_SKIP() << "one call site for every request in this build";
  for (int round = 0; round < 4; ++round) {  // first of slot 560: the heap's; 4 x 4096 requests
    std::vector<void*> v;
    for (int i = 0; i < 4096; ++i) v.push_back(site_quiet_first(552));
    for (void* p : v) tailor_free(p);
  }
  std::vector<void*> later, first;
  // Live, so that the heap's free blocks of the size run out (a page is
  // carved a few blocks at a time): the first request of the later site
  // that reaches the slow path brings the size back to the routing, and
  // the monitor then sees every request (it would see only those reaching
  // the slow path, too few in 200, were the size left quiet), and the
  // first site's between them.
  for (int i = 0; i < 200; ++i) {
    later.push_back(site_quiet_later(552));
    first.push_back(site_quiet_first(552));
  }
  EXPECT_EQ(tailor_pool_slot_size(later.back()), 560u);
  for (void* p : later) tailor_free(p);
  for (void* p : first) tailor_free(p);
  EXPECT_EQ(slot_after_window(&site_quiet_first, 552), 0u);  // still the heap's
}

// A size whose pools serve fewer than one request in 64 goes quiet too,
// pooled site included; when that site's requests grow, one of them that
// reaches the slow path, or the heap's next re-routing of its quiet sizes
// (every 262,144 own frees), brings the size back, and its blocks are
// pooled again.
TEST(PoolsSlotRule, ARarePooledSiteLosesTheRoutingAndGetsItBackWhenItGrows) {
  if (!sites_distinguished()) GTEST_SKIP() << "one call site for every request in this build";
  EXPECT_EQ(slot_after_window(&site_many, 392), 0u);  // first of slot 400: the heap's
  EXPECT_EQ(slot_after_window(&site_few, 392, &site_many), 400u);  // second: a pool
  std::vector<void*> kept;
  for (int round = 0; round < 20; ++round) {  // 1 pooled request in 1000
    std::vector<void*> v;
    for (int i = 0; i < 1000; ++i) v.push_back(site_many(392));
    for (void* p : v) tailor_free(p);
    tailor_free(site_many(392));  // takes the freed blocks back onto the page's list (the slow path)
    kept.push_back(site_few(392));
  }
  // Quiet: after the first rounds, the rare site's requests took the heap's
  // fast path (until the quiet sizes came back to the routing).
  int quiet = 0;
  for (void* p : kept) quiet += tailor_pool_slot_size(p) == 0;
  EXPECT_GE(quiet, 5);
  // The rare site grows: more live blocks than the heap has free ones of
  // the size (site_many's 1,000), so one of its requests reaches the slow
  // path.
  std::vector<void*> burst;
  for (int i = 0; i < 3000; ++i) burst.push_back(site_few(392));
  EXPECT_EQ(tailor_pool_slot_size(burst.back()), 400u);
  for (void* p : burst) tailor_free(p);
  for (void* p : kept) tailor_free(p);
}

// A size whose pools serve no request and whose monitors see none during
// 64 routed requests leaves the routing then, not after 4096: a program
// that pools nothing of a size pays the routing for a few requests of it.
TEST(PoolsSlotRule, ASizeNoPoolServesLeavesTheRoutingAfter64Requests) {
  if (!sites_distinguished()) GTEST_SKIP() << "one call site for every request in this build";
  EXPECT_EQ(slot_after_window(&site_busy, 600), 0u);                 // first of slot 608: the heap's
  EXPECT_EQ(slot_after_window(&site_idle, 600, &site_busy), 608u);  // second: a pool
  std::vector<void*> v;
  for (int i = 0; i < 200; ++i) v.push_back(site_idle(600));  // enough for the size to stay routed at 4096
  // site_busy alone, past that judgement at 4096 requests of the size,
  // then 256 more, freed at once, so the heap's page has free blocks of
  // the size.
  for (int i = 0; i < 4096 + 256; ++i) tailor_free(site_busy(600));
  for (void* q : v) tailor_free(q);
  // Quiet: site_idle's next request takes the heap's fast path.
  void* p = site_idle(600);
  EXPECT_EQ(tailor_pool_slot_size(p), 0u);
  tailor_free(p);
}

}  // namespace
