// SPDX-License-Identifier: MIT
// The core through its non-interposing API (tailor_malloc and friends), so
// that it also runs under ASan/UBSan/TSan: many sizes and alignments, block
// contents kept by realloc, calloc zeroing and overflow, usable size, errno.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "tailor/tailor.h"

namespace {

std::vector<std::size_t> sizes() {
  std::vector<std::size_t> out;
  for (std::size_t s = 0; s <= 2048; ++s) out.push_back(s);
  for (std::size_t s = 2048; s < (std::size_t{64} << 20); s = s * 5 / 4 + 3) out.push_back(s);
  out.push_back(std::size_t{40} << 20);  // huge (above LARGE_MAX)
  return out;
}

// A pattern of seed and position, the same bytes whatever the length:
// written and read a word at a time (one access each under the sanitizers,
// which made byte loops over 48 MiB take seconds), the last n % 8 bytes one
// by one.
std::uint64_t pattern_word(std::size_t i, unsigned seed) { return (seed + i) * 0x9e3779b97f4a7c15u; }  // i % 8 == 0
unsigned char pattern_byte(std::size_t i, unsigned seed) {
  return static_cast<unsigned char>(pattern_word(i & ~std::size_t{7}, seed) >> (8 * (i & 7)));  // little-endian
}
void fill(void* p, std::size_t n, unsigned seed) {
  auto* b = static_cast<unsigned char*>(p);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const std::uint64_t w = pattern_word(i, seed);
    std::memcpy(b + i, &w, 8);
  }
  for (; i < n; ++i) b[i] = pattern_byte(i, seed);
}
bool check(const void* p, std::size_t n, unsigned seed) {
  auto* b = static_cast<const unsigned char*>(p);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, b + i, 8);
    if (w != pattern_word(i, seed)) return false;
  }
  for (; i < n; ++i)
    if (b[i] != pattern_byte(i, seed)) return false;
  return true;
}

TEST(CoreApi, MallocManySizes) {
  std::vector<void*> live;
  std::vector<std::size_t> sz = sizes();
  for (std::size_t s : sz) {
    void* p = tailor_malloc(s);
    ASSERT_NE(p, nullptr) << s;
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % (s <= 8 ? 8 : 16), 0u) << s;
    EXPECT_GE(tailor_usable_size(p), s) << s;
    fill(p, s < 4096 ? s : 4096, static_cast<unsigned>(s));
    live.push_back(p);
  }
  for (std::size_t i = 0; i < live.size(); ++i) {
    std::size_t s = sz[i];
    EXPECT_TRUE(check(live[i], s < 4096 ? s : 4096, static_cast<unsigned>(s))) << s;
    tailor_free(live[i]);
  }
  tailor_free(nullptr);
}

TEST(CoreApi, DistinctLiveBlocks) {
  std::vector<char*> v;
  for (int i = 0; i < 100000; ++i) {
    auto* p = static_cast<char*>(tailor_malloc(static_cast<std::size_t>(i % 200)));
    ASSERT_NE(p, nullptr);
    if (i % 200 >= 4) std::memcpy(p, &i, 4);
    v.push_back(p);
  }
  for (int i = 0; i < 100000; ++i) {
    if (i % 200 >= 4) {
      int got;
      std::memcpy(&got, v[static_cast<std::size_t>(i)], 4);
      ASSERT_EQ(got, i);
    }
    tailor_free(v[static_cast<std::size_t>(i)]);
  }
}

TEST(CoreApi, AlignedAlloc) {
  for (std::size_t a = 1; a <= (std::size_t{64} << 20); a *= 2) {
    for (std::size_t s : {std::size_t{0}, std::size_t{1}, a / 2, a, a + 1, 3 * a, std::size_t{100000}}) {
      if (a >= (std::size_t{16} << 20) && s > a) continue;
      void* p = tailor_aligned_alloc(a, s);
      ASSERT_NE(p, nullptr) << a << " " << s;
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % a, 0u) << a << " " << s;
      EXPECT_GE(tailor_usable_size(p), s);
      std::memset(p, 0xab, s);
      tailor_free(p);
    }
  }
  errno = 0;
  EXPECT_EQ(tailor_aligned_alloc(24, 100), nullptr);
  EXPECT_EQ(errno, EINVAL);
}

TEST(CoreApi, ReallocKeepsContents) {
  unsigned seed = 7;
  void* p = tailor_realloc(nullptr, 1);
  ASSERT_NE(p, nullptr);
  std::size_t n = 1;
  fill(p, n, seed);
  // Grow through every range, then shrink back.
  std::vector<std::size_t> steps;
  for (std::size_t s = 2; s < (std::size_t{48} << 20); s = s * 3 / 2 + 1) steps.push_back(s);
  for (std::size_t s : steps) {
    p = tailor_realloc(p, s);
    ASSERT_NE(p, nullptr);
    ASSERT_TRUE(check(p, n, seed)) << n << " -> " << s;
    ++seed;
    fill(p, s, seed);
    n = s;
  }
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
    p = tailor_realloc(p, *it);
    ASSERT_NE(p, nullptr);
    ASSERT_TRUE(check(p, *it, seed)) << *it;
  }
  EXPECT_EQ(tailor_realloc(p, 0), nullptr);  // frees, like glibc
}

