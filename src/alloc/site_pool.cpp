// SPDX-License-Identifier: MIT
// Call-site pools (site_pool.h, docs/pools.md): the site table and its
// monitors, per-thread pools of same-size slots on areas lent by a region
// pool, cross-thread frees, thread exit and adoption, and the offline
// profile (TAILOR_POOLS_FILE).
#include "site_pool.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <cstring>
#include <new>

#include "alloc.h"
#include "config.h"
#include "dmm_front.h"
#include "heap.h"
#include "misuse.h"
#include "os.h"
#include "region.h"
#include "spin_lock.h"

namespace tailor::alloc {

std::atomic<int> g_pools_mode{0};
RegionPool* g_pools_region = nullptr;

namespace {

// ------------------------------------------------------------------ sites

constexpr std::uint32_t kSiteBits = 12;
constexpr std::uint32_t kSites = 1u << kSiteBits;  // call sites the table holds
constexpr std::uint32_t kProbe = 32;               // slots probed before a site counts as not pooled
// Requests a monitor watches before it decides; the site is pooled when at
// least 7/8 of them had the size of the request before (seed 003's "the
// last entry matches the size of the new request"). A pooled site of
// temporaries is demoted later (pool_emptied).
constexpr std::uint32_t kWindow = 64;

enum SiteState : std::uint32_t { kMonitoring = 0, kPooled = 1, kUnpooled = 2 };

struct alignas(32) Site {
  std::atomic<std::uintptr_t> key{0};  // return address; 0: free slot
  std::atomic<std::uint32_t> state{kMonitoring};
  std::atomic<std::uint32_t> slot{0};        // pooled: the slot size (the request rounded up to 16)
  std::atomic<std::uint32_t> seen{0};        // requests monitored
  std::atomic<std::uint32_t> repeats{0};     // of which had the size of the one before
  std::atomic<std::uint32_t> last_size{0};
};

Site g_sites[kSites];
std::atomic<bool> g_slot_claimed[kPoolMaxRequest / 16 + 1];  // by slot size / 16
std::atomic<std::size_t> g_site_count{0}, g_sites_pooled{0}, g_sites_unpooled{0}, g_sites_demoted{0};

inline std::uint32_t round_slot(std::size_t size) noexcept {
  return static_cast<std::uint32_t>(size == 0 ? 16 : (size + 15) & ~std::size_t{15});
}

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
  char num[16];
  int k = 0;
  char tmp[16];
  int n = 0;
  auto u = static_cast<unsigned>(line);
  do { tmp[n++] = static_cast<char>('0' + u % 10); u /= 10; } while (u);
  while (n) num[k++] = tmp[--n];
  num[k] = '\0';
  os::write_stderr("tailor: TAILOR_POOLS_FILE=", path, ": line ", num);
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

// One request seen by a site's monitor.
void monitor(Site& s, std::size_t size) noexcept {
  const auto sz = static_cast<std::uint32_t>(size);
  if (s.last_size.exchange(sz, std::memory_order_relaxed) == sz) s.repeats.fetch_add(1, std::memory_order_relaxed);
  const std::uint32_t seen = s.seen.fetch_add(1, std::memory_order_relaxed) + 1;
  if (seen != kWindow) return;
  // The first request has nothing before it: kWindow - 1 comparisons.
  bool pooled = size <= kPoolMaxRequest && s.repeats.load(std::memory_order_relaxed) * 8 >= (kWindow - 1) * 7;
  // TAILOR_POOLS=1: the first such site of each slot size keeps the heap's
  // pages of that size, which already are a same-size pool in allocation
  // order for it; a pool of its own would only add the routing's cost and
  // footprint. Later sites of the slot size are pooled, apart from it.
  if (pooled && g_config.value[static_cast<int>(Param::kPools)] == 1 &&
      !g_slot_claimed[round_slot(size) / 16].exchange(true, std::memory_order_relaxed))
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

struct ThreadPools;
struct Pool;

struct alignas(64) Area {
  Pool* pool;
  ThreadPools* owner;     // the pool's owner, for free's test (never changes)
  Area* next;             // the pool's areas
  Area* prev;
  Area* next_partial;     // the pool's areas with free slots, other than current
  std::uint8_t* start;    // first slot
  std::uint8_t* bump;
  std::uint8_t* end;
  Block* free;            // freed slots, most recent first (owner only)
  void* span;             // the region (the header lies a colour into it)
  std::size_t bytes;      // of the region
  std::uint32_t live;     // slots handed out and not yet freed back to the owner
  std::uint32_t slot;
  bool in_partial;
  alignas(64) std::atomic<Block*> remote{nullptr};  // slots freed by other threads
};

struct Pool {
  std::uint32_t slot;     // 0: not set up
  Area* current;
  Area* areas;
  Area* partial;
  Area* spare;            // one emptied area kept for the next growth (not on partial)
  std::size_t next_bytes; // size of the next area
  ThreadPools* owner;
  std::uint32_t young_empties; // times the pool emptied with few slots ever carved (pool_emptied)
  std::atomic<bool> remote_pending{false};
};

// A slot size no request rounds to: a demoted pool (pool_emptied) serves no
// request any more, while its live blocks are still freed into its areas.
constexpr std::uint32_t kDemoted = 1;

// A thread's memory of the sites it has met whose fate is decided: the
// return address and its pool (nullptr: not pooled), direct-mapped, so that
// the site table is not searched on every request.
constexpr std::uint32_t kCacheBits = 8;
struct SiteCacheEntry {
  std::uintptr_t ra;
  Pool* pool;
};

struct ThreadPools {
  ThreadPools* next_idle = nullptr;
  SiteCacheEntry cache[1u << kCacheBits];
  // The pools set up (their indices), so that a thread's exit visits those
  // and not all kSites (a program whose threads come and go pays it at
  // every thread).
  std::uint32_t set_up_count = 0;
  std::uint16_t set_up[kSites];
  Pool pools[kSites];  // index: the site's slot in g_sites
};

inline std::uint32_t cache_index(std::uintptr_t ra) noexcept {
  return static_cast<std::uint32_t>((ra * 0x9e3779b97f4a7c15ULL) >> (64 - kCacheBits));
}

constexpr std::size_t kFirstArea = 64 * 1024;
constexpr std::size_t kAreaHeader = (sizeof(Area) + 63) & ~std::size_t{63};

thread_local ThreadPools* tl_pools __attribute__((tls_model("initial-exec"))) = nullptr;
thread_local bool tl_pools_done __attribute__((tls_model("initial-exec"))) = false;
pthread_key_t g_pools_key;
ThreadPools* g_idle_pools = nullptr;
std::atomic<bool> g_idle_lock{false};
std::atomic<std::size_t> g_areas{0}, g_area_bytes{0}, g_largest_area{0}, g_areas_released{0};
std::size_t g_max_area = 0;

void fork_prepare() noexcept { spin_lock(g_idle_lock); }
void fork_release() noexcept { spin_unlock(g_idle_lock); }

// Areas start on slice boundaries: a header at the same offset in each
// would put the headers of all pools (read at every malloc and free) in
// the same cache sets. The header lies at a colour, a multiple of 64 below
// 4 KiB, that the span's address determines.
inline std::size_t area_colour(const void* span) noexcept {
  return static_cast<std::size_t>((reinterpret_cast<std::uintptr_t>(span) >> 16) * 0x9e3779b97f4a7c15ULL >> 52) &
         0xfc0u;
}

Area* area_of(Segment* seg, const void* p) noexcept {
  std::uint8_t* span = page_of(seg, p)->start;
  return reinterpret_cast<Area*>(span + area_colour(span));
}
Area* area_of(const void* p) noexcept { return area_of(segment_of(p), p); }

Area* area_new(Pool& pool) noexcept {
  std::size_t bytes = pool.next_bytes != 0 ? pool.next_bytes : kFirstArea;
  if (bytes > g_max_area) bytes = g_max_area;
  void* mem = region_obtain(g_pools_region, bytes, g_config.slice_size);
  if (mem == nullptr) return nullptr;
  pool.next_bytes = bytes * 2;
  const std::size_t colour = area_colour(mem);
  auto* a = new (static_cast<std::uint8_t*>(mem) + colour) Area();
  a->pool = &pool;
  a->owner = pool.owner;
  a->start = a->bump = static_cast<std::uint8_t*>(mem) + colour + kAreaHeader;
  a->end = a->start + (bytes - colour - kAreaHeader) / pool.slot * pool.slot;
  a->span = mem;
  a->bytes = bytes;
  a->slot = pool.slot;
  a->next = pool.areas;
  if (a->next != nullptr) a->next->prev = a;
  pool.areas = a;
  g_areas.fetch_add(1, std::memory_order_relaxed);
  g_area_bytes.fetch_add(bytes, std::memory_order_relaxed);
  std::size_t largest = g_largest_area.load(std::memory_order_relaxed);
  while (bytes > largest && !g_largest_area.compare_exchange_weak(largest, bytes, std::memory_order_relaxed)) {
  }
  return a;
}

void partial_remove(Pool& pool, Area* a) noexcept {
  Area** link = &pool.partial;
  while (*link != a) link = &(*link)->next_partial;
  *link = a->next_partial;
  a->in_partial = false;
}

void area_release(Pool& pool, Area* a) noexcept {
  if (a->in_partial) partial_remove(pool, a);
  if (a->prev != nullptr) a->prev->next = a->next;
  else pool.areas = a->next;
  if (a->next != nullptr) a->next->prev = a->prev;
  if (pool.current == a) pool.current = nullptr;
  if (pool.spare == a) pool.spare = nullptr;
  const std::size_t bytes = a->bytes;
  void* span = a->span;
  // The next area starts again from the size of this one: a pool whose
  // objects come and go does not keep doubling.
  pool.next_bytes = bytes;
  a->~Area();
  region_give_back(g_pools_region, span, bytes);
  g_areas.fetch_sub(1, std::memory_order_relaxed);
  g_area_bytes.fetch_sub(bytes, std::memory_order_relaxed);
  g_areas_released.fetch_add(1, std::memory_order_relaxed);
}

// Temporaries: a pool all of whose objects died while its one area had
// carved fewer than kYoungSlots slots holds the site's young objects, not
// a structure to walk; the heap's size classes keep those hot in one
// page shared with other sites, while a pool per such site spreads them
// over an area each (a program of many temporary sites, robot_kinematics,
// then missed in L1 20x more often). After kYoungEmpties such times the
// site is demoted for good: left to the heap, on every thread.
constexpr std::size_t kYoungSlots = 64;
constexpr std::uint32_t kYoungEmpties = 16;

// true: the site was demoted and `a` given back (with the spare).
bool pool_emptied(Pool& pool, Area* a) noexcept {
  if (pool.areas != a || a->next != nullptr || static_cast<std::size_t>(a->bump - a->start) >= kYoungSlots * a->slot)
    return false;
  if (++pool.young_empties < kYoungEmpties) return false;  // (a demoted pool has no area left to empty)
  pool.slot = kDemoted;
  Site& site = g_sites[&pool - pool.owner->pools];
  if (site.state.exchange(kUnpooled, std::memory_order_acq_rel) == kPooled) {
    g_sites_pooled.fetch_sub(1, std::memory_order_relaxed);
    g_sites_unpooled.fetch_add(1, std::memory_order_relaxed);
    g_sites_demoted.fetch_add(1, std::memory_order_relaxed);
  }
  area_release(pool, a);
  if (pool.spare != nullptr) area_release(pool, pool.spare);
  return true;
}

// A slot freed back to its area by the owner.
void area_put(Pool& pool, Area* a, Block* b) noexcept {
  b->next = a->free;
  a->free = b;
  if (--a->live == 0) {
    if (a != pool.current) {
      // One emptied area is kept, carved again from its start, so that a
      // pool whose objects come and go does not map and unmap an area at
      // every turn; a second one goes back to the back end.
      if (pool.spare == nullptr) {
        if (a->in_partial) partial_remove(pool, a);
        a->bump = a->start;
        a->free = nullptr;
        pool.spare = a;
        return;
      }
      area_release(pool, a);
      return;
    }
    if (pool_emptied(pool, a)) return;
    a->bump = a->start;  // empty current area: carve again in address order
    a->free = nullptr;
    return;
  }
  if (a != pool.current && !a->in_partial) {
    a->in_partial = true;
    a->next_partial = pool.partial;
    pool.partial = a;
  }
}

void drain_remote(Pool& pool) noexcept {
  for (Area* a = pool.areas; a != nullptr;) {
    Area* next = a->next;  // a may be released
    Block* b = a->remote.exchange(nullptr, std::memory_order_acquire);
    while (b != nullptr) {
      Block* bn = b->next;
      const bool last = a->live == 1 && a != pool.current;
      area_put(pool, a, b);
      if (last) break;  // released: it held no other slot
      b = bn;
    }
    a = next;
  }
}

inline void* area_take(Area* a) noexcept {
  if (Block* b = a->free) {
    a->free = b->next;
    a->live++;
    return b;
  }
  if (a->bump < a->end) {
    void* p = a->bump;
    a->bump += a->slot;
    a->live++;
    return p;
  }
  return nullptr;
}

__attribute__((noinline)) void* pool_alloc_slow(Pool& pool) noexcept {
  if (pool.remote_pending.exchange(false, std::memory_order_acquire)) {
    drain_remote(pool);
    if (pool.current != nullptr)
      if (void* p = area_take(pool.current)) return p;
  }
  while (pool.partial != nullptr) {
    Area* a = pool.partial;
    pool.partial = a->next_partial;
    a->in_partial = false;
    pool.current = a;
    if (void* p = area_take(a)) return p;
  }
  Area* a = pool.spare;
  if (a != nullptr) pool.spare = nullptr;
  else a = area_new(pool);
  if (a == nullptr) return nullptr;
  pool.current = a;
  return area_take(a);
}

void thread_pools_done(void* value) noexcept {
  auto* tp = static_cast<ThreadPools*>(value);
  if (tp == nullptr) return;
  // Give back what is empty; the rest waits, with its live blocks, for the
  // thread that adopts these pools.
  for (std::uint32_t i = 0; i < tp->set_up_count; ++i) {
    Pool& pool = tp->pools[tp->set_up[i]];
    pool.remote_pending.store(false, std::memory_order_relaxed);
    drain_remote(pool);
    if (pool.current != nullptr && pool.current->live == 0) {
      Area* a = pool.current;
      pool.current = nullptr;
      area_release(pool, a);
    }
    if (pool.spare != nullptr) area_release(pool, pool.spare);
  }
  tl_pools = nullptr;
  tl_pools_done = true;
  spin_lock(g_idle_lock);
  tp->next_idle = g_idle_pools;
  g_idle_pools = tp;
  spin_unlock(g_idle_lock);
}

ThreadPools* thread_pools() noexcept {
  if (ThreadPools* tp = tl_pools) return tp;
  if (tl_pools_done) return nullptr;  // a destructor allocating after the thread's exit handler
  spin_lock(g_idle_lock);
  ThreadPools* tp = g_idle_pools;
  if (tp != nullptr) g_idle_pools = tp->next_idle;
  spin_unlock(g_idle_lock);
  if (tp == nullptr) {
    const std::size_t bytes = (sizeof(ThreadPools) + os::page_size() - 1) & ~(os::page_size() - 1);
    void* mem = os::reserve_aligned(bytes, os::page_size());  // zero: every pool not set up
    if (mem == nullptr) return nullptr;
    tp = new (mem) ThreadPools();
  }
  tp->next_idle = nullptr;
  tl_pools = tp;
  pthread_setspecific(g_pools_key, tp);
  return tp;
}

// Region hooks: free and usable size of a pooled block (from free_remote,
// usable_size and realloc, through the segment's region pool).
void free_in_area(Area* a, void* p) noexcept {
  auto* b = static_cast<Block*>(p);
  if (a->owner == tl_pools) {
    area_put(*a->pool, a, b);
    return;
  }
  Block* old = a->remote.load(std::memory_order_relaxed);
  do {
    b->next = old;
  } while (!a->remote.compare_exchange_weak(old, b, std::memory_order_release, std::memory_order_relaxed));
  a->pool->remote_pending.store(true, std::memory_order_release);
}

void hook_free(void*, void* p) noexcept { free_in_area(area_of(p), p); }

std::size_t hook_usable(void*, const void* p) noexcept { return area_of(p)->slot; }

// TAILOR_POOLS_REPORT=1: at exit, one line per pooled site on stderr
// ("tailor: pooled site <module> <offset> slot <bytes>", the offset as in
// a profile), so that the sites of the online monitor and of a profile can
// be compared.
bool g_report = false;

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
  if (!g_report) return;
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
    os::write_stderr(line);
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
    os::write_stderr(line);
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
  tailor_region_hooks hooks{};
  hooks.owner = nullptr;
  hooks.free = &hook_free;
  hooks.usable_size = &hook_usable;
  g_pools_region = region_pool_create(hooks);
  if (g_pools_region == nullptr) {
    os::write_stderr("tailor: TAILOR_POOLS: no memory for the pools; running without pools\n");
    return;
  }
  g_max_area = g_config.segment_size / 4 < (std::size_t{8} << 20) ? g_config.segment_size / 4 : std::size_t{8} << 20;
  pthread_key_create(&g_pools_key, &thread_pools_done);
  pthread_atfork(&fork_prepare, &fork_release, &fork_release);
  const char* report = os::getenv("TAILOR_POOLS_REPORT");
  g_report = report != nullptr && report[0] == '1';
  g_pools_mode.store(mode, std::memory_order_release);
}

namespace {

// A site met for the first time by this thread, or still monitored.
__attribute__((noinline)) void* pool_malloc_slow(std::size_t size, std::uintptr_t ra) noexcept {
  Site* s = site_find(ra);
  if (s == nullptr) return nullptr;
  const std::uint32_t state = s->state.load(std::memory_order_acquire);
  if (state == kMonitoring) {
    monitor(*s, size);
    return nullptr;
  }
  ThreadPools* tp = thread_pools();
  if (tp == nullptr) return nullptr;
  SiteCacheEntry& e = tp->cache[cache_index(ra)];
  if (state != kPooled) {
    e = SiteCacheEntry{ra, nullptr};
    return nullptr;
  }
  const std::uint32_t slot = s->slot.load(std::memory_order_relaxed);
  Pool& pool = tp->pools[s - g_sites];
  if (pool.slot == 0) {
    pool.slot = slot;
    pool.owner = tp;
    tp->set_up[tp->set_up_count++] = static_cast<std::uint16_t>(s - g_sites);
  }
  e = SiteCacheEntry{ra, &pool};
  if (round_slot(size) != slot) return nullptr;  // not the site's size: the heap serves it
  if (Area* a = pool.current)
    if (void* p = area_take(a)) return p;
  return pool_alloc_slow(pool);
}

}  // namespace

namespace {

// The heap, as malloc_inline would serve the request without pools.
[[gnu::always_inline]] inline void* heap_serves(Heap* h, std::size_t size) noexcept {
  if (void* p = malloc_fast_routed(h, size); __builtin_expect(p != nullptr, 1)) return p;
  return heap_malloc_unrouted(h, size);
}

// The routing's cases that call out (a site not in the thread's cache, a
// pool whose current area is used up): apart, so that pools_malloc's own
// paths end in tail calls and save no register.
__attribute__((noinline)) void* route_site_miss(Heap* h, std::size_t size, std::uintptr_t ra) noexcept {
  if (void* p = pool_malloc_slow(size, ra)) return p;
  return heap_serves(h, size);
}

__attribute__((noinline)) void* route_pool_refill(Heap* h, std::size_t size, Pool& pool) noexcept {
  if (void* p = pool_alloc_slow(pool)) return p;
  return heap_serves(h, size);
}

}  // namespace

void* pools_malloc(Heap* h, std::size_t size, const void* site) noexcept {
  const auto ra = reinterpret_cast<std::uintptr_t>(site);
  if (site != nullptr && size <= kPoolMaxRequest) {
    ThreadPools* tp = tl_pools;
    if (tp == nullptr) return route_site_miss(h, size, ra);
    const SiteCacheEntry& e = tp->cache[cache_index(ra)];
    if (e.ra != ra) return route_site_miss(h, size, ra);
    if (Pool* pool = e.pool; pool != nullptr && round_slot(size) == pool->slot) {
      if (Area* a = pool->current) {
        if (Block* b = a->free) {
          a->free = b->next;
          a->live++;
          return b;
        }
        if (a->bump < a->end) {
          void* p = a->bump;
          a->bump += a->slot;
          a->live++;
          return p;
        }
      }
      return route_pool_refill(h, size, *pool);
    }
  }
  return heap_serves(h, size);
}

void pools_free(Segment* seg, void* p) noexcept { free_in_area(area_of(seg, p), p); }

void pools_free_sized(Segment* seg, void* p, std::size_t size, const char* fn) noexcept {
  Area* a = area_of(seg, p);
  if (round_slot(size) != a->slot) {  // the pool serves only requests of its slot size
    misuse_wrong_size(fn, p, size, a->slot);
    return;
  }
  free_in_area(a, p);
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
  if (p == nullptr || g_pools_region == nullptr) return 0;
  Segment* seg = segment_of(p);
  if (!pools_own(seg)) return 0;
  return area_of(p)->slot;
}

}  // namespace tailor::alloc

using namespace tailor::alloc;

extern "C" {

void tailor_pools_get_stats(tailor_pools_stats* out) {
  if (out == nullptr) return;
  process_init();
  pools_get_stats(out);
}

size_t tailor_pool_slot_size(const void* p) { return pool_slot_size(p); }

}  // extern "C"
