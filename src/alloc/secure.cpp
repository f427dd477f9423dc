// SPDX-License-Identifier: MIT
// Secure mode (secure.h): checks on the thread heaps' own blocks (a trailer
// and canary at each block's end, zero on free, a quarantine), and regions
// with guard pages for large and zero-size blocks.
// Everything here runs inside malloc: no stdio, no allocation.
#include "alloc/secure.h"

#include <pthread.h>
#include <sched.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <atomic>
#include <bit>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <new>

#include "alloc/alloc.h"
#include "alloc/calloc_zero.h"
#include "alloc/config.h"
#include "alloc/heap.h"
#include "alloc/misuse.h"
#include "alloc/os.h"
#include "alloc/region.h"
#include "alloc/sized_out.h"
#include "alloc/spin_lock.h"
#include "tailor/tailor.h"

namespace tailor::alloc {

bool g_secure = false;
RegionPool* g_secure_region = nullptr;

namespace {

// SECURE_QUARANTINE and SECURE_ZERO (secure_init).
std::uint32_t g_quarantine = 0;
bool g_zero_free = false;

// tailor_secure_get_stats.
std::atomic<std::uint64_t> g_quarantined{0}, g_large{0}, g_unguarded{0}, g_meta_bytes{0};
std::atomic<std::uint64_t> g_large_bytes{0};  // regions of live large blocks (mallinfo2)

constexpr std::size_t kHeader = 16;            // before every large block: encoded size, check word
constexpr std::size_t kTrailer = 8;            // at the end of every heap block: its size and a check of it
constexpr std::size_t kFillMax = 64;           // with SECURE_ZERO=0: bytes of a freed heap block cleared (and its trailer), checked as it leaves the quarantine
constexpr std::uint32_t kQuarantineMax = 256;  // SECURE_QUARANTINE's limit
constexpr std::uint64_t kLargeReuseDelay = 2;  // large frees a freed large block's region waits for before reuse
constexpr std::size_t kCanaryMax = 16;         // canary bytes after a block, at most (up to its end)
constexpr std::size_t kRegionAlign = 64 * 1024;  // alignment of the zero-size blocks' regions
constexpr std::uint32_t kLargeMagic = 0x5ec1a46eu;

// ------------------------------------------------------------- secrets

std::uint64_t mix(std::uint64_t x) {  // splitmix64's finalizer
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9u;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebu;
  return x ^ (x >> 31);
}

std::uint64_t next_random(std::uint64_t& s) {
  s += 0x9e3779b97f4a7c15u;
  return mix(s);
}

std::uintptr_t addr(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

// The header of a block whose user bytes [p, p + n) start at p: a check
// word of the secret, p and n, then n itself. n is the word right before p,
// where delete[] reads its element count: a delete[] of a scalar block
// reads a small count, as under glibc, and reaches the check. One multiply:
// like any mix of (secret, p, n) it hides the secret only from a program
// that cannot read headers, which is what a check word is for (mix() above
// would not hide it better from one that can).
//
// Each byte's lowest bit is then made the opposite of its highest (56 bits
// of the word left to chance), so that the check word is also the canary:
// byte (a & 7) of it at every address a after a block's user bytes. No
// canary byte is 0x00 or 0xff, the values an off-by-one most often writes
// (a string's terminator, -1): those are always caught, any other value
// with a chance of 127/128. One word for both saves computing a second at
// every malloc and free; a program that can read the header could forge
// either anyway.
std::uint64_t check_word(std::uint64_t secret, const void* p, std::uint64_t n) {
  const std::uint64_t x = (secret ^ addr(p) ^ std::rotl(n, 40)) * 0x9e3779b97f4a7c15u;
  const std::uint64_t w = x ^ (x >> 31);
  return (w & 0xfefefefefefefefeu) | (~w >> 7 & 0x0101010101010101u);
}

// Words of user memory, any alignment, any type the program stored there
// (one mov each).
std::uint64_t load_word(const std::uint8_t* a) {
  std::uint64_t v;
  __builtin_memcpy(&v, a, sizeof v);
  return v;
}
void store_word(std::uint8_t* a, std::uint64_t v) { __builtin_memcpy(a, &v, sizeof v); }

// Whether [a, a + len) (len a multiple of 8) is all zero: ORed together 32
// bytes per step in two SSE2 accumulators (a word loop's dependency chain
// cost 80 instructions per block on mt_random_small), one branch at the end.
__attribute__((always_inline)) inline bool all_zero(const std::uint8_t* a, std::size_t len) {
  std::size_t k = 0;
#if defined(__SSE2__)
  __m128i x0 = _mm_setzero_si128(), x1 = x0;
  for (; k + 32 <= len; k += 32) {
    x0 = _mm_or_si128(x0, _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + k)));
    x1 = _mm_or_si128(x1, _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + k + 16)));
  }
  if (k + 16 <= len) {
    x0 = _mm_or_si128(x0, _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + k)));
    k += 16;
  }
  const std::uint64_t rest = k < len ? load_word(a + k) : 0;
  return _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_or_si128(x0, x1), _mm_setzero_si128())) == 0xffff && rest == 0;
#else
  std::uint64_t acc = 0;
  for (; k < len; k += 8) acc |= load_word(a + k);
  return acc == 0;
#endif
}

std::uint8_t pattern_byte(std::uint64_t w, const std::uint8_t* a) {
  return static_cast<std::uint8_t>(w >> (8 * (addr(a) & 7)));
}
// The pattern as an 8-byte word stored at a (any alignment).
std::uint64_t pattern_at(std::uint64_t w, const std::uint8_t* a) {
  return std::rotr(w, static_cast<int>(8 * (addr(a) & 7)));
}

// The first byte of [a, end) that differs from the pattern, or nullptr.
std::uint8_t* differs(std::uint8_t* a, std::uint8_t* end, std::uint64_t w) {
  if (end - a >= 8) {
    for (; a + 8 <= end; a += 8)
      if (load_word(a) != pattern_at(w, a)) break;
    if (a + 8 > end) {
      if (a == end || load_word(end - 8) == pattern_at(w, end - 8)) return nullptr;
      a = end - 8;
    }
  }
  for (; a < end; ++a)
    if (*a != pattern_byte(w, a)) return a;
  return nullptr;
}