TEST(CoreApi, ReallocGrowsLargeInPlace) {
  void* p = tailor_malloc(300000);
  void* q = tailor_realloc(p, 600000);  // the span after it is free in a fresh region
  EXPECT_GE(tailor_usable_size(q), 600000u);
  tailor_free(q);
}

TEST(CoreApi, CallocZeroesAndChecksOverflow) {
  for (std::size_t s : sizes()) {
    // Dirty memory first, so that zeroing is really tested on reused blocks.
    void* d = tailor_malloc(s);
    ASSERT_NE(d, nullptr);
    std::memset(d, 0xff, s);
    tailor_free(d);
    auto* p = static_cast<unsigned char*>(tailor_calloc(1, s));
    ASSERT_NE(p, nullptr);
    for (std::size_t i = 0; i < s; i += (s > 100000 ? 4093 : 1)) ASSERT_EQ(p[i], 0) << s << " at " << i;
    tailor_free(p);
  }
  errno = 0;
  EXPECT_EQ(tailor_calloc(SIZE_MAX / 2, 3), nullptr);
  EXPECT_EQ(errno, ENOMEM);
}

TEST(CoreApi, ExhaustionSetsEnomem) {
  errno = 0;
  EXPECT_EQ(tailor_malloc(SIZE_MAX - 4096), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(tailor_malloc(std::size_t{1} << 62), nullptr);
  EXPECT_EQ(errno, ENOMEM);
}

TEST(CoreApi, FreePreservesErrno) {
  std::vector<void*> v;
  for (std::size_t s = 1; s < (std::size_t{64} << 20); s *= 3) v.push_back(tailor_malloc(s));
  for (void* p : v) {
    errno = 12345;
    tailor_free(p);
    EXPECT_EQ(errno, 12345);
  }
  errno = 0;
}

// The structs libtailor fills are filled by the caller's size (tailor.h,
// top): a caller built against an older header (a shorter struct) gets its
// fields and nothing written past them; one built against a newer header
// (a longer struct) gets zeros past the fields this library knows.
TEST(CoreApi, StructsAreFilledByTheCallersSize) {
  void* keep = tailor_malloc(1000);
  ASSERT_NE(keep, nullptr);
  constexpr std::size_t kOlder = offsetof(tailor_stats, heaps_created);
  constexpr std::size_t kExtra = 24;
  // (Under TAILOR_DMM the DMM serves the block and no segment is mapped:
  // the fields are compared with a whole struct's, not with 0.)
  tailor_stats whole;
  tailor_get_stats(&whole);
  unsigned char buf[sizeof(tailor_stats) + kExtra];
  std::memset(buf, 0xab, sizeof buf);
  tailor_get_stats_sized(reinterpret_cast<tailor_stats*>(buf), kOlder);
  tailor_stats older;
  std::memcpy(&older, buf, sizeof older);
  EXPECT_EQ(older.segments_mapped, whole.segments_mapped);
  EXPECT_EQ(older.bytes_mapped, whole.bytes_mapped);
  for (std::size_t i = kOlder; i < sizeof buf; ++i) ASSERT_EQ(buf[i], 0xab) << "byte " << i << " past the caller's struct";

  std::memset(buf, 0xab, sizeof buf);
  tailor_get_stats_sized(reinterpret_cast<tailor_stats*>(buf), sizeof buf);
  std::memcpy(&older, buf, sizeof older);
  EXPECT_EQ(older.bytes_mapped, whole.bytes_mapped);
  EXPECT_EQ(older.heaps_created, whole.heaps_created);
  for (std::size_t i = sizeof(tailor_stats); i < sizeof buf; ++i) ASSERT_EQ(buf[i], 0) << "byte " << i << " this library lacks";

  tailor_secure_stats sec;
  std::memset(&sec, 0xab, sizeof sec);
  tailor_secure_get_stats_sized(&sec, offsetof(tailor_secure_stats, quarantined));
  tailor_secure_stats full;
  tailor_secure_get_stats(&full);
  EXPECT_EQ(sec.active, full.active);
  EXPECT_EQ(sec.quarantined, 0xababababababababu) << "a field past the caller's size was written";

  // Entries of another size: each at its stride, filled up to that size.
  const std::size_t count = tailor_config(nullptr, 0);
  ASSERT_GT(count, 0u);
  constexpr std::size_t kStride = sizeof(tailor_config_entry) + 16;
  std::vector<unsigned char> entries(count * kStride, 0xab);
  ASSERT_EQ(tailor_config_sized(reinterpret_cast<tailor_config_entry*>(entries.data()), count, kStride), count);
  std::vector<tailor_config_entry> plain(count);
  tailor_config(plain.data(), count);
  for (std::size_t i = 0; i < count; ++i) {
    tailor_config_entry e;
    std::memcpy(&e, entries.data() + i * kStride, sizeof e);
    EXPECT_STREQ(e.name, plain[i].name);
    EXPECT_EQ(e.value, plain[i].value);
    for (std::size_t b = sizeof(tailor_config_entry); b < kStride; ++b) ASSERT_EQ(entries[i * kStride + b], 0);
  }
  tailor_free(keep);
}

}  // namespace
