// SPDX-License-Identifier: MIT
// calloc's zeroing of large blocks used before (calloc_zero.h): the backed
// pages only, or the whole, decided by how much of the blocks zeroed
// sparsely the program touched.
#include "alloc/calloc_zero.h"

#include <atomic>
#include <cstdint>
#include <cstring>

#include "alloc/os.h"

namespace tailor::alloc {

namespace {

// Pages of purged blocks seen at their free, and of those the resident
// ones; both halved when the first passes kDecayPages, so that the last
// few hundred MiB decide.
std::atomic<std::uint64_t> g_seen{0}, g_touched{0};
constexpr std::uint64_t kDecayPages = 1u << 16;
constexpr std::uint32_t kProbeEvery = 128, kProbeMax = 8192;
// Calls since the last probe, and the interval of the next: racy counts,
// a heuristic's (a lost update moves a probe by one call).
std::atomic<std::uint32_t> g_probe{0}, g_probe_every{kProbeEvery};

}  // namespace

bool zeroing_purge_pays() noexcept {
  const std::uint64_t seen = g_seen.load(std::memory_order_relaxed);
  if (g_touched.load(std::memory_order_relaxed) * 2 < seen || seen == 0) {
    g_probe_every.store(kProbeEvery, std::memory_order_relaxed);
    return true;
  }
  const std::uint32_t every = g_probe_every.load(std::memory_order_relaxed);
  if (g_probe.fetch_add(1, std::memory_order_relaxed) + 1 < every) return false;
  g_probe.store(0, std::memory_order_relaxed);
  g_probe_every.store(every < kProbeMax ? every * 2 : kProbeMax, std::memory_order_relaxed);
  return true;
}

void zeroing_observe(const void* start, std::size_t bytes) noexcept {
  const long resident = os::resident_pages(const_cast<void*>(start), bytes);
  if (resident < 0) return;
  const std::uint64_t pages = bytes / os::page_size();
  const std::uint64_t seen = g_seen.fetch_add(pages, std::memory_order_relaxed) + pages;
  const std::uint64_t touched = g_touched.fetch_add(static_cast<std::uint64_t>(resident), std::memory_order_relaxed);
  if (seen > kDecayPages) {
    g_seen.store(seen / 2, std::memory_order_relaxed);
    g_touched.store((touched + static_cast<std::uint64_t>(resident)) / 2, std::memory_order_relaxed);
  }
}

namespace {

// Makes [b, b + bytes) (page-aligned) read as zero without touching its
// holes: writes zeros over the pages that have memory behind them, or, with
// `may_purge`, gives back a stretch of which most pages have (the program
// leaves most of such blocks untouched: faulting a few in again costs less
// than writing all, and RSS drops). False if the OS cannot tell which pages
// are backed (a part may be zero already: the caller makes the whole so
// another way).
bool zero_sparsely(std::uint8_t* b, std::size_t bytes, bool may_purge) noexcept {
  constexpr std::size_t kPages = 1024;  // 4 MiB a map: a 32 MiB block in eight
  unsigned char backed[kPages];
  const std::size_t ps = os::page_size();
  for (std::size_t at = 0; at < bytes;) {
    const std::size_t n = (bytes - at) / ps < kPages ? (bytes - at) / ps : kPages;
    if (!os::backed_map(b + at, n * ps, backed)) return false;
    std::size_t count = 0;
    for (std::size_t i = 0; i < n; ++i) count += backed[i];
    if (may_purge && count * 2 > n && os::purge(b + at, n * ps)) {
      at += n * ps;
      continue;
    }
    for (std::size_t i = 0; i < n;) {
      if (!backed[i]) {
        TAILOR_ASSERT(*reinterpret_cast<const std::uint64_t*>(b + at + i * ps) == 0);  // a hole reads as zero
        ++i;
        continue;
      }
      std::size_t j = i + 1;
      while (j < n && backed[j]) ++j;
      std::memset(b + at + i * ps, 0, (j - i) * ps);
      i = j;
    }
    at += n * ps;
  }
  return true;
}

// Whether the count says sparse zeroing pays, without probing.
bool sparse_pays_now() noexcept {
  const std::uint64_t seen = g_seen.load(std::memory_order_relaxed);
  return seen != 0 && g_touched.load(std::memory_order_relaxed) * 2 < seen;
}

}  // namespace

void calloc_zero_large(Page* pg, std::size_t total) noexcept {
  std::uint8_t* b = pg->start;  // a large block starts its span: page-aligned
  const std::size_t ps = os::page_size();
  const std::size_t whole = total & ~(ps - 1);
  const bool big = total >= kCallocPurgeMin;
  if (big ? zeroing_purge_pays() : sparse_pays_now()) {
    if (zero_sparsely(b, whole, big) || (big && os::purge(b, whole))) {
      pg->zeroed_sparsely = 1;
      std::memset(b + whole, 0, total - whole);
      return;
    }
  }
  std::memset(b, 0, total);
}

void calloc_zero_huge(void* p, std::size_t total) noexcept {
  auto* b = static_cast<std::uint8_t*>(p);
  const std::size_t ps = os::page_size();
  const std::size_t whole = total & ~(ps - 1);
  if ((reinterpret_cast<std::uintptr_t>(b) & (ps - 1)) == 0 && zero_sparsely(b, whole, false)) {
    std::memset(b + whole, 0, total - whole);
    return;
  }
  std::memset(b, 0, total);
}

void calloc_observe(Page* pg) noexcept {
  pg->zeroed_sparsely = 0;
  zeroing_observe(pg->start, pg->block_size);
}

}  // namespace tailor::alloc