// The canary: [a, end), 1 to kCanaryMax (16) bytes at any alignment, in at
// most two unaligned words: the word that ends at `end` (with fewer than 8
// bytes, the bytes before `a` in it are the block's own and are kept), and
// with more than 8 the word at `a` (the two overlap below 16).
std::uint64_t tail_mask(std::ptrdiff_t len) {  // the last len bytes (len >= 1) of a little-endian word
  return len >= 8 ? ~std::uint64_t{0} : ~std::uint64_t{0} << (8 * (8 - len));
}
__attribute__((always_inline)) inline void fill_canary(std::uint8_t* a, std::uint8_t* end, std::uint64_t w) {
  const std::uint64_t mask = tail_mask(end - a);
  store_word(end - 8, (load_word(end - 8) & ~mask) | (pattern_at(w, end - 8) & mask));
  if (end - a > 8) store_word(a, pattern_at(w, a));
}
// Whether the canary is intact, without a branch on its bytes.
__attribute__((always_inline)) inline bool canary_intact(std::uint8_t* a, std::uint8_t* end, std::uint64_t w) {
  std::uint64_t diff = (load_word(end - 8) ^ pattern_at(w, end - 8)) & tail_mask(end - a);
  if (end - a > 8) diff |= load_word(a) ^ pattern_at(w, a);
  return diff == 0;
}
std::uint8_t* differs_canary(std::uint8_t* a, std::uint8_t* end, std::uint64_t w) {
  return canary_intact(a, end, w) ? nullptr : differs(a, end, w);
}
static_assert(kCanaryMax <= 16, "fill_canary covers at most two words");

struct Large {
  std::uint32_t magic;  // kLargeMagic
  bool guarded;
  std::uint8_t* base;   // the region
  std::size_t bytes;
  std::uint8_t* user;   // the block's user bytes; the header is before them
  std::uint8_t* end;    // the guard page (or the region's end)
  std::uint64_t secret;
  std::atomic<bool> live;
  bool watch;  // handed out purged or fresh: at its free, its resident pages are what the program touched
};

// The first page of a large block (its header's), from which its pages run
// to the guard page: what clearing covers and what its free counts.
std::uint8_t* first_page(const Large* m) {
  return reinterpret_cast<std::uint8_t*>(addr(m->user - kHeader) & ~(os::page_size() - 1));
}

// Metadata lives in mappings of its own, never next to blocks: carved from
// 1 MiB chunks, recycled through free lists by size (64-byte units).
constexpr std::size_t kMetaUnit = 64, kMetaChunk = 1 << 20, kMetaLists = 128;
SpinLock g_meta_lock;
void* g_meta_free[kMetaLists + 1];
std::uint8_t* g_meta_bump = nullptr;
std::uint8_t* g_meta_end = nullptr;

void* meta_alloc(std::size_t bytes) {
  const std::size_t units = (bytes + kMetaUnit - 1) / kMetaUnit;
  if (units > kMetaLists) return nullptr;
  void* m;
  {
    std::lock_guard guard(g_meta_lock);
    m = g_meta_free[units];
    if (m != nullptr) {
      g_meta_free[units] = *static_cast<void**>(m);
    } else {
      if (g_meta_bump == nullptr || g_meta_bump + units * kMetaUnit > g_meta_end) {
        auto* chunk = static_cast<std::uint8_t*>(os::reserve_aligned(kMetaChunk, os::page_size()));
        if (chunk == nullptr) return nullptr;
        g_meta_bump = chunk;
        g_meta_end = chunk + kMetaChunk;
        g_meta_bytes.fetch_add(kMetaChunk, std::memory_order_relaxed);
      }
      m = g_meta_bump;
      g_meta_bump += units * kMetaUnit;
    }
  }
  std::memset(m, 0, units * kMetaUnit);
  return m;
}

void meta_free(void* m, std::size_t bytes) {
  const std::size_t units = (bytes + kMetaUnit - 1) / kMetaUnit;
  std::memset(m, 0, units * kMetaUnit);  // a stale lookup finds no magic
  std::lock_guard guard(g_meta_lock);
  *static_cast<void**>(m) = g_meta_free[units];
  g_meta_free[units] = m;
}

RegionPool* region() {
  RegionPool* rp = __atomic_load_n(&g_secure_region, __ATOMIC_ACQUIRE);
  while (rp == nullptr) {  // another thread is still setting secure mode up
    sched_yield();
    rp = __atomic_load_n(&g_secure_region, __ATOMIC_ACQUIRE);
  }
  return rp;
}

// Whether a region just obtained from the pool reads as zero (fresh from
// the OS or purged since its last use); with SECURE_ZERO one that does not
// is cleared before its first block is handed out.
bool region_reads_zero(const void* base) {
  const Page* pg = region_page(segment_of(base), base);
  return pg != nullptr && pg->is_zero != 0;
}

// Gives a region back to the pool, its guard page (its last OS page) made
// accessible again first. A region whose guard cannot be lifted is kept:
// the pool must never hand out a page that faults.
void region_release(std::uint8_t* base, std::size_t bytes, bool guarded) {
  const std::size_t page = os::page_size();
  if (guarded && !os::protect(base + bytes - page, page, true)) return;
  region_give_back(region(), base, bytes);
}

// are the block's room to grow in place (realloc), which a long overflow
// crosses into the next block or a guard page.
std::uint8_t* canary_end(std::uint8_t* from, std::uint8_t* end) {
  return static_cast<std::size_t>(end - from) > kCanaryMax ? from + kCanaryMax : end;
}

// Header and canary of a block handed out: user bytes [p, p + n), the block
// ends at `end`.
__attribute__((always_inline)) inline void arm(std::uint64_t secret, std::uint8_t* p, std::size_t n, std::uint8_t* end) {
  const std::uint64_t check = check_word(secret, p, n);
  store_word(p - kHeader, check);
  store_word(p - 8, n);
  fill_canary(p + n, canary_end(p + n, end), check);
}

// ----------------------------------------------------------------- large

