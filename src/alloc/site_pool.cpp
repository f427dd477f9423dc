// SPDX-License-Identifier: MIT
// Call-site pools (site_pool.h, docs/pools.md): the site table and its
// monitors, each heap's pools of same-size slots on pages of its own, and
// the offline profile (TAILOR_POOLS_FILE).
#include "alloc/site_pool.h"

#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstring>
#include <new>

#include "alloc/alloc.h"
#include "alloc/config.h"
#include "alloc/dmm_front.h"
#include "alloc/heap.h"
#include "alloc/misuse.h"
#include "alloc/os.h"
#include "dmm/text.h"
#include "alloc/site_pool_policy.h"
#include "alloc/sized_out.h"

namespace tailor::alloc {

std::atomic<int> g_pools_mode{0};

using pools_policy::kFirstPage;
using pools_policy::kMaxPage;
using pools_policy::kWindow;
using pools_policy::kYoungEmpties;
using pools_policy::kYoungSlots;
using pools_policy::round_slot;

namespace {

// ------------------------------------------------------------------ sites

constexpr std::uint32_t kSiteBits = 12;
constexpr std::uint32_t kSites = 1u << kSiteBits;  // call sites the table holds
constexpr std::uint32_t kProbe = 32;               // slots probed before a site counts as not pooled
// A monitor watches a site's first kWindow requests (site_pool_policy.h);
// a pooled site of temporaries is demoted later (pool_emptied).

enum SiteState : std::uint32_t { kMonitoring = 0, kPooled = 1, kUnpooled = 2 };

struct alignas(32) Site {
  std::atomic<std::uintptr_t> key{0};  // return address; 0: free slot
  std::atomic<std::uint32_t> state{kMonitoring};
  std::atomic<std::uint32_t> slot{0};        // pooled: the slot size (the request rounded up to 16)
  std::atomic<std::uint32_t> seen{0};        // requests monitored
  std::atomic<std::uint32_t> repeats{0};     // of which had the size of the one before
  std::atomic<std::uint32_t> last_size{0};
  std::atomic<std::uint32_t> after_other{0};  // of which came right after another site's of the slot size
};

Site g_sites[kSites];
std::atomic<bool> g_slot_claimed[kPoolMaxRequest / 16 + 1];  // by slot size / 16
std::atomic<std::size_t> g_site_count{0}, g_sites_pooled{0}, g_sites_unpooled{0}, g_sites_demoted{0};

// ---------------------------------------------------------- offline profile

struct ProfileEntry {
  char module[96];  // basename of the object
  std::uint64_t offset;  // return address minus the object's load address
  std::uint32_t size;
};
constexpr int kProfileMax = 1024;
ProfileEntry g_profile[kProfileMax];
int g_profile_count = 0;
char g_profile_text[65536];

const char* base_name(const char* path) noexcept {
  const char* b = path;
  for (const char* s = path; *s; ++s)
    if (*s == '/') b = s + 1;
  return b;
}

// The profile's verdict on a site: its slot size, or 0 (not listed).
std::uint32_t profile_lookup(std::uintptr_t ra) noexcept {
  Dl_info info{};
  link_map* lm = nullptr;
  if (dladdr1(reinterpret_cast<void*>(ra), &info, reinterpret_cast<void**>(&lm), RTLD_DL_LINKMAP) == 0 ||
      lm == nullptr)
    return 0;
  const char* name = base_name(info.dli_fname != nullptr && info.dli_fname[0] ? info.dli_fname
                               : (lm->l_name != nullptr ? lm->l_name : ""));
  const std::uint64_t off = ra - lm->l_addr;
  for (int i = 0; i < g_profile_count; ++i)
    if (g_profile[i].offset == off && std::strcmp(g_profile[i].module, name) == 0) return round_slot(g_profile[i].size);
  return 0;
}

bool parse_hex(const char*& s, std::uint64_t& out) noexcept {
  if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s += 2;
  int n = 0;
  out = 0;
  for (;; ++s, ++n) {
    const char c = *s;
    int d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
    else break;
    if (n >= 16) return false;
    out = out << 4 | static_cast<std::uint64_t>(d);
  }
  return n > 0;
}

bool parse_dec(const char*& s, std::uint64_t& out) noexcept {
  int n = 0;
  out = 0;
  for (; *s >= '0' && *s <= '9'; ++s, ++n) {
    if (n >= 12) return false;
    out = out * 10 + static_cast<std::uint64_t>(*s - '0');
  }
  return n > 0;
}

void profile_error(const char* path, int line, const char* why) noexcept {
  dmm::TextBuffer<16> num;
  num.append_int(line);
  os::write_stderr("tailor: TAILOR_POOLS_FILE=", path, ": line ", num.c_str());
  os::write_stderr(": ", why, "; running without pools\n");
}

// Lines: "site <module> <offset> <size>" (offset hex, size decimal); '#'
// starts a comment. Anything else makes the whole file rejected.
bool profile_load(const char* path) noexcept {
  const long n = os::read_file(path, g_profile_text, sizeof g_profile_text);
  if (n < 0) {
    os::write_stderr("tailor: TAILOR_POOLS_FILE=", path, ": cannot be read; running without pools\n");
    return false;
  }
  if (static_cast<std::size_t>(n) >= sizeof g_profile_text - 1) {
    os::write_stderr("tailor: TAILOR_POOLS_FILE=", path, ": larger than 64 KiB; running without pools\n");
    return false;
  }
  int line = 0;
  for (const char* s = g_profile_text; *s;) {
    ++line;
    const char* end = std::strchr(s, '\n');
    if (end == nullptr) end = s + std::strlen(s);
    const char* a = s;
    while (a < end && (*a == ' ' || *a == '\t' || *a == '\r')) ++a;
    if (a < end && *a != '#') {
      if (std::strncmp(a, "site", 4) != 0 || (a[4] != ' ' && a[4] != '\t')) {
        profile_error(path, line, "expected 'site <module> <offset> <size>'");
        return false;
      }
      a += 4;
      while (*a == ' ' || *a == '\t') ++a;
      const char* m = a;
      while (a < end && *a != ' ' && *a != '\t') ++a;
      const auto mlen = static_cast<std::size_t>(a - m);
      if (mlen == 0 || mlen >= sizeof g_profile[0].module) {
        profile_error(path, line, "missing or too long module name");
        return false;
      }
      while (*a == ' ' || *a == '\t') ++a;
      std::uint64_t off = 0, size = 0;
      if (!parse_hex(a, off)) {
        profile_error(path, line, "bad offset (hexadecimal expected)");
        return false;
      }
      while (*a == ' ' || *a == '\t') ++a;
      if (!parse_dec(a, size) || size == 0 || size > kPoolMaxRequest) {
        profile_error(path, line, "bad size (1..1024 expected)");
        return false;
      }
      while (a < end && (*a == ' ' || *a == '\t' || *a == '\r')) ++a;
      if (a < end && *a != '#') {
        profile_error(path, line, "trailing text");
        return false;
      }
      if (g_profile_count == kProfileMax) {
        profile_error(path, line, "more than 1024 sites");
        return false;
      }
      ProfileEntry& e = g_profile[g_profile_count++];
      std::memcpy(e.module, m, mlen);
      e.module[mlen] = '\0';
      e.offset = off;
      e.size = static_cast<std::uint32_t>(size);
    }
    s = *end ? end + 1 : end;
  }
  return true;
}

// The site of return address ra (inserted on first sight), or nullptr
// when the table has no room for it near its hash.
Site* site_find(std::uintptr_t ra) noexcept {
  std::uint32_t h = static_cast<std::uint32_t>((ra * 0x9e3779b97f4a7c15ULL) >> (64 - kSiteBits));
  for (std::uint32_t i = 0; i < kProbe; ++i, h = (h + 1) & (kSites - 1)) {
    Site& s = g_sites[h];
    std::uintptr_t k = s.key.load(std::memory_order_acquire);
    if (k == ra) return &s;
    if (k != 0) continue;
    if (s.key.compare_exchange_strong(k, ra, std::memory_order_acq_rel)) {
      g_site_count.fetch_add(1, std::memory_order_relaxed);
      if (g_pools_mode.load(std::memory_order_relaxed) == 2) {  // the profile decides at once
        const std::uint32_t slot = profile_lookup(ra);
        s.slot.store(slot, std::memory_order_relaxed);
        s.state.store(slot != 0 ? kPooled : kUnpooled, std::memory_order_release);
        (slot != 0 ? g_sites_pooled : g_sites_unpooled).fetch_add(1, std::memory_order_relaxed);
      }
      return &s;
    }
    if (k == ra) return &s;  // another thread inserted it meanwhile
  }
  return nullptr;
}

// One request seen by a site's monitor; after_other: the heap's request of
// the same slot size before it came from another site.
void monitor(Site& s, std::size_t size, bool after_other) noexcept {
  const auto sz = static_cast<std::uint32_t>(size);
  if (s.last_size.exchange(sz, std::memory_order_relaxed) == sz) s.repeats.fetch_add(1, std::memory_order_relaxed);
  if (after_other) s.after_other.fetch_add(1, std::memory_order_relaxed);
  const std::uint32_t seen = s.seen.fetch_add(1, std::memory_order_relaxed) + 1;
  if (seen != kWindow) return;
  bool pooled = pools_policy::keeps_one_size(size, s.repeats.load(std::memory_order_relaxed));
  // TAILOR_POOLS=1: the first such site of each slot size keeps the heap's
  // pages of that size, which already are a same-size pool in allocation
  // order for it; a pool of its own would only add the routing's cost and
  // footprint. Later sites of the slot size are pooled, apart from it, if
  // their requests interleave with another site's (site_pool_policy.h).
  if (pooled && g_config.value[static_cast<int>(Param::kPools)] == 1 &&
      (!g_slot_claimed[round_slot(size) / 16].exchange(true, std::memory_order_relaxed) ||
       !pools_policy::interleaves(s.after_other.load(std::memory_order_relaxed))))
    pooled = false;
  if (pooled) {
    s.slot.store(round_slot(size), std::memory_order_relaxed);
    s.state.store(kPooled, std::memory_order_release);
    g_sites_pooled.fetch_add(1, std::memory_order_relaxed);
  } else {
    s.state.store(kUnpooled, std::memory_order_release);
    g_sites_unpooled.fetch_add(1, std::memory_order_relaxed);
  }
}

// ------------------------------------------------------------------ pools

// A pool: the class pages of its heap that serve one site (Page::site_pool
// holds its index + 1). Each page hands out its freed slots last in first
// out (its free list, where the owner's free pushes them, then local_free,
// other threads' frees taken back), then slots never used, by a bump
// pointer (capacity counts those carved). A page is in one
// of four places: the pool's current page, on its partial list (freed
// slots, not current; linked by next/prev), full (in_full, on no list,
// found again by free through its address), or on its list of empty
// pages kept for the next growth (linked by next; see pools_page_free).
struct Pool {
  std::uint32_t slot;           // 0: not set up; kDemoted: serves no request
  std::uint32_t young_empties;  // times the pool emptied with few slots ever carved (pool_emptied)
  std::uint32_t pages;          // pages held, the empty ones included
  Page* current;                // &g_empty_page when none
  Page* partial;
  Page* empty;                  // emptied pages kept, carved again from their start
  std::size_t next_bytes;       // size of the next page
};

// A slot size no request rounds to: a demoted pool (pool_emptied) serves no
// request any more, while its live blocks are still freed into its pages.
constexpr std::uint32_t kDemoted = 1;

// A heap's memory of the sites it has met whose fate is decided: the
// return address, its pool's slot size and index, direct-mapped, so that
// the site table is not searched on every request, and a request of the
// pool's size is told by one comparison.
constexpr std::uint32_t kCacheBits = 8;
struct SiteCacheEntry {
  std::uintptr_t ra;
  std::uint32_t slot;  // the pool's slot size; 0: not pooled, or demoted
  std::uint32_t pool;  // index in SitePools::pools
};

}  // namespace

struct SitePools {
  SiteCacheEntry cache[1u << kCacheBits];
  // The pools set up (their indices), so that a thread's exit visits those
  // and not all kSites (a program whose threads come and go pays it at
  // every thread).
  std::uint32_t set_up_count;
  std::uint16_t set_up[kSites];
  // Per direct slot (size / 8): routed requests of decided sites that no
  // pool served, and the requests pools served or monitors saw, since the
  // size last came back to the routing or was last judged (quiet sizes,
  // below).
  std::uint16_t quiet[kDirectSlots];
  std::uint32_t pooled[kDirectSlots];
  std::uint32_t beats;  // heartbeats since the quiet sizes last came back (pools_heartbeat)
  // When the pools' kept empty pages go back to the heap's free spans
  // (os::now_ms; 0: none kept, UINT64_MAX: never, PURGE_DELAY -1).
  std::uint64_t empty_until;
  // Per slot size (/ 16): the site of the last request that the heap's
  // pages served (the monitor's interleaving, site_pool_policy.h).
  std::uintptr_t last_site[kPoolMaxRequest / 16 + 1];
  Pool pools[kSites];  // index: the site's slot in g_sites
};

namespace {

inline std::uint32_t cache_index(std::uintptr_t ra) noexcept {
  return static_cast<std::uint32_t>((ra * 0x9e3779b97f4a7c15ULL) >> (64 - kCacheBits));
}

std::atomic<std::size_t> g_areas{0}, g_area_bytes{0}, g_largest_area{0}, g_areas_released{0};
std::size_t g_max_area = 0;

inline std::size_t page_bytes(const Page* pg) noexcept {
  return static_cast<std::size_t>(pg->slice_count) << g_config.slice_shift;
}

Page* page_new(Heap* h, Pool& pool, std::uint16_t index) noexcept {
  std::size_t bytes = pool.next_bytes != 0 ? pool.next_bytes : kFirstPage;
  if (bytes > g_max_area) bytes = g_max_area;
  auto slices = static_cast<std::uint32_t>(bytes >> g_config.slice_shift);
  if (slices == 0) slices = 1;
  Page* pg = span_alloc_resident(h->pool, slices);
  if (pg == nullptr) return nullptr;
  bytes = page_bytes(pg);
  pool.next_bytes = bytes * 2;
  pg->kind = PageKind::kClass;
  pg->size_class = kPoolPageClass;  // of no class queue
  pg->site_pool = static_cast<std::uint16_t>(index + 1);
  pg->block_size = pool.slot;
  pg->reserved = static_cast<std::uint32_t>(bytes / pool.slot);
  pg->block_magic = block_magic(pool.slot);
  pg->size_span = pool.slot == 16 ? 17 : 16;  // the requests that round to the slot (0..16 for 16)
  ++pool.pages;
  g_areas.fetch_add(1, std::memory_order_relaxed);
  g_area_bytes.fetch_add(bytes, std::memory_order_relaxed);
  std::size_t largest = g_largest_area.load(std::memory_order_relaxed);
  while (bytes > largest && !g_largest_area.compare_exchange_weak(largest, bytes, std::memory_order_relaxed)) {
  }
  return pg;
}

void partial_push(Pool& pool, Page* pg) noexcept {
  pg->prev = nullptr;
  pg->next = pool.partial;
  if (pool.partial != nullptr) pool.partial->prev = pg;
  pool.partial = pg;
}

void partial_remove(Pool& pool, Page* pg) noexcept {
  if (pg->prev != nullptr) pg->prev->next = pg->next;
  else pool.partial = pg->next;
  if (pg->next != nullptr) pg->next->prev = pg->prev;
  pg->next = pg->prev = nullptr;
}

// Back to the heap's free spans (a page that is on no list of the pool).
void page_release(Heap* h, Pool& pool, Page* pg) noexcept {
  const std::size_t bytes = page_bytes(pg);
  if (pool.current == pg) pool.current = &g_empty_page;
  // The next page starts again from the size of this one: a pool whose
  // objects come and go does not keep doubling.
  pool.next_bytes = bytes;
  --pool.pages;
  pg->site_pool = 0;
  span_free(h->pool, pg);
  g_areas.fetch_sub(1, std::memory_order_relaxed);
  g_area_bytes.fetch_sub(bytes, std::memory_order_relaxed);
  g_areas_released.fetch_add(1, std::memory_order_relaxed);
}

// An empty page carves again from its first slot, in address order.
inline void page_reset(Page* pg) noexcept {
  pg->free = pg->local_free = nullptr;
  pg->capacity = 0;
}

// Temporaries: a pool all of whose objects died while its one page had
// carved fewer than kYoungSlots slots holds the site's young objects, not
// a structure to walk; the heap's size classes keep those hot in one
// page shared with other sites, while a pool per such site spreads them
// over a page each (a program of many temporary sites, robot_kinematics,
// then missed in L1 20x more often). After kYoungEmpties such times the
// site is demoted for good: left to the heap, on every thread.

// true: the site was demoted and `pg` (its only page) given back.
bool pool_emptied(Heap* h, Pool& pool, Page* pg) noexcept {
  if (pool.pages != 1 || pg->capacity >= kYoungSlots) return false;
  if (++pool.young_empties < kYoungEmpties) return false;  // (a demoted pool has no page left to empty)
  pool.slot = kDemoted;
  Site& site = g_sites[&pool - h->site_pools->pools];
  SiteCacheEntry& e = h->site_pools->cache[cache_index(site.key.load(std::memory_order_relaxed))];
  if (&h->site_pools->pools[e.pool] == &pool) e.slot = 0;  // its requests go to the heap from now on
  if (site.state.exchange(kUnpooled, std::memory_order_acq_rel) == kPooled) {
    g_sites_pooled.fetch_sub(1, std::memory_order_relaxed);
    g_sites_unpooled.fetch_add(1, std::memory_order_relaxed);
    g_sites_demoted.fetch_add(1, std::memory_order_relaxed);
  }
  page_release(h, pool, pg);
  return true;
}

// A slot of page pg: its most recently freed one, or a fresh one. The
// slots other threads freed (local_free) wait for page_take_any, on the
// slow path, when the page has no other left.
[[gnu::always_inline]] inline void* page_take(Page* pg) noexcept {
  if (Block* b = pg->free) {  // the owner's frees
    pg->free = b->next;
    pg->used++;
    block_key(b) = 0;
    return b;
  }
  if (pg->capacity < pg->reserved) {
    auto* b = reinterpret_cast<Block*>(pg->start + std::size_t{pg->capacity} * pg->block_size);
    pg->capacity++;
    pg->used++;
    block_key(b) = 0;  // the span may have been used before: no stale freed mark
    return b;
  }
  return nullptr;
}

inline void* page_take_any(Page* pg) noexcept {
  if (pg->free == nullptr && pg->local_free != nullptr) {  // other threads' frees, taken back
    pg->free = pg->local_free;
    pg->local_free = nullptr;
  }
  return page_take(pg);
}

// The pool's current page has no slot left: slots other threads freed,
// then a page with freed slots, then a kept empty one, then a new page.
__attribute__((noinline)) void* pool_alloc_slow(Heap* h, Pool& pool) noexcept {
  heap_prepare(h);  // other threads' frees go back to their pages (which may empty or demote)
  if (pool.slot == kDemoted) return nullptr;
  if (void* p = page_take_any(pool.current)) return p;
  if (pool.current != &g_empty_page) pool.current->in_full = 1;  // on no list until a slot comes back
  pool.current = &g_empty_page;
  while (Page* pg = pool.partial) {
    partial_remove(pool, pg);
    pool.current = pg;
    if (void* p = page_take_any(pg)) return p;
    pg->in_full = 1;
    pool.current = &g_empty_page;
  }
  Page* pg = pool.empty;
  if (pg != nullptr) pool.empty = pg->next, pg->next = nullptr;
  else pg = page_new(h, pool, static_cast<std::uint16_t>(&pool - h->site_pools->pools));
  if (pg == nullptr) return nullptr;
  pool.current = pg;
  return page_take(pg);
}

SitePools* site_pools_new(Heap* h) noexcept {
  const std::size_t bytes = (sizeof(SitePools) + os::page_size() - 1) & ~(os::page_size() - 1);
  void* mem = os::reserve_aligned(bytes, os::page_size());  // zero: every pool not set up
  if (mem == nullptr) return nullptr;
  h->site_pools = new (mem) SitePools;  // default-initialized: the zero pages stay untouched
  return h->site_pools;
}

// TAILOR_POOLS_REPORT=1: at exit, one line per pooled site on stderr
// ("tailor: pooled site <module> <offset> slot <bytes>", the offset as in
// a profile), so that the sites of the online monitor and of a profile can
// be compared. Written to a copy of stderr taken at start-up: a program
// that closes stderr at exit (coreutils do) still gets its report.
int g_report_fd = -1;

void append(char*& out, const char* s) noexcept {
  while (*s) *out++ = *s++;
}
void append_num(char*& out, std::uint64_t v, unsigned base) noexcept {
  char tmp[24];
  int n = 0;
  do {
    const auto d = static_cast<unsigned>(v % base);
    tmp[n++] = static_cast<char>(d < 10 ? '0' + d : 'a' + d - 10);
    v /= base;
  } while (v != 0);
  while (n) *out++ = tmp[--n];
}

__attribute__((destructor)) void report_pooled_sites() noexcept {
  if (g_report_fd < 0) return;
  {
    char line[160];
    char* out = line;
    append(out, "tailor: pools: ");
    append_num(out, g_site_count.load(std::memory_order_relaxed), 10);
    append(out, " sites, ");
    append_num(out, g_sites_pooled.load(std::memory_order_relaxed), 10);
    append(out, " pooled, ");
    append_num(out, g_sites_demoted.load(std::memory_order_relaxed), 10);
    append(out, " demoted (temporaries)\n");
    *out = '\0';
    os::write_fd(g_report_fd, line);
  }
  for (const Site& s : g_sites) {
    const std::uintptr_t ra = s.key.load(std::memory_order_acquire);
    if (ra == 0 || s.state.load(std::memory_order_acquire) != kPooled) continue;
    Dl_info info{};
    link_map* lm = nullptr;
    char line[256];
    char* out = line;
    append(out, "tailor: pooled site ");
    if (dladdr1(reinterpret_cast<void*>(ra), &info, reinterpret_cast<void**>(&lm), RTLD_DL_LINKMAP) != 0 &&
        lm != nullptr && info.dli_fname != nullptr) {
      const char* name = base_name(info.dli_fname);
      for (int i = 0; name[i] != '\0' && i < 120; ++i) *out++ = name[i];
      append(out, " 0x");
      append_num(out, ra - lm->l_addr, 16);
    } else {
      append(out, "? 0x");
      append_num(out, ra, 16);
    }
    append(out, " slot ");
    append_num(out, s.slot.load(std::memory_order_relaxed), 10);
    *out++ = '\n';
    *out = '\0';
    os::write_fd(g_report_fd, line);
  }
}

}  // namespace

void pools_init() noexcept {
  const char* file = os::getenv("TAILOR_POOLS_FILE");
  const bool online = g_config.value[static_cast<int>(Param::kPools)] != 0;
  if ((file == nullptr || file[0] == '\0') && !online) return;
  if (dmm_active()) {
    os::write_stderr("tailor: TAILOR_POOLS ignored: TAILOR_DMM serves malloc\n");
    return;
  }
  int mode = 1;
  if (file != nullptr && file[0] != '\0') {
    if (!profile_load(file)) return;
    mode = 2;
  }
  g_max_area = g_config.segment_size / 4 < kMaxPage ? g_config.segment_size / 4 : kMaxPage;
  const char* report = os::getenv("TAILOR_POOLS_REPORT");
  if (report != nullptr && report[0] == '1') g_report_fd = os::stderr_copy();
  g_pools_mode.store(mode, std::memory_order_release);
}

namespace {

// Quiet sizes. Routing every request costs default libtailor's fast path
// (about 25 instructions per request no pool serves), also in programs
// where no site of a size is pooled, or every site of it was demoted. So a
// size (a direct slot of the heap: size / 8) is judged in each heap after
// kQuietRequests routed requests from decided sites that no pool served:
// if its pools served fewer than one request for each kPooledWeight of
// those meanwhile, it leaves the routing: its direct pointer mirrors the
// heap's page again, and its requests take malloc's own fast path. Such a size comes
// back to the routing when one of its requests that reaches the slow path
// anyway (its page has run out of free blocks) comes from a site not yet
// decided, or from a pooled one, and every kQuietBeats heartbeats of the
// heap (pools_heartbeat): a site that starts after its size went quiet is
// seen only then, so its monitor fills more slowly.
constexpr std::uint16_t kQuietRequests = 4096;
// A size whose pools serve few of its requests goes quiet too: a pooled
// site of few requests among very many of other sites (robot_kinematics:
// one copy per step among thousands of temporaries) would otherwise keep
// all of them on the routing's cost.
constexpr std::uint32_t kPooledWeight = 64;

inline std::size_t direct_slot(std::size_t size) noexcept { return (size + 7) >> 3; }

// Back to the routing: direct[] stays empty for direct slot w again.
void route_slot(Heap* h, std::size_t w) noexcept {
  if (h->site_pools != nullptr) {
    h->site_pools->quiet[w] = 0;
    h->site_pools->pooled[w] = 0;
  }
  if (h->unrouted[w] == 0) return;
  h->unrouted[w] = 0;
  h->direct[w] = &g_empty_page;
}

void route_size(Heap* h, std::size_t size) noexcept { route_slot(h, direct_slot(size)); }

__attribute__((noinline)) void unroute_size(Heap* h, std::size_t w) noexcept {
  if (h->unrouted[w] != 0) return;
  h->unrouted[w] = 1;
  h->direct[w] = h->routed_direct[w];
}

// A site met for the first time by this heap, or still monitored.
__attribute__((noinline)) void* pool_malloc_slow(Heap* h, std::size_t size, std::uintptr_t ra) noexcept {
  Site* s = site_find(ra);
  if (s == nullptr) return nullptr;
  const std::uint32_t state = s->state.load(std::memory_order_acquire);
  SitePools* sp = h->site_pools != nullptr ? h->site_pools : site_pools_new(h);
  if (sp == nullptr) return nullptr;
  if (state == kMonitoring) {
    route_size(h, size);  // the monitor sees the site's next requests
    sp->pooled[direct_slot(size)]++;  // a request the routing is for: the size is not quiet
    std::uintptr_t& last = sp->last_site[round_slot(size) / 16];
    monitor(*s, size, last != 0 && last != ra);
    last = ra;
    return nullptr;
  }
  SiteCacheEntry& e = sp->cache[cache_index(ra)];
  if (state != kPooled) {
    e = SiteCacheEntry{ra, 0, 0};
    return nullptr;
  }
  const std::uint32_t slot = s->slot.load(std::memory_order_relaxed);
  const auto index = static_cast<std::uint16_t>(s - g_sites);
  Pool& pool = sp->pools[index];
  if (pool.slot == 0) {
    pool.slot = slot;
    pool.current = &g_empty_page;
    sp->set_up[sp->set_up_count++] = index;
  }
  e = SiteCacheEntry{ra, pool.slot == kDemoted ? 0 : pool.slot, index};
  if (round_slot(size) != pool.slot) return nullptr;  // not the site's size (or demoted): the heap serves it
  route_size(h, size);
  if (void* p = page_take(pool.current)) return p;
  return pool_alloc_slow(h, pool);
}

// The heap, as malloc_inline would serve the request without pools.
[[gnu::always_inline]] inline void* heap_serves(Heap* h, std::size_t size) noexcept {
  if (void* p = malloc_fast_routed(h, size); __builtin_expect(p != nullptr, 1)) return p;
  return heap_malloc_unrouted(h, size);
}

// The routing's cases that call out (a site not in the heap's cache, a
// pool whose current page is used up): apart, so that pools_malloc's own
// paths end in tail calls and save no register.
__attribute__((noinline)) void* route_site_miss(Heap* h, std::size_t size, std::uintptr_t ra) noexcept {
  if (h == &g_empty_heap) {  // the thread's first request: its heap first
    h = heap_get();
    if (h == nullptr) return heap_serves(&g_empty_heap, size);
  }
  if (void* p = pool_malloc_slow(h, size, ra)) return p;
  return heap_serves(h, size);
}

__attribute__((noinline)) void* route_pool_refill(Heap* h, std::size_t size, Pool& pool) noexcept {
  if (void* p = pool_alloc_slow(h, pool)) return p;
  return heap_serves(h, size);
}

// A pooled site's request that came by a quiet size's slow path.
__attribute__((noinline)) void* route_pooled_unrouted(Heap* h, std::size_t size, Pool& pool) noexcept {
  route_size(h, size);
  if (void* p = page_take(pool.current)) return p;
  return route_pool_refill(h, size, pool);
}

// Every kPooledWeight routed requests of the size that no pool served: if
// no pool served one and no monitor saw one meanwhile, the size is quiet
// already, by the rule below at its finest grain: a program that pools
// nothing, or nothing of this size, pays the routing for 64 requests of a
// size, not 4096 (olden_mst, whose sites are all left to the heap, spent
// 0.6% of its instructions on the routing so). At kQuietRequests: the
// judgement.
__attribute__((noinline)) void* route_quiet(Heap* h, std::size_t size, std::size_t w) noexcept {
  SitePools* sp = h->site_pools;
  if (sp->quiet[w] < kQuietRequests) {
    if (sp->pooled[w] == 0) {
      unroute_size(h, w);
      sp->quiet[w] = 0;
    }
    return heap_serves(h, size);
  }
  if (sp->pooled[w] * kPooledWeight < kQuietRequests) unroute_size(h, w);
  sp->quiet[w] = 0;
  sp->pooled[w] = 0;
  return heap_serves(h, size);
}

}  // namespace

void* pools_malloc(Heap* h, std::size_t size, const void* site) noexcept {
  const auto ra = reinterpret_cast<std::uintptr_t>(site);
  if (site != nullptr && size <= kPoolMaxRequest) {
    SitePools* sp = h->site_pools;
    if (sp == nullptr) return route_site_miss(h, size, ra);
    const SiteCacheEntry& e = sp->cache[cache_index(ra)];
    if (e.ra != ra) return route_site_miss(h, size, ra);
    const std::size_t w = direct_slot(size);
    if (round_slot(size) == e.slot) {
      Pool& pool = sp->pools[e.pool];
      sp->pooled[w]++;
      if (__builtin_expect(h->unrouted[w] != 0, 0)) return route_pooled_unrouted(h, size, pool);
      if (void* p = page_take(pool.current)) return p;
      return route_pool_refill(h, size, pool);
    }
    sp->last_site[round_slot(size) / 16] = ra;
    if (__builtin_expect(++sp->quiet[w] % kPooledWeight == 0, 0)) return route_quiet(h, size, w);
  }
  return heap_serves(h, size);
}

void pools_page_free(Heap* h, Page* pg) noexcept {
  Pool& pool = h->site_pools->pools[pg->site_pool - 1];
  const bool was_full = pg->in_full != 0;
  pg->in_full = 0;
  if (pg->used != 0) {
    if (was_full) partial_push(pool, pg);
    return;
  }
  if (pg == pool.current) {
    if (pool_emptied(h, pool, pg)) return;
    if (pool.pages == 1) {  // carved again from its first slot
      page_reset(pg);
      return;
    }
    pool.current = &g_empty_page;
  } else if (!was_full) {
    partial_remove(pool, pg);
  }
  // Emptied pages are kept for PURGE_DELAY (then pools_heartbeat gives them
  // back to the heap's free spans), smallest first, and carved again from
  // their start in that order: a pool whose structure is freed and built
  // again (ptrdist_ft builds a graph per round) lays it out on the same
  // memory as before, its largest page's untouched tail untouched again.
  // Pages given back at once (but one) cut the free spans up among the
  // pools and the heap; kept but taken back largest first, every round
  // touched more of their tails: either way each round faulted in more
  // (3.7 MiB per round there, 12% of the peak RSS). PURGE_DELAY 0 keeps
  // one, until the heap's next heartbeat.
  SitePools* sp = h->site_pools;
  const std::int64_t delay = g_config.purge_delay_ms;
  if (delay == 0 && pool.empty != nullptr) {
    page_release(h, pool, pg);
    return;
  }
  page_reset(pg);
  Page** at = &pool.empty;
  while (*at != nullptr && (*at)->slice_count < pg->slice_count) at = &(*at)->next;
  pg->next = *at;
  *at = pg;
  sp->empty_until = delay < 0 ? UINT64_MAX : os::now_ms() + static_cast<std::uint64_t>(delay);
}

namespace {
// Gives every kept empty page of heap h's pools back to its free spans.
void release_empty_pages(Heap* h) noexcept {
  SitePools* sp = h->site_pools;
  for (std::uint32_t i = 0; i < sp->set_up_count; ++i) {
    Pool& pool = sp->pools[sp->set_up[i]];
    while (Page* pg = pool.empty) {
      pool.empty = pg->next;
      pg->next = nullptr;
      page_release(h, pool, pg);
    }
  }
  sp->empty_until = 0;
}
}  // namespace

// Quiet sizes come back every kQuietBeats heartbeats (1024 x 256 own frees):
// each then takes up to kQuietRequests routed requests to be judged quiet
// again (every 64 beats cost robot_kinematics 17% more instructions).
constexpr std::uint32_t kQuietBeats = 1024;

void pools_heartbeat(Heap* h) noexcept {
  SitePools* sp = h->site_pools;
  if (sp == nullptr) return;
  if (sp->empty_until != 0 && sp->empty_until != UINT64_MAX && os::now_ms() >= sp->empty_until) release_empty_pages(h);
  if (++sp->beats < kQuietBeats) return;
  sp->beats = 0;
  for (std::size_t w = 0; w < kDirectSlots; ++w)
    if (h->unrouted[w] != 0) route_slot(h, w);
}

void pools_heap_exit(Heap* h) noexcept {
  SitePools* sp = h->site_pools;
  release_empty_pages(h);
  for (std::uint32_t i = 0; i < sp->set_up_count; ++i) {
    Pool& pool = sp->pools[sp->set_up[i]];
    if (pool.current != &g_empty_page && pool.current->used == 0) page_release(h, pool, pool.current);
  }
}

void pools_collect(Heap* h) noexcept {
  if (h->site_pools != nullptr) release_empty_pages(h);
}

void pools_get_stats(tailor_pools_stats* out) noexcept {
  *out = tailor_pools_stats{};
  out->mode = g_pools_mode.load(std::memory_order_relaxed);
  out->sites = g_site_count.load(std::memory_order_relaxed);
  out->sites_pooled = g_sites_pooled.load(std::memory_order_relaxed);
  out->sites_unpooled = g_sites_unpooled.load(std::memory_order_relaxed);
  out->areas = g_areas.load(std::memory_order_relaxed);
  out->area_bytes = g_area_bytes.load(std::memory_order_relaxed);
  out->largest_area = g_largest_area.load(std::memory_order_relaxed);
  out->areas_released = g_areas_released.load(std::memory_order_relaxed);
  out->sites_demoted = g_sites_demoted.load(std::memory_order_relaxed);
}

std::size_t pool_slot_size(const void* p) noexcept {
  if (p == nullptr || !pools_active()) return 0;
  Segment* seg = segment_of(p);
  if (!segment_known(seg) || seg->kind != SegmentKind::kNormal) return 0;
  const Page* pg = page_of(seg, p);
  return pg->kind == PageKind::kClass && pg->site_pool != 0 ? pg->block_size : 0;
}

}  // namespace tailor::alloc

using namespace tailor::alloc;

extern "C" {

void tailor_pools_get_stats_sized(tailor_pools_stats* out, size_t size) {
  if (out == nullptr) return;
  process_init();
  tailor_pools_stats st{};
  pools_get_stats(&st);
  copy_out(st, out, size);
}

size_t tailor_pool_slot_size(const void* p) { return pool_slot_size(p); }

}  // extern "C"
