// SPDX-License-Identifier: MIT
// The cache of freed huge mappings (huge_cache.h): a few slots of one word
// each, taken and filled with compare-and-swap, a byte budget, and a
// deadline that tells the back end when something is due to be unmapped.
#include "alloc/huge_cache.h"

#include <atomic>
#include <cstdint>

#include "alloc/misuse.h"
#include "alloc/os.h"

namespace tailor::alloc {

namespace {

constexpr int kSlots = 16;
constexpr unsigned kUnitShift = 12;  // sizes are kept in 4 KiB units
constexpr std::uint64_t kNever = UINT64_MAX;

// address | (size >> kUnitShift); 0 = empty. The address is aligned to
// SEGMENT_SIZE (at least 1 MiB), the size at most SEGMENT_SIZE units.
std::atomic<std::uintptr_t> g_slot[kSlots];
std::atomic<std::size_t> g_bytes{0};
std::atomic<std::uint64_t> g_next_due{kNever};  // earliest idle_until in the cache

std::uintptr_t low_mask() { return g_config.segment_size - 1; }
Segment* address_of(std::uintptr_t v) { return reinterpret_cast<Segment*>(v & ~low_mask()); }
std::size_t size_of(std::uintptr_t v) { return (v & low_mask()) << kUnitShift; }

void lower_due(std::uint64_t at) {
  std::uint64_t cur = g_next_due.load(std::memory_order_relaxed);
  while (at < cur && !g_next_due.compare_exchange_weak(cur, at, std::memory_order_relaxed)) {
  }
}

// Puts an owned entry into an empty slot; false if every slot is taken.
bool fill_slot(std::uintptr_t v) {
  for (auto& slot : g_slot) {
    std::uintptr_t empty = 0;
    if (slot.load(std::memory_order_relaxed) == 0 &&
        slot.compare_exchange_strong(empty, v, std::memory_order_release, std::memory_order_relaxed))
      return true;
  }
  return false;
}

}  // namespace

Segment* huge_cache_take(std::size_t total) noexcept {
  if (g_bytes.load(std::memory_order_relaxed) == 0) return nullptr;
  for (int attempt = 0; attempt < 4; ++attempt) {
    // Best fit among those large enough; failing that, the largest, grown.
    int pick = -1;
    std::uintptr_t seen = 0;
    bool fits = false;
    for (int i = 0; i < kSlots; ++i) {
      const std::uintptr_t v = g_slot[i].load(std::memory_order_acquire);
      if (v == 0) continue;
      const std::size_t size = size_of(v);
      const bool f = size >= total;
      if (pick < 0 || (f && (!fits || size < size_of(seen))) || (!f && !fits && size > size_of(seen))) {
        pick = i;
        seen = v;
        fits = f;
      }
    }
    if (pick < 0) return nullptr;
    if (!g_slot[pick].compare_exchange_strong(seen, 0, std::memory_order_acquire, std::memory_order_relaxed))
      continue;  // another thread took it or changed the slot
    Segment* seg = address_of(seen);
    std::size_t size = size_of(seen);
    g_bytes.fetch_sub(size, std::memory_order_relaxed);
    if (size > total && size - total > total / 4) {  // too much slack: give the tail back
      os::shrink(seg, size, total);
      g_os_counters.bytes_mapped.fetch_sub(size - total, std::memory_order_relaxed);
      size = total;
    } else if (size < total) {  // too small: grow it, moving its pages if it must
      // Out of the registry while mremap may move it: once the kernel has
      // released the old range another thread may map and register a segment
      // there, and unregistering after the move would erase that one (misuse.h).
      segment_unregister(seg);
      void* q = os::remap(seg, size, total, g_config.segment_size);
      if (q == nullptr) {
        huge_unmap(seg, size);
        return nullptr;
      }
      segment_register(q, kTagNone);
      seg = static_cast<Segment*>(q);
      g_os_counters.bytes_mapped.fetch_add(total - size, std::memory_order_relaxed);
      size = total;
    }
    seg->size = size;
    return seg;
  }
  return nullptr;
}

bool huge_cache_put(Segment* seg) noexcept {
  // HUGE_CACHE, or a quarter of the huge bytes in use if that is more: a
  // program whose huge blocks are many and large turns them over in larger
  // numbers (glibc likewise keeps more top memory as its mmap threshold rises).
  const std::size_t live = g_os_counters.bytes_mapped.load(std::memory_order_relaxed) / 4;
  const std::size_t cap = g_config.huge_cache_bytes == 0 ? 0 : (live > g_config.huge_cache_bytes ? live : g_config.huge_cache_bytes);
  const std::int64_t delay = g_config.purge_delay_ms;
  const std::size_t size = seg->size;
  if (cap == 0 || delay == 0 || (size >> kUnitShift) > low_mask() || (size & ((1u << kUnitShift) - 1)) != 0)
    return false;
  if (g_bytes.fetch_add(size, std::memory_order_relaxed) + size > cap) {
    g_bytes.fetch_sub(size, std::memory_order_relaxed);
    return false;
  }
  seg->idle_until = delay < 0 ? kNever : os::now_ms() + static_cast<std::uint64_t>(delay);
  const std::uint64_t due = seg->idle_until;
  if (!fill_slot(reinterpret_cast<std::uintptr_t>(seg) | (size >> kUnitShift))) {
    g_bytes.fetch_sub(size, std::memory_order_relaxed);
    return false;
  }
  lower_due(due);
  return true;
}

void huge_cache_expire(bool all) noexcept {
  if (g_bytes.load(std::memory_order_relaxed) == 0) return;
  const std::uint64_t now = os::now_ms();
  if (!all && now < g_next_due.load(std::memory_order_relaxed)) return;
  // Take the deadline: a put during the walk lowers it again, so none is lost.
  g_next_due.store(kNever, std::memory_order_relaxed);
  std::uint64_t next = kNever;
  for (auto& slot : g_slot) {
    std::uintptr_t v = slot.load(std::memory_order_acquire);
    if (v == 0 || !slot.compare_exchange_strong(v, 0, std::memory_order_acquire, std::memory_order_relaxed)) continue;
    Segment* seg = address_of(v);
    const std::size_t size = size_of(v);
    const std::uint64_t until = seg->idle_until;  // read while the entry is ours
    if (all || until <= now || !fill_slot(v)) {
      g_bytes.fetch_sub(size, std::memory_order_relaxed);
      huge_unmap(seg, size);
    } else if (until < next) {
      next = until;
    }
  }
  if (next != kNever) lower_due(next);
}

std::size_t huge_cache_bytes() noexcept { return g_bytes.load(std::memory_order_relaxed); }

}  // namespace tailor::alloc
