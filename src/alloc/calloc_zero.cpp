// SPDX-License-Identifier: MIT
// calloc's zeroing of large blocks used before (calloc_zero.h): purge or
// write, decided by how much of the purged blocks the program touched.
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

void calloc_zero_large(Page* pg, std::size_t total) noexcept {
  std::uint8_t* b = pg->start;  // a large block starts its span: page-aligned
  const std::size_t ps = os::page_size();
  const std::size_t whole = total & ~(ps - 1);
  if (zeroing_purge_pays() && os::purge(b, whole)) {
    pg->zeroed_by_purge = 1;
    std::memset(b + whole, 0, total - whole);
    return;
  }
  std::memset(b, 0, total);
}

void calloc_observe(Page* pg) noexcept {
  pg->zeroed_by_purge = 0;
  zeroing_observe(pg->start, pg->block_size);
}

}  // namespace tailor::alloc