// Freed large regions kept for reuse with their guard page in place: a program that frees and allocates large blocks again and
// again (buffers, vectors that grow) pays no mprotect, no mapping change and
// no page faults each time, which on several threads also means no fight
// for the kernel's lock on the address space. A region serves requests that
// need from 4/5 of its size up to all of it; at most kLargeSpares regions
// of at most kLargeSpareMax bytes each, HEAP_CACHE / 4 bytes in all. Their
// region word is null, so a free into one is reported as a free of no live
// block.
//
// With SECURE_ZERO a freed region is cleared at once (by calloc's rule) and
// checked at its reuse (large_release, check_cleared): a read through a
// dangling pointer reads zeros, a write is reported when the region serves
// its next block. (Made no-access instead, as it was, each free and reuse
// cost two mprotects of its resident pages, three times the memset, and
// TLB shootdowns to every core.) With SECURE_QUARANTINE a kept region is
// not handed out again before kLargeReuseDelay more large blocks are freed.
constexpr unsigned kLargeSpares = 64;
constexpr std::size_t kLargeSpareMax = std::size_t{16} << 20;
// Every member has an initializer, so that g_large_spare is initialized
// at compile time (constinit): with some left out, its constructor ran as
// a dynamic initializer when libtailor's constructors ran, after another
// library's constructor could already have freed large blocks into it
// (perf's libnuma: the spares it kept lost their seal flag).
struct LargeSpare {
  std::uint8_t* base = nullptr;
  std::size_t bytes = 0;
  bool guarded = false;
  bool zero = false;           // cleared at its free (SECURE_ZERO): reads as zero, but for writes after free
  bool purged = false;         // ... by purging: its pages are not resident (a memset leaves them so)
  std::uint64_t freed_at = 0;  // g_large_frees when it was kept
};
SpinLock g_spare_lock;
constinit LargeSpare g_large_spare[kLargeSpares];  // g_spare_lock
unsigned g_large_spare_count = 0;
std::size_t g_large_spare_bytes = 0, g_large_spare_budget = 0;
std::uint64_t g_large_frees = 0;  // large regions kept so far (g_spare_lock)

bool large_spare_pop(std::size_t bytes, LargeSpare& out) {
  if (bytes > kLargeSpareMax) return false;
  std::lock_guard guard(g_spare_lock);
  unsigned best = kLargeSpares;
  for (unsigned i = 0; i < g_large_spare_count; ++i) {
    const std::size_t b = g_large_spare[i].bytes;
    if (g_quarantine != 0 && g_large_frees - g_large_spare[i].freed_at < kLargeReuseDelay) continue;
    if (b >= bytes && b - bytes <= b / 5 && (best == kLargeSpares || b < g_large_spare[best].bytes)) best = i;
  }
  const bool ok = best != kLargeSpares;
  if (ok) {
    out = g_large_spare[best];
    g_large_spare[best] = g_large_spare[--g_large_spare_count];
    g_large_spare_bytes -= out.bytes;
  }
  return ok;
}

bool large_spare_push(const LargeSpare& sp) {
  if (sp.bytes > kLargeSpareMax) return false;
  std::lock_guard guard(g_spare_lock);
  const bool ok = g_large_spare_count < kLargeSpares && g_large_spare_bytes + sp.bytes <= g_large_spare_budget;
  if (ok) {
    g_large_spare[g_large_spare_count] = sp;
    g_large_spare[g_large_spare_count++].freed_at = ++g_large_frees;
    g_large_spare_bytes += sp.bytes;
  }
  return ok;
}

// A secret for a large block: from a generator per thread, seeded by the OS.
thread_local std::uint64_t tl_rng __attribute__((tls_model("initial-exec"))) = 0;
std::uint64_t large_secret() {
  if (tl_rng == 0) tl_rng = os::random64() | 1;
  return next_random(tl_rng);
}

// A kept region cleared at its last block's free, checked before its reuse:
// its resident pages (mincore; a page purged and not touched since is
// not read, nor faulted in) must read as zero. A page written after the
// free is reported and cleared again (TAILOR_ON_ERROR=warn goes on).
void check_cleared(std::uint8_t* base, std::size_t body) {
  const std::size_t page = os::page_size();
  unsigned char vec[256];
  for (std::size_t off = 0; off < body; off += sizeof vec * page) {
    const std::size_t len = body - off < sizeof vec * page ? body - off : sizeof vec * page;
    const bool known = os::resident_map(base + off, len, vec);
    for (std::size_t i = 0; i * page < len; ++i) {
      std::uint8_t* pg = base + off + i * page;
      if ((known && (vec[i] & 1) == 0) || all_zero(pg, page)) continue;
      std::size_t at = 0;
      while (pg[at] == 0) ++at;
      misuse_report("malloc", "write after free in the large block region at", base, "its byte ",
                    static_cast<std::uint64_t>(pg + at - base), " changed after its block was freed");
      std::memset(pg, 0, page);
    }
  }
}

// Makes [from, from + bytes) read as zero (from page-aligned, bytes whole
// pages) and says whether it purged: by giving the pages back if
// calloc_zero.h's policy says the program leaves most pages of such blocks
// untouched (and `watched` says the policy applies: a block of at least
// kCallocPurgeMin), else by writing zeros (one that fills its blocks would
// pay a fault per page). The zeros go by non-temporal stores: the region
// is not touched again before it serves another block, so its lines need
// not come into the cache, read before they are written, nor push the
// program's own out (secure large_churn 12% faster than by memset,
// huge_churn 19%, in interleaved rounds).
bool clear_region(std::uint8_t* from, std::size_t bytes, bool watched) {
  if (watched && zeroing_purge_pays() && os::purge(from, bytes)) return true;
#if defined(__SSE2__)
  const __m128i z = _mm_setzero_si128();
  for (std::size_t k = 0; k < bytes; k += 64) {
    _mm_stream_si128(reinterpret_cast<__m128i*>(from + k), z);
    _mm_stream_si128(reinterpret_cast<__m128i*>(from + k + 16), z);
    _mm_stream_si128(reinterpret_cast<__m128i*>(from + k + 32), z);
    _mm_stream_si128(reinterpret_cast<__m128i*>(from + k + 48), z);
  }
  _mm_sfence();  // the stores are seen before the region is published (its lock)
#else
  std::memset(from, 0, bytes);
#endif
  return false;
}

