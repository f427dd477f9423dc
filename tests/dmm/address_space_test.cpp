// SPDX-License-Identifier: MIT
// dmm::AddressSpace against a plain model: random obtain / release
// sequences; after every step the held ranges never overlap, each is
// aligned as asked, os_bytes() is the bytes of the pages some held range
// touches, and the pages a release hands back are touched by no held range.
// Plus the sbrk-like cases worked out by hand.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <new>
#include <random>

#include "dmm/address_space.h"

namespace {

using tailor::dmm::Address;

struct Heap {
  static void* allocate(std::size_t bytes) { return ::operator new(bytes); }
  static void release(void* p, std::size_t bytes) { ::operator delete(p, bytes); }
};
using Space = tailor::dmm::AddressSpace<Heap>;

constexpr Address kBase = Address{1} << 32;
constexpr std::uint64_t kPage = 4096;

TEST(AddressSpace, ConsecutiveRequestsAreContiguousLikeSbrk) {
  Space s(kBase, std::uint64_t{1} << 30, kPage);
  EXPECT_EQ(s.obtain(kPage - 8, 8), kBase);
  EXPECT_EQ(s.obtain(4096, 8), kBase + kPage - 8);
  EXPECT_EQ(s.os_bytes(), 2 * kPage);
  // An alignment skips a gap, which becomes a hole that a later request fits.
  EXPECT_EQ(s.obtain(100, 4096), kBase + 2 * kPage);
  EXPECT_EQ(s.holes(), 1u);
  EXPECT_EQ(s.obtain(16, 16), kBase + 2 * kPage + 112);  // the 8-byte hole [kBase + 8184, + 8) is too small
  EXPECT_EQ(s.obtain(8, 8), kBase + 2 * kPage - 8);      // this one fits it exactly
  EXPECT_EQ(s.holes(), 1u);  // the 8-byte hole is gone; the 16-alignment left a gap of 12 bytes
}

TEST(AddressSpace, ReleaseAtTheBreakLowersIt) {
  Space s(kBase, std::uint64_t{1} << 30, kPage);
  const Address a = s.obtain(3 * kPage, kPage);
  const Address b = s.obtain(2 * kPage, kPage);
  EXPECT_EQ(s.os_bytes(), 5 * kPage);
  const auto back = s.release(b, 2 * kPage);
  EXPECT_EQ(back.start, b);
  EXPECT_EQ(back.end, b + 2 * kPage);
  EXPECT_EQ(s.bump(), b);
  EXPECT_EQ(s.os_bytes(), 3 * kPage);
  EXPECT_EQ(s.obtain(kPage, kPage), b);  // reused
  s.release(a, 3 * kPage);              // a hole below a held range
  EXPECT_EQ(s.holes(), 1u);
  EXPECT_EQ(s.os_bytes(), kPage);
  EXPECT_EQ(s.obtain(kPage, kPage), a);  // first fit by address
}

TEST(AddressSpace, MatchesAModelOnRandomSequences) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE(seed);
    std::mt19937_64 rng(seed);
    Space s(kBase, std::uint64_t{1} << 36, kPage);
    std::map<Address, std::uint64_t> held;  // start -> bytes
    // The model: how many held ranges touch each page. The space must hold
    // from the OS exactly the pages that some held range touches.
    std::map<Address, unsigned> touching;
    const auto each_page = [](Address start, std::uint64_t bytes, auto&& f) {
      for (Address p = start & ~(kPage - 1); p < start + bytes; p += kPage) f(p);
    };
    for (int op = 0; op < 3000; ++op) {
      if (held.empty() || rng() % 100 < 55) {
        const std::uint64_t bytes = rng() % 4 == 0 ? 1 + rng() % (64 * kPage) : 8 * (1 + rng() % 600);
        const std::uint64_t align = std::uint64_t{8} << (rng() % 10);
        const Address a = s.obtain(bytes, align);
        ASSERT_NE(a, 0u);
        ASSERT_EQ(a % align, 0u);
        auto next = held.lower_bound(a);
        if (next != held.end()) {
          ASSERT_LE(a + bytes, next->first) << "overlaps the next range";
        }
        if (next != held.begin()) {
          ASSERT_LE(std::prev(next)->first + std::prev(next)->second, a) << "overlaps the previous range";
        }
        held[a] = bytes;
        each_page(a, bytes, [&](Address p) { ++touching[p]; });
      } else {
        auto it = held.begin();
        std::advance(it, static_cast<long>(rng() % held.size()));
        const Address a = it->first;
        const std::uint64_t bytes = it->second;
        held.erase(it);
        each_page(a, bytes, [&](Address p) {
          if (--touching[p] == 0) touching.erase(p);
        });
        const auto back = s.release(a, bytes);
        for (Address p = back.start; p < back.end; p += kPage) {
          ASSERT_EQ(touching.count(p), 0u) << "a held page went back";
        }
      }
      ASSERT_EQ(s.os_bytes(), touching.size() * kPage) << "after operation " << op;
    }
  }
}

}  // namespace
