// SPDX-License-Identifier: MIT
// Region pools (region.h): aligned spans of a pool's own segments, or a
// mapping of their own for regions too large for a segment, under one spin
// lock per pool; and the tailor_region_* C API of include/tailor/tailor.h.
#include "alloc/region.h"

#include <pthread.h>
#include <sched.h>

#include <mutex>
#include <new>

#include "alloc/heap.h"
#include "alloc/os.h"
#include "alloc/spin_lock.h"

namespace tailor::alloc {

namespace {

// A region pool's lock, held for a scope.
class PoolLock : public std::lock_guard<SpinLock> {
 public:
  explicit PoolLock(RegionPool* p) noexcept : std::lock_guard<SpinLock>(p->lock) {}
};

// The live pools, for the fork handlers, under their own spin lock (taken
// before any pool's).
RegionPool* g_live = nullptr;
SpinLock g_live_lock;
pthread_once_t g_fork_once = PTHREAD_ONCE_INIT;

void fork_prepare() noexcept {
  g_live_lock.lock();
  for (RegionPool* p = g_live; p != nullptr; p = p->next_live) p->lock.lock();
}
void fork_parent() noexcept {
  for (RegionPool* p = g_live; p != nullptr; p = p->next_live) p->lock.unlock();
  g_live_lock.unlock();
}
// In the child only this thread exists: every lock it took in prepare is
// its own, and no other holder is left.
void fork_child() noexcept { fork_parent(); }
void register_fork_handlers() noexcept { pthread_atfork(&fork_prepare, &fork_parent, &fork_child); }

void link_live(RegionPool* rp) noexcept {
  pthread_once(&g_fork_once, &register_fork_handlers);
  std::lock_guard guard(g_live_lock);
  rp->next_live = g_live;
  if (g_live != nullptr) g_live->prev_live = rp;
  g_live = rp;
}
void unlink_live(RegionPool* rp) noexcept {
  std::lock_guard guard(g_live_lock);
  if (rp->prev_live != nullptr) rp->prev_live->next_live = rp->next_live;
  else g_live = rp->next_live;
  if (rp->next_live != nullptr) rp->next_live->prev_live = rp->prev_live;
}

std::size_t pool_bytes() { return (sizeof(RegionPool) + os::page_size() - 1) & ~(os::page_size() - 1); }

// A region mapped on its own (like a huge block: header, then the region
// at `align` past it), linked into the pool's list of such mappings.
void* dedicated_obtain(RegionPool* rp, std::size_t bytes, std::size_t align) {
  void* p = huge_alloc(bytes, align);
  if (p == nullptr) return nullptr;
  Segment* seg = segment_of(p);
  seg->kind = SegmentKind::kRegion;
  seg->region = rp;
  seg->pages()->kind = PageKind::kRegion;
  seg->prev = nullptr;
  seg->next = rp->dedicated;
  if (seg->next) seg->next->prev = seg;
  rp->dedicated = seg;
  return p;
}

void dedicated_release(RegionPool* rp, Segment* seg) {
  if (seg->prev) seg->prev->next = seg->next;
  else rp->dedicated = seg->next;
  if (seg->next) seg->next->prev = seg->prev;
  huge_free(seg);
}

}  // namespace

std::size_t region_max_align() noexcept {
  process_init();
  return g_config.segment_size / 2;
}

std::size_t region_page_size() noexcept { return os::page_size(); }

RegionPool* region_pool_create(const tailor_region_hooks& hooks) noexcept {
  if (hooks.free == nullptr || hooks.usable_size == nullptr) return nullptr;
  process_init();  // the segment geometry comes from the configuration
  void* mem = os::reserve_aligned(pool_bytes(), os::page_size());
  if (mem == nullptr) return nullptr;
  auto* rp = new (mem) RegionPool();
  rp->hooks = hooks;
  rp->pool.owner = nullptr;  // no thread heap: free's fast path never takes these blocks
  rp->pool.region = rp;
  link_live(rp);
  return rp;
}

void region_pool_destroy(RegionPool* rp) noexcept {
  if (rp == nullptr) return;
  unlink_live(rp);
  {
    PoolLock lock(rp);
    pool_release_all(rp->pool);
    while (rp->dedicated != nullptr) dedicated_release(rp, rp->dedicated);
  }
  rp->~RegionPool();
  os::release(rp, pool_bytes());
}

void* region_obtain(RegionPool* rp, std::size_t bytes, std::size_t align) noexcept {
  if (rp == nullptr || bytes == 0 || align == 0 || (align & (align - 1)) != 0 || align > region_max_align() ||
      bytes > (std::size_t{1} << 62))
    return nullptr;
  const std::size_t slice = g_config.slice_size;
  PoolLock lock(rp);
  if (bytes <= g_config.segment_size) {
    const auto n = static_cast<std::uint32_t>((bytes + slice - 1) >> g_config.slice_shift);
    const auto a = static_cast<std::uint32_t>(align > slice ? align / slice : 1);
    if (n + a - 1 <= segment_span_slices()) {
      Page* pg = span_alloc_aligned(rp->pool, n, a);
      if (pg == nullptr) return nullptr;
      pg->kind = PageKind::kRegion;
      pg->used = 1;
      return pg->start;
    }
  }
  return dedicated_obtain(rp, bytes, align);
}

void region_give_back(RegionPool* rp, void* p, std::size_t bytes) noexcept {
  if (rp == nullptr || p == nullptr) return;
  Segment* seg = segment_of(p);
  PoolLock lock(rp);
  if (seg->kind != SegmentKind::kRegion || seg->region != rp) {
    os::write_stderr("tailor: tailor_region_give_back: not a region of this pool; ignored\n");
    return;
  }
  if (seg->header_slices == 0) {  // mapped on its own
    if (seg->pages()->start != p) {
      os::write_stderr("tailor: tailor_region_give_back: not the start of a region of this pool; ignored\n");
      return;
    }
    dedicated_release(rp, seg);
    return;
  }
  Page* pg = page_of(seg, p);
  if (pg->kind != PageKind::kRegion || pg->start != p ||
      (static_cast<std::size_t>(pg->slice_count) << g_config.slice_shift) < bytes) {
    os::write_stderr("tailor: tailor_region_give_back: not the start of a region of this pool; ignored\n");
    return;
  }
  span_free(rp->pool, pg);
}

void region_set_word(void* region, void* word) noexcept {
  Page* pg = region_page(segment_of(region), region);
  if (pg != nullptr) pg->next = static_cast<Page*>(word);
}

}  // namespace tailor::alloc

using namespace tailor::alloc;

// The C API (tailor.h). tailor_region_pool is RegionPool seen from outside.
extern "C" {

tailor_region_pool* tailor_region_pool_create(const tailor_region_hooks* hooks) {
  return hooks == nullptr ? nullptr : reinterpret_cast<tailor_region_pool*>(region_pool_create(*hooks));
}

void tailor_region_pool_destroy(tailor_region_pool* pool) {
  region_pool_destroy(reinterpret_cast<RegionPool*>(pool));
}

void* tailor_region_obtain(tailor_region_pool* pool, size_t bytes, size_t align) {
  return region_obtain(reinterpret_cast<RegionPool*>(pool), bytes, align);
}

void tailor_region_give_back(tailor_region_pool* pool, void* p, size_t bytes) {
  region_give_back(reinterpret_cast<RegionPool*>(pool), p, bytes);
}

size_t tailor_region_page_size(void) { return region_page_size(); }

size_t tailor_region_max_align(void) { return region_max_align(); }

}  // extern "C"