__attribute__((noinline)) void* large_malloc(std::size_t size, std::size_t align, std::size_t capacity) {
  const std::size_t page = os::page_size();
  const std::size_t need = ((kHeader + capacity + 1 + align + page - 1) & ~(page - 1)) + page;
  LargeSpare sp{nullptr, need, false};
  const bool reused = large_spare_pop(need, sp);
  if (reused && g_zero_free && sp.zero) check_cleared(sp.base, sp.bytes - page);
  if (!reused) {
    sp.base = static_cast<std::uint8_t*>(region_obtain(region(), need, page));
    if (sp.base == nullptr) {
      errno = ENOMEM;
      return nullptr;
    }
  }
  auto* m = static_cast<Large*>(meta_alloc(sizeof(Large)));
  if (m == nullptr) {
    if (!reused || !large_spare_push(sp)) region_release(sp.base, sp.bytes, sp.guarded);
    errno = ENOMEM;
    return nullptr;
  }
  m->magic = kLargeMagic;
  m->base = sp.base;
  m->bytes = sp.bytes;
  m->end = sp.base + sp.bytes - page;
  m->secret = large_secret();
  m->guarded = reused ? sp.guarded : os::protect(m->end, page, false);
  if (!m->guarded) g_unguarded.fetch_add(1, std::memory_order_relaxed);
  g_large.fetch_add(1, std::memory_order_relaxed);
  g_large_bytes.fetch_add(sp.bytes, std::memory_order_relaxed);
  // The block (with its room to grow) ends 1 to `align` bytes before the guard page.
  m->user = reinterpret_cast<std::uint8_t*>((addr(m->end) - capacity - 1) & ~(align - 1));
  m->live.store(true, std::memory_order_relaxed);
  region_set_word(sp.base, m);
  // A kept region reads as zero (SECURE_ZERO); one from the pool may hold
  // an earlier block's bytes: cleared whole (clear_region).
  const std::size_t span = static_cast<std::size_t>(m->end - first_page(m));
  bool zero = reused ? sp.zero : region_reads_zero(sp.base);
  // Whether its pages are not resident (purged, or fresh from the OS), so
  // that those resident at its free are the ones the program touched: what
  // the purge-or-write policy learns from. A region cleared by a memset is
  // all resident and says nothing.
  bool untouched = reused ? sp.purged : zero;
  if (g_zero_free && !zero) {
    // The whole region (the block and the page or alignment below it): a
    // spare must read as zero all through (check_cleared).
    const std::size_t body = static_cast<std::size_t>(m->end - m->base);
    untouched = clear_region(m->base, body, span >= kCallocPurgeMin);
  }
  m->watch = g_zero_free && untouched && span >= kCallocPurgeMin;
  arm(m->secret, m->user, size, m->end);
  return m->user;
}

void large_release(Large* m) {
  region_set_word(m->base, nullptr);
  if (!m->guarded) g_unguarded.fetch_sub(1, std::memory_order_relaxed);
  g_large.fetch_sub(1, std::memory_order_relaxed);
  g_large_bytes.fetch_sub(m->bytes, std::memory_order_relaxed);
  LargeSpare sp{m->base, m->bytes, m->guarded};
  std::uint8_t* from = first_page(m);  // the block's pages: the rest of the region reads as zero
  const std::size_t span = static_cast<std::size_t>(m->end - from);
  if (g_zero_free && m->watch) zeroing_observe(from, span);
  meta_free(m, sizeof(Large));
  if (g_zero_free && sp.bytes <= kLargeSpareMax) {
    // Cleared now (clear_region): the region is kept whole reading as zero,
    // and checked at its reuse.
    sp.purged = clear_region(from, span, span >= kCallocPurgeMin);
    sp.zero = true;
  }
  if (!large_spare_push(sp)) region_release(sp.base, sp.bytes, sp.guarded);
  // Back to the region pool: the pool knows a span it has not purged since
  // from one that reads as zero, and whoever obtains it next here clears
  // it (region_reads_zero).
}

// ------------------------------------------------------ zero-size blocks

// malloc(0) (and new of 0 bytes, aligned requests of 0 up to 16): a distinct
// address in a region without access, so that a read or write through it
// faults at the access, before and after the free (hardened_malloc's
// zero-size class). The region comes from the secure pool, so free,
// realloc and malloc_usable_size reach secure mode's hooks through the
// segment mask as for any block; its pages are given back, it is
// protected at once and never touched: address space, no memory. Its
// addresses go out 16 bytes apart from its 17th byte on and are not reused
// (a free gives nothing back); a bit per address, in the region's
// metadata, says which are live, so a double free of one is caught. A
// spent region is followed by a new one.
constexpr std::size_t kZeroRegion = std::size_t{512} << 10;  // 32,767 zero-size blocks
constexpr std::uint32_t kZeroMagic = 0x5ec02e40u;
struct ZeroRegion {
  std::uint32_t magic;  // kZeroMagic; first, where a Large keeps its magic
  std::uint8_t* base;
  std::uint64_t live[kZeroRegion / 16 / 64];  // bit i: base + 16 i handed out and not freed
};
static_assert(sizeof(ZeroRegion) <= 128 * 64, "within meta_alloc's largest unit count");
SpinLock g_zero_lock;
std::uint8_t* g_zero_next = nullptr;
std::uint8_t* g_zero_end = nullptr;
ZeroRegion* g_zero = nullptr;  // the region g_zero_next is in

// nullptr when no region can be had: the caller serves the request as a
// 1-byte block instead.
void* zero_malloc() {
  std::lock_guard guard(g_zero_lock);
  if (g_zero_next == g_zero_end) {
    auto* base = static_cast<std::uint8_t*>(region_obtain(g_secure_region, kZeroRegion, kRegionAlign));
    auto* z = base != nullptr ? static_cast<ZeroRegion*>(meta_alloc(sizeof(ZeroRegion))) : nullptr;
    // The pool hands out resident pages first: give them back, or they
    // would stay resident behind the protection.
    if (base != nullptr) os::purge(base, kZeroRegion);
    if (z == nullptr || !os::protect(base, kZeroRegion, false)) {
      if (z != nullptr) meta_free(z, sizeof(ZeroRegion));
      if (base != nullptr) region_give_back(g_secure_region, base, kZeroRegion);
      return nullptr;
    }
    z->magic = kZeroMagic;
    z->base = base;
    std::memset(z->live, 0, sizeof z->live);
    region_set_word(base, z);
    g_zero = z;
    g_zero_next = base + 16;  // (p - 1) masked to 64 KiB stays in the region
    g_zero_end = base + kZeroRegion;
  }
  void* p = g_zero_next;
  const std::size_t i = static_cast<std::size_t>(g_zero_next - g_zero->base) / 16;
  __atomic_fetch_or(&g_zero->live[i / 64], std::uint64_t{1} << (i % 64), __ATOMIC_RELAXED);
  g_zero_next += 16;
  return p;
}

// ------------------------------------------------------------ heap blocks

// The trailer of a block another thread's heap owns, freed here with
// SECURE_ZERO: only its first kFillMax bytes are cleared (where objects keep
// their pointers, vtables and counts), and the owner's next malloc of it
// clears the rest. Cleared whole here, every line of it would move to this
// core and back to the owner's, which writes it when it uses it again
// (mt_server took 3.2 s so, 1.5 s with this).
// Not a trailer (top bit clear), not zero.
constexpr std::uint64_t kForeignMark = 0x7e5ec0de7e5ec0deu;

// A heap block [blk, blk + bs) holding n bytes ends in its trailer word: n
// in the low 32 bits, a check of (secret, blk, n) in the next 31, and the
// top bit set. Any byte of it changed (an overflow that reaches the block's
// end, an underflow of the next block) fails the check but with a chance
// of 2^-31. A freed block's trailer is zero, so a second free finds no
// trailer.
std::uint64_t g_secret = 0;  // secure_init

__attribute__((always_inline)) inline std::uint64_t trailer_word(const void* blk, std::uint64_t n) {
  const std::uint64_t x = (g_secret ^ addr(blk) ^ (n << 40)) * 0x9e3779b97f4a7c15u;
  return ((x ^ (x >> 29)) & 0xffffffff00000000u) | (std::uint64_t{1} << 63) | n;
}
// A trailer word is read by other threads too (the free of the block
// above checks it), so it is read and written whole, as an atomic word
// (relaxed: a plain load or store on x86-64, and ThreadSanitizer sees it).
// Blocks are at least 24 bytes (kMinBlock), so no trailer is one of the two
// words the heap's free lists write (link and freed mark).
constexpr std::size_t kMinBlock = 24;
__attribute__((always_inline)) inline std::uint64_t trailer_load(const std::uint8_t* tr) {
  return __atomic_load_n(reinterpret_cast<const std::uint64_t*>(tr), __ATOMIC_RELAXED);
}
__attribute__((always_inline)) inline void trailer_store(std::uint8_t* tr, std::uint64_t v) {
  __atomic_store_n(reinterpret_cast<std::uint64_t*>(tr), v, __ATOMIC_RELAXED);
}

// The canary's pattern: the trailer's bytes, each made to differ from 0x00
// and 0xff (check_word).
__attribute__((always_inline)) inline std::uint64_t canary_of(std::uint64_t t) {
  return (t & 0xfefefefefefefefeu) | (~t >> 7 & 0x0101010101010101u);
}
// Whether t is the trailer of a live block of size bs at blk.
__attribute__((always_inline)) inline bool trailer_ok(const std::uint8_t* blk, std::size_t bs, std::uint64_t t) {
  const std::uint64_t n = t & 0xffffffffu;
  return n <= bs - kTrailer && t == trailer_word(blk, n);
}

// The trailer and canary of a block of bs bytes at blk holding n bytes.
__attribute__((always_inline)) inline void arm_block(std::uint8_t* blk, std::size_t bs, std::size_t n) {
  std::uint8_t* tr = blk + bs - kTrailer;
  const std::uint64_t t = trailer_word(blk, n);
  trailer_store(tr, t);
  if (blk + n < tr) fill_canary(blk + n, canary_end(blk + n, tr), canary_of(t));
}

// A heap block for n bytes with room for need - kTrailer (need at most
// MIDDLE_MAX), aligned to `align` (at most a slice).
__attribute__((always_inline)) inline void* heap_block_malloc(std::size_t n, std::size_t need, std::size_t align) {
  if (need < kMinBlock) need = kMinBlock;
  Heap* h = tl_heap;
  if (h == &g_empty_heap && (h = heap_get()) == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  void* b = nullptr;
  if (align <= 16) {
    if (need <= kDirectMax) b = pop_direct(h->routed_direct[(need + 7) >> 3]);
    if (b == nullptr) b = heap_malloc_plain(h, need);
  } else {
    b = heap_malloc_aligned_on(h, need, align);
  }
  if (b == nullptr) return nullptr;
  auto* blk = static_cast<std::uint8_t*>(b);
  const Page* pg = page_of(segment_of(blk), blk);
  // A large page (an aligned request) may hold an earlier block's bytes.
  if (pg->kind == PageKind::kLarge && g_zero_free && !pg->is_zero) std::memset(blk, 0, pg->block_size);
  const std::size_t bs = pg->block_size;
  if (trailer_load(blk + bs - kTrailer) == kForeignMark) std::memset(blk + kFillMax, 0, bs - kFillMax - kTrailer);
  store_word(blk, 0);  // the heap's free-list link and freed mark (block_key)
  store_word(blk + 8, 0);
  arm_block(blk, bs, n);
  return blk;
}

// The blocks a thread freed last, held back (SECURE_QUARANTINE): a ring,
// full when len is g_quarantine, head its oldest.
struct Quarantine {
  std::uint32_t head, len;
  struct Slot {
    std::uint8_t* blk;
    std::size_t bs;
  } slot[kQuarantineMax];
};

// What a freed heap block's clearing covers but for its trailer, which is
// cleared on its own (trailer_store): the rest of it (SECURE_ZERO), else its
// first kFillMax bytes.
std::size_t cleared_len(std::size_t bs) { return g_zero_free || bs <= kFillMax ? bs - kTrailer : kFillMax; }

// heap_block_release's report, out of its way.
[[gnu::cold, gnu::noinline]] void report_written_after_free(std::uint8_t* blk, std::size_t len, std::size_t bs) {
  std::size_t at = 0;
  while (at < len && blk[at] == 0) ++at;
  misuse_report("free", "write after free in the block at", blk, "its byte ",
                static_cast<std::uint64_t>(at < len ? at : bs - kTrailer),
                " changed after it was freed, found as it left the quarantine");
  std::memset(blk, 0, len);  // TAILOR_ON_ERROR=warn goes on: the block reads as zero again
  trailer_store(blk + bs - kTrailer, 0);
}

// Back to the heap: a block that leaves the quarantine, checked for writes
// since its free, on the free list of its page (this thread's heap's or,
// through its remote list, the owner's).
__attribute__((always_inline)) inline void heap_block_release(Heap* h, std::uint8_t* blk, std::size_t bs) {
  const std::uint64_t mark = trailer_load(blk + bs - kTrailer);
  const std::size_t len = mark == kForeignMark ? kFillMax : cleared_len(bs);
  if (__builtin_expect(!all_zero(blk, len) || (mark != 0 && mark != kForeignMark), 0))
    report_written_after_free(blk, len, bs);
  Segment* seg = segment_of(blk);
  if (seg->heap.load(std::memory_order_relaxed) == h) free_owned(h, page_of(seg, blk), blk);
  else free_remote(seg, blk);
}

Quarantine* quarantine_of(Heap* h) {
  if (h->secure_quarantine == nullptr) {
    const std::size_t bytes = (sizeof(Quarantine) + os::page_size() - 1) & ~(os::page_size() - 1);
    h->secure_quarantine = os::reserve_aligned(bytes, os::page_size());  // zero: empty
    if (h->secure_quarantine != nullptr) g_meta_bytes.fetch_add(bytes, std::memory_order_relaxed);
  }
  return static_cast<Quarantine*>(h->secure_quarantine);
}

// A checked block freed: cleared, then into the thread's quarantine, whose
// oldest block, when it is full, goes back to the heap. A block comes back
// no sooner than g_quarantine frees of the thread later, so a dangling
// pointer does not reach the next owner of its size at once
// (hardened_malloc's delayed reuse; Scudo's quarantine holds bytes).
__attribute__((always_inline)) inline void heap_block_free(std::uint8_t* blk, Segment* seg, std::size_t bs) {
  Heap* h = tl_heap;
  if (g_zero_free && bs > kFillMax + kTrailer && seg->heap.load(std::memory_order_relaxed) != h) {
    std::memset(blk, 0, kFillMax);
    trailer_store(blk + bs - kTrailer, kForeignMark);
  } else {
    std::memset(blk, 0, cleared_len(bs));
    trailer_store(blk + bs - kTrailer, 0);
  }
  if (h == &g_empty_heap && (h = heap_get()) == nullptr) return;  // no heap for this thread: the block stays out of use
  Quarantine* q = g_quarantine != 0 ? quarantine_of(h) : nullptr;
  if (q == nullptr) {
    heap_block_release(h, blk, bs);
    return;
  }
  Quarantine::Slot& slot = q->slot[q->head];
  q->head = q->head + 1 == g_quarantine ? 0 : q->head + 1;
  if (q->len < g_quarantine) {
    q->len++;
    slot = Quarantine::Slot{blk, bs};
    g_quarantined.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const Quarantine::Slot out = slot;
  slot = Quarantine::Slot{blk, bs};
  heap_block_release(h, out.blk, out.bs);
}

// ----------------------------------------------------------------- checks

// What a checked pointer is: a heap block, a zero-size block or a large block.
struct Found {
  ZeroRegion* zero = nullptr;  // a zero-size block's region (n = 0, nothing else set)
  Large* large = nullptr;
  std::uint8_t* blk = nullptr;  // a heap block: its start, and bs its size
  std::size_t bs = 0;
  std::uint8_t* end = nullptr;  // the block's end (the canary's; a heap block's trailer)
  std::size_t n = 0;            // the size asked for
  std::uint64_t secret = 0;
};

bool frees(const char* fn) { return fn[0] == 'f' || fn[0] == 'o'; }  // free, free_sized, operator delete

// The header and canary of the large block whose user bytes would start at p.
bool header_and_canary(const char* fn, std::uint8_t* p, Found& f) {
  const std::uint64_t n = load_word(p - 8), check = load_word(p - kHeader);
  if (n >= static_cast<std::uint64_t>(f.end - p) || check != check_word(f.secret, p, n)) {
    misuse_report(fn, "heap underflow or corruption before", p, "the block's 16-byte header was overwritten",
                  kNoNumber, nullptr);
    return false;
  }
  f.n = n;
  if (std::uint8_t* bad = differs_canary(p + n, canary_end(p + n, f.end), check); bad != nullptr) {
    misuse_report(fn, "heap overflow past the end of", p, "the block of ", n,
                  bad == p + n ? " bytes: the byte right after it was overwritten" : " bytes: bytes after it were overwritten");
    return false;
  }
  return true;
}

// The reports of heap_block_check, out of its way.
[[gnu::cold, gnu::noinline]] void report_trailer(const char* fn, std::uint8_t* p, std::size_t bs, std::uint64_t t) {
  if (t == 0 || t == kForeignMark) {
    misuse_report(fn, frees(fn) ? "double free of" : "block already freed:", p, "block of ", bs,
                  " bytes, already free");
    return;
  }
  // An overflow of a block that fills its slot reaches the trailer's low
  // bytes first: the size whose check the rest of the trailer still holds.
  for (std::uint64_t n = 0; n <= bs - kTrailer; ++n)
    if (((trailer_word(p, n) ^ t) >> 32) == 0) {
      misuse_report(fn, "heap overflow past the end of", p, "the block of ", n,
                    n == bs - kTrailer ? " bytes: the byte right after it was overwritten"
                                       : " bytes: bytes after it (its trailer) were overwritten");
      return;
    }
  misuse_report(fn, "heap overflow past the end of", p, "the block of ", bs - kTrailer,
                " bytes at most: its trailer (the size word at its end) was overwritten");
}
[[gnu::cold, gnu::noinline]] void report_canary(const char* fn, std::uint8_t* p, std::size_t n, std::uint8_t* bad) {
  misuse_report(fn, "heap overflow past the end of", p, "the block of ", n,
                bad == p + n ? " bytes: the byte right after it was overwritten" : " bytes: bytes after it were overwritten");
}
[[gnu::cold, gnu::noinline]] void report_underflow(const char* fn, std::uint8_t* p, std::size_t n) {
  misuse_report(fn, "heap underflow before", p, "the block of ", n,
                " bytes: the word before it (the trailer of the block below) was overwritten");
}

// A heap block's checks: its start, its trailer (a second free finds it
// cleared), its canary, and the trailer of the block before it on its page
// (zero if that one is free or never used), which an underflow of this one
// overwrites first.
__attribute__((always_inline)) inline bool heap_block_check(const char* fn, std::uint8_t* p, Segment* seg, Found& f) {
  Page* pg = page_of(seg, p);
  if (__builtin_expect((pg->kind != PageKind::kClass && pg->kind != PageKind::kLarge) || !block_start_ok(pg, p) ||
                           block_key(p) == g_free_key,
                       0)) {
    misuse_in_segment(fn, seg, p);  // interior, or on the heap's free list
    return false;
  }
  const std::size_t bs = pg->block_size;
  std::uint8_t* tr = p + bs - kTrailer;
  const std::uint64_t t = trailer_load(tr);
  if (__builtin_expect(!trailer_ok(p, bs, t), 0)) {
    report_trailer(fn, p, bs, t);
    return false;
  }
  f.blk = p;
  f.bs = bs;
  f.end = tr;
  f.n = t & 0xffffffffu;
  if (std::uint8_t* from = p + f.n; from < tr) {
    std::uint8_t* to = canary_end(from, tr);
    if (__builtin_expect(!canary_intact(from, to, canary_of(t)), 0)) {
      report_canary(fn, p, f.n, differs(from, to, canary_of(t)));
      return false;
    }
  }
  if (pg->kind == PageKind::kClass && p != pg->start) {
    const std::uint64_t before = trailer_load(p - kTrailer);
    if (__builtin_expect(before != 0 && before != kForeignMark && !trailer_ok(p - bs, bs, before), 0)) {
      report_underflow(fn, p, f.n);
      return false;
    }
  }
  return true;
}

// Checks p; true with f filled.
bool locate(const char* fn, void* ptr, Found& f) {
  auto* p = static_cast<std::uint8_t*>(ptr);
  Segment* seg = segment_of(p);
  if (!segment_known(seg)) {
    misuse_unknown(fn, p);
    return false;
  }
  if (!secure_owns(seg)) {
    if (seg->kind == SegmentKind::kRegion || seg->kind == SegmentKind::kHuge) {  // no block of secure mode's
      misuse_report(fn, "invalid pointer", p, "not a block of secure mode", kNoNumber, nullptr);
      return false;
    }
    return heap_block_check(fn, p, seg, f);
  }
  const auto* magic = static_cast<const std::uint32_t*>(region_word(seg, p));
  if (magic != nullptr && *magic == kZeroMagic) {
    auto* z = const_cast<ZeroRegion*>(reinterpret_cast<const ZeroRegion*>(magic));
    if (((p - z->base) & 15) != 0 || p == z->base) {
      misuse_report(fn, "invalid pointer", p, "not a zero-size block: ", static_cast<std::uint64_t>(p - z->base),
                    " bytes into their no-access region");
      return false;
    }
    const std::size_t i = static_cast<std::size_t>(p - z->base) / 16;
    if ((__atomic_load_n(&z->live[i / 64], __ATOMIC_RELAXED) & (std::uint64_t{1} << (i % 64))) == 0) {
      misuse_report(fn, frees(fn) ? "double free of" : "block already freed:", p, "zero-size block, already free",
                    kNoNumber, nullptr);
      return false;
    }
    f.zero = z;
    return true;
  }
  if (magic != nullptr && *magic == kLargeMagic) {
    auto* m = const_cast<Large*>(reinterpret_cast<const Large*>(magic));
    if (p != m->user) {
      misuse_report(fn, "invalid pointer", p, "not the start of a block: ", static_cast<std::uint64_t>(p - m->user),
                    p > m->user ? " bytes into a large block" : " bytes before a large block");
      return false;
    }
    f.large = m;
    f.end = m->end;
    f.secret = m->secret;
    return header_and_canary(fn, p, f);
  }
  misuse_report(fn, frees(fn) ? "double or invalid free of" : "invalid pointer", p,
                "in no live block of secure mode: freed already, or never allocated", kNoNumber, nullptr);
  return false;
}

// secure_free of anything but a heap block (found through locate).
[[gnu::noinline]] void free_located(const char* fn, void* ptr, bool sized, std::size_t size) noexcept {
  Found f;
  if (!locate(fn, ptr, f)) return;
  if (sized && size != f.n) {
    misuse_wrong_size(fn, ptr, size, f.n);
    return;
  }
  if (f.blk != nullptr) {
    heap_block_free(f.blk, segment_of(f.blk), f.bs);
    return;
  }
  if (f.zero != nullptr) {  // nothing to give back (zero_malloc); the bit, once
    const std::size_t i = static_cast<std::size_t>(static_cast<std::uint8_t*>(ptr) - f.zero->base) / 16;
    const std::uint64_t bit = std::uint64_t{1} << (i % 64);
    if ((__atomic_fetch_and(&f.zero->live[i / 64], ~bit, __ATOMIC_RELAXED) & bit) == 0)  // two threads freeing it at once
      misuse_report(fn, "double free of", ptr, "zero-size block, already free", kNoNumber, nullptr);
    return;
  }
  if (!f.large->live.exchange(false, std::memory_order_acq_rel)) {  // two threads freeing it at once
    misuse_report(fn, "double free of", ptr, "large block of ", f.n, " bytes, already free");
    return;
  }
  large_release(f.large);
}

}  // namespace

void secure_free(const char* fn, void* ptr, bool sized, std::size_t size) noexcept {
  auto* p = static_cast<std::uint8_t*>(ptr);
  Segment* seg = segment_of(p);
  if (__builtin_expect(!segment_known(seg) || seg->kind != SegmentKind::kNormal, 0)) {
    free_located(fn, ptr, sized, size);
    return;
  }
  // A heap block, the common case: no look-up of the region's word.
  Found f;
  if (!heap_block_check(fn, p, seg, f)) return;
  if (__builtin_expect(sized && size != f.n, 0)) {
    misuse_wrong_size(fn, ptr, size, f.n);
    return;
  }
  heap_block_free(p, seg, f.bs);
}

void secure_heap_done(Heap* h) noexcept {
  auto* q = static_cast<Quarantine*>(h->secure_quarantine);
  if (q == nullptr || g_quarantine == 0) return;
  // Oldest first, from the head.
  const std::uint32_t len = q->len, first = len < g_quarantine ? 0 : q->head;
  q->head = q->len = 0;
  for (std::uint32_t k = 0; k < len; ++k) {
    const Quarantine::Slot s = q->slot[(first + k) % g_quarantine];
    g_quarantined.fetch_sub(1, std::memory_order_relaxed);
    heap_block_release(h, s.blk, s.bs);
  }
}

namespace {

void hook_free(void*, void* p) { secure_free("free", p, false, 0); }
size_t hook_usable(void*, const void* p) { return secure_usable("malloc_usable_size", const_cast<void*>(p)); }

void fork_prepare() {
  g_zero_lock.lock();
  g_spare_lock.lock();
  g_meta_lock.lock();
}
void fork_parent() {
  g_meta_lock.unlock();
  g_spare_lock.unlock();
  g_zero_lock.unlock();
}

}  // namespace

void secure_init() noexcept {
  if (!g_secure) return;
  if (g_config.dmm[0] != '\0' || g_config.value[static_cast<int>(Param::kPools)] != 0 ||
      os::getenv("TAILOR_POOLS_FILE") != nullptr)
    os::write_stderr("tailor: TAILOR_SECURE=1: the DMM and call-site pools set are not used in secure mode\n");
  g_quarantine = static_cast<std::uint32_t>(g_config.value[static_cast<int>(Param::kSecureQuarantine)]);
  g_zero_free = g_config.value[static_cast<int>(Param::kSecureZero)] != 0;
  g_large_spare_budget = g_config.heap_cache_bytes / 4;
  g_secret = os::random64();
  tailor_region_hooks hooks{};
  hooks.free = &hook_free;
  hooks.usable_size = &hook_usable;
  RegionPool* rp = region_pool_create(hooks);
  if (rp == nullptr) {
    os::write_stderr("tailor: TAILOR_SECURE=1: cannot set secure mode up (no memory); aborting\n");
    abort();
  }
  // After the pool's own handlers: ours run first at a fork and take our
  // locks before the pool's, the order in which malloc takes them.
  pthread_atfork(&fork_prepare, &fork_parent, &fork_parent);
  __atomic_store_n(&g_secure_region, rp, __ATOMIC_RELEASE);
}

namespace {
// A block of `size` bytes with room for `capacity` (>= size) to grow in place.
void* allocate(std::size_t size, std::size_t align, std::size_t capacity) {
  if (align < 16) align = 16;
  if (capacity > PTRDIFF_MAX - align - (std::size_t{1} << 20)) {
    errno = ENOMEM;
    return nullptr;
  }
  if (capacity + kTrailer <= g_config.middle_max && align <= g_config.slice_size) {
    return heap_block_malloc(size, capacity + kTrailer, align);
  }
  return large_malloc(size, align, capacity);
}
}  // namespace

void* secure_malloc(std::size_t size, std::size_t align) noexcept {
  // malloc's requests straight to the heap (no alignment or overflow to
  // weigh); the rest through allocate's checks.
  if (align <= 16 && size < g_config.middle_max - kTrailer) {
    if (__builtin_expect(size == 0, 0)) {
      if (void* z = zero_malloc()) return z;  // else (no region for it) a heap block of 0 bytes
    }
    return heap_block_malloc(size, size + kTrailer, 16);
  }
  return allocate(size, align, size);
}

bool secure_zeroes() noexcept { return g_zero_free; }

void secure_totals(HeapTotals& out) noexcept {
  std::uint64_t spare_bytes, spares;
  {
    std::lock_guard guard(g_spare_lock);
    spare_bytes = g_large_spare_bytes;
    spares = g_large_spare_count;
  }
  const std::uint64_t large = g_large_bytes.load(std::memory_order_relaxed);
  out.arena += large + spare_bytes;
  out.used += large;
  out.free_chunks += spares;
  out.releasable += spare_bytes;
}

bool secure_check(const char* fn, void* p, bool sized, std::size_t size) noexcept {
  Found f;
  if (!locate(fn, p, f)) return false;
  if (sized && size != f.n) {
    misuse_wrong_size(fn, p, size, f.n);
    return false;
  }
  return true;
}

std::size_t secure_usable(const char* fn, void* p) noexcept {
  Found f;
  if (!locate(fn, p, f)) return 0;
  return f.n;
}

void* secure_realloc(void* ptr, std::size_t size) noexcept {
  auto* p = static_cast<std::uint8_t*>(ptr);
  Found f;
  if (!locate("realloc", p, f)) {
    errno = EINVAL;
    return nullptr;
  }
  if (f.zero != nullptr || size == 0) {  // nothing to copy from a zero-size block; realloc(p, 0) frees, as glibc's
    void* q = size == 0 ? nullptr : secure_malloc(size, 16);
    if (q != nullptr || size == 0) secure_free("realloc", p, false, 0);
    return q;
  }
  if (f.blk != nullptr) {
    const std::size_t room = f.bs - kTrailer;
    if (size <= room && size >= room / 2) {
      if (size > f.n) std::memset(p + f.n, 0, size - f.n);  // the canary's bytes
      arm_block(p, f.bs, size);
      return p;
    }
  } else {
    const std::size_t room = static_cast<std::size_t>(f.end - p) - 1;  // keeps one canary byte
    if (size <= room && size >= room / 2) {
      arm(f.secret, p, size, f.end);
      return p;
    }
  }
  // A block that has to move to grow gets room to grow further (a quarter
  // more, half more above 128 KiB, as the default mode), so that a block
  // grown step by step is copied O(log n) times.
  std::size_t capacity = size;
  if (size > f.n) {
    const std::size_t roomy = f.n + (f.n > (std::size_t{128} << 10) ? f.n / 2 : f.n / 4);
    if (roomy > size) capacity = roomy;
  }
  void* q = allocate(size, 16, capacity);
  if (q == nullptr) return nullptr;  // p is left untouched
  std::memcpy(q, p, f.n < size ? f.n : size);
  secure_free("realloc", p, false, 0);
  return q;
}

}  // namespace tailor::alloc

extern "C" void tailor_secure_get_stats_sized(tailor_secure_stats* out, size_t size) {
  using namespace tailor::alloc;
  if (out == nullptr) return;
  process_init();
  tailor_secure_stats st{};
  if (g_secure) {
    st.active = 1;
    st.quarantined = g_quarantined.load(std::memory_order_relaxed);
    st.large_blocks = g_large.load(std::memory_order_relaxed);
    st.unguarded = g_unguarded.load(std::memory_order_relaxed);
    st.metadata_bytes = g_meta_bytes.load(std::memory_order_relaxed);
  }
  copy_out(st, out, size);
}
