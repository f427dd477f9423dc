// SPDX-License-Identifier: MIT
// Secure mode (secure.h): slabs and large regions with guard pages, blocks
// with encoded headers and canaries, metadata in mappings of its own.
// Everything here runs inside malloc: no stdio, no allocation.
#include "alloc/secure.h"

#include <pthread.h>
#include <sched.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <array>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <new>

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
std::atomic<std::uint64_t> g_slabs{0}, g_large{0}, g_unguarded{0}, g_meta_bytes{0};
std::atomic<std::uint64_t> g_large_bytes{0};  // regions of live large blocks (mallinfo2)

constexpr std::size_t kSlabBytes = 64 * 1024;  // a slab's region, its guard page included
constexpr std::size_t kHeader = 16;            // before every block: encoded size, check word
constexpr std::size_t kSlabMax = 8 * 1024;     // largest block (header + size + canary) on a slab
constexpr std::size_t kFillMax = 64;           // with SECURE_ZERO=0: bytes of a freed block filled (its header and first 48 bytes), checked at reuse
constexpr std::uint32_t kQuarantineMax = 256;  // SECURE_QUARANTINE's limit
constexpr std::uint64_t kLargeReuseDelay = 2;  // large frees a freed large block's region waits for before reuse
constexpr std::size_t kCanaryMax = 16;         // canary bytes after a block, at most (up to its end)
constexpr unsigned kClasses = 31;              // 32..128 by 16, then 4 per doubling up to 8 KiB
constexpr std::uint32_t kSlabMagic = 0x5ec51ab0u, kLargeMagic = 0x5ec1a46eu;

// --------------------------------------------------------------- classes

constexpr std::size_t class_size(unsigned c) {
  if (c < 7) return (c + 2) * 16;
  const unsigned e = 7 + (c - 7) / 4, k = (c - 7) % 4;
  return (std::size_t{1} << e) + (k + 1) * (std::size_t{1} << (e - 2));
}

constexpr unsigned class_of_need(std::size_t need) {  // 1 <= need <= kSlabMax
  if (need <= 128) return need <= 32 ? 0 : static_cast<unsigned>((need + 15) / 16 - 2);
  const unsigned e = 63 - static_cast<unsigned>(__builtin_clzll(need - 1));
  const std::size_t k = (need - 1 - (std::size_t{1} << e)) >> (e - 2);
  return 7 + (e - 7) * 4 + static_cast<unsigned>(k);
}

// Every class size is a multiple of 16, so the class of a need is the class
// of its 16-byte granule: one table load on malloc's path.
constexpr auto kClassOfGranule = [] {
  std::array<std::uint8_t, kSlabMax / 16 + 1> t{};
  for (std::size_t g = 1; g < t.size(); ++g) t[g] = static_cast<std::uint8_t>(class_of_need(g * 16));
  return t;
}();
static_assert(kClassOfGranule[kSlabMax / 16] == kClasses - 1 && kClassOfGranule[2] == 0 && kClassOfGranule[3] == 1);
static_assert([] {
  for (unsigned c = 0; c < kClasses; ++c)
    if (class_size(c) % 16 != 0 || class_of_need(class_size(c)) != c || class_of_need(class_size(c) + 1) != c + 1)
      return false;
  return true;
}(), "class sizes are multiples of 16, and a need's class is the smallest that holds it");

__attribute__((always_inline)) inline unsigned class_index(std::size_t need) {  // 1 <= need <= kSlabMax
  return kClassOfGranule[(need + 15) / 16];
}

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

std::uint64_t fill_word(std::uint64_t secret) { return mix(secret ^ 0xf4eef4eef4eef4eeu); }

// Words of user memory, any alignment, any type the program stored there
// (one mov each).
std::uint64_t load_word(const std::uint8_t* a) {
  std::uint64_t v;
  __builtin_memcpy(&v, a, sizeof v);
  return v;
}
void store_word(std::uint8_t* a, std::uint64_t v) { __builtin_memcpy(a, &v, sizeof v); }

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

// The fill of a freed block: [blk, blk + len) with blk 16-aligned and len a
// multiple of 16 (block sizes are), at least 32, so the pattern is w at
// every word: 16 bytes per SSE2 store. The check ORs the differences
// together without a branch per chunk, and looks for the first changed byte
// only when there is one.
#if defined(__SSE2__)
__attribute__((always_inline)) inline void fill_block(std::uint8_t* blk, std::size_t len, std::uint64_t w) {
  const __m128i v = _mm_set1_epi64x(static_cast<long long>(w));
  auto* q = reinterpret_cast<__m128i*>(blk);
  for (std::size_t k = 0; k < len / 16; ++k) _mm_store_si128(q + k, v);
}
__attribute__((always_inline)) inline std::uint8_t* differs_block(std::uint8_t* blk, std::size_t len, std::uint64_t w) {
  const __m128i v = _mm_set1_epi64x(static_cast<long long>(w));
  const auto* q = reinterpret_cast<const __m128i*>(blk);
  __m128i changed = _mm_xor_si128(_mm_load_si128(q), v);
  for (std::size_t k = 1; k < len / 16; ++k) changed = _mm_or_si128(changed, _mm_xor_si128(_mm_load_si128(q + k), v));
  if (__builtin_expect(_mm_movemask_epi8(_mm_cmpeq_epi8(changed, _mm_setzero_si128())) == 0xffff, 1)) return nullptr;
  return differs(blk, blk + len, w);
}
#else
void fill_block(std::uint8_t* blk, std::size_t len, std::uint64_t w) {
  for (std::size_t k = 0; k < len; k += 8) store_word(blk + k, w);
}
std::uint8_t* differs_block(std::uint8_t* blk, std::size_t len, std::uint64_t w) {
  std::uint64_t changed = 0;
  for (std::size_t k = 0; k < len; k += 8) changed |= load_word(blk + k) ^ w;
  return changed == 0 ? nullptr : differs(blk, blk + len, w);
}
#endif

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

// ------------------------------------------------------------- metadata

struct SecureHeap;

// A slab's metadata, in a mapping of its own. The owner thread (the heap
// that made the slab, for the slab's whole life) takes and frees blocks
// without a lock; another thread's free sets the block's bit in `remote`
// and lists the slab on the owner's remote list, and the owner takes those
// bits back when it needs blocks (collect).
//
// In cache lines by writer, as libtailor's page descriptors (segment.h):
// the slab's shape, set once and read by every thread that frees into it;
// the owner's counters and links, written at every malloc and free; what
// other threads write when they list the slab. Sharing a line, every free
// from another thread missed on the line the owner kept writing. The
// bitmaps start on lines of their own for the same reason (remote is
// written by other threads, in_use, fresh and the stack by the owner).
struct alignas(64) Slab {
  // The shape (line 1).
  std::uint32_t magic;  // kSlabMagic
  std::uint32_t bs;     // block size
  std::uint32_t count;  // blocks
  std::uint16_t words;  // of each bitmap, a multiple of 8 (whole lines)
  std::uint16_t fill_len;  // bytes of a freed block filled from its start: the block (SECURE_ZERO) or kFillMax
  std::uint32_t reciprocal;  // ceil(2^32 / bs): offset * reciprocal >> 32 is offset / bs for offsets in a slab
  std::uint16_t cls;
  bool guarded;
  std::uint8_t* base;   // the region (kSlabBytes, the guard page last)
  std::uint8_t* first;  // the first block; the last ends at the guard page
  std::uint64_t secret;
  std::uint64_t fill;    // 0 (SECURE_ZERO) or fill_word(secret)
  SecureHeap* owner;
  // The owner's (line 2).
  alignas(64) std::uint32_t used;  // not free on the owner's side: in use, or freed by another thread and not collected yet
  std::uint32_t top;         // freed blocks on the stack
  std::uint32_t fresh_word;  // no fresh block below this word of the bitmap
  bool current, listed;      // listed: on its bin's partial list
  Slab* next;  // the bin's list of slabs with free blocks (not its current one)
  Slab* prev;
  // Other threads' (line 3).
  alignas(64) bool remote_listed;  // on the owner's remote list (atomic accesses)
  Slab* remote_next;               // the owner's remote list
  // In use: written by the owner only (atomic stores), read by any thread.
  std::uint64_t* in_use() { return reinterpret_cast<std::uint64_t*>(this + 1); }
  std::uint64_t* fresh() { return in_use() + words; }   // never handed out (owner only)
  std::uint64_t* remote() { return fresh() + words; }   // freed by other threads, not collected (atomic)
  std::uint16_t* stack() { return reinterpret_cast<std::uint16_t*>(remote() + words); }
  static std::uint32_t words_for(std::uint32_t count) { return (count + 511) / 512 * 8; }
  static std::size_t bytes(std::uint32_t count) {
    return sizeof(Slab) + 24 * std::size_t{words_for(count)} + 2 * std::size_t{count};
  }
};
static_assert(sizeof(Slab) == 192 && offsetof(Slab, used) == 64 && offsetof(Slab, remote_listed) == 128,
              "a slab's metadata is three cache lines: shape, owner's, other threads'");

struct Large {
  std::uint32_t magic;  // kLargeMagic
  bool guarded;
  std::uint8_t* base;   // the region
  std::size_t bytes;
  std::uint8_t* user;   // the block's user bytes; the header is before them
  std::uint8_t* end;    // the guard page (or the region's end)
  std::uint64_t secret;
  std::atomic<bool> live;
  bool watch;  // handed out reading as zero: at its free, its resident pages are what the program touched
};

// The first page of a large block (its header's), from which its pages run
// to the guard page: what clearing covers and what its free counts.
std::uint8_t* first_page(const Large* m) {
  return reinterpret_cast<std::uint8_t*>(addr(m->user - kHeader) & ~(os::page_size() - 1));
}

// A thread's secure heap: per class, a current slab and a list of slabs
// with free blocks. Heaps live for ever: a thread that exits leaves its heap
// idle, the next new thread adopts it, and meanwhile the threads that free
// its blocks collect them (state kBusy while one does).
enum : std::uint32_t { kOwned = 0, kIdle = 1, kBusy = 2 };

struct Bin {
  Slab* current;
  Slab* partial;
  std::uint32_t kept;  // empty slabs on `partial` that settle could not release (a free was under way)
};

// A block freed by its owner and held back (SECURE_QUARANTINE): its in-use
// bit is clear (a second free is a double free), but it is not on its
// slab's stack and still counts in `used`, so it is not handed out, and its
// slab is not released, until it leaves the quarantine.
struct Quarantined {
  Slab* slab;
  std::uint32_t index;
};

struct alignas(64) SecureHeap {
  Bin bins[kClasses];
  std::uint64_t rng;
  std::uint64_t used_bytes;  // blocks of its slabs not free on its side, in block sizes (mallinfo2; atomic stores)
  SecureHeap* next_all;   // every heap (fork)
  SecureHeap* next_idle;  // the idle list
  // The quarantine, a ring of the owner's last g_quarantine frees: full,
  // q_head is the oldest, which the next free pushes out.
  std::uint32_t q_head, q_len;
  Quarantined quarantine[kQuarantineMax];
  // Written by other threads (atomic accesses).
  alignas(64) Slab* remote_slabs;  // slabs with blocks freed by other threads
  std::uint32_t in_flight;         // other threads' frees under way: no slab is released meanwhile
  std::uint32_t state;             // kOwned, kIdle, kBusy
  std::uint32_t kept;              // the bins' kept slabs in all (read by the thread that leaves an idle heap)
};

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

// ----------------------------------------------------------------- heaps

// The heap's in-use bytes: written by whoever holds the heap, read by mallinfo2.
void count_used(SecureHeap* h, std::int64_t delta) {
  __atomic_store_n(&h->used_bytes, h->used_bytes + static_cast<std::uint64_t>(delta), __ATOMIC_RELAXED);
}

thread_local SecureHeap* tl_sheap __attribute__((tls_model("initial-exec"))) = nullptr;
pthread_key_t g_heap_key;
SpinLock g_heaps_lock;
SecureHeap* g_heaps_all = nullptr;
SecureHeap* g_heaps_idle = nullptr;

SecureHeap* heap_attach() {
  region();  // secure_init has finished (the thread key exists)
  SecureHeap* h = nullptr;
  {
    std::lock_guard guard(g_heaps_lock);
    for (SecureHeap** pp = &g_heaps_idle; *pp != nullptr; pp = &(*pp)->next_idle) {
      std::uint32_t idle = kIdle;  // not one a freeing thread is collecting
      if (__atomic_compare_exchange_n(&(*pp)->state, &idle, kOwned, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
        h = *pp;
        *pp = h->next_idle;
        break;
      }
    }
  }
  if (h == nullptr) {
    h = static_cast<SecureHeap*>(meta_alloc(sizeof(SecureHeap)));
    if (h == nullptr) return nullptr;
    h->rng = os::random64();
    h->state = kOwned;
    std::lock_guard guard(g_heaps_lock);
    h->next_all = g_heaps_all;
    g_heaps_all = h;
  }
  tl_sheap = h;  // before pthread_setspecific, which may allocate
  pthread_setspecific(g_heap_key, h);
  return h;
}

// ----------------------------------------------------------------- slabs

// Emptied slab regions kept for reuse, guard page in place, up to
// HEAP_CACHE bytes in all: a program that frees a large structure and
// builds it again pays neither the mprotect calls nor the page faults
// again (as the thread heaps' resident free spans). Their region word is
// null, so a free into one is reported as a free of no live block.
struct Spare {
  std::uint8_t* base;
  bool guarded;
};
SpinLock g_spare_lock;
Spare* g_spare = nullptr;  // a stack, in a mapping of its own
std::size_t g_spare_count = 0, g_spare_max = 0;

bool spare_pop(Spare& out) {
  std::lock_guard guard(g_spare_lock);
  const bool ok = g_spare_count > 0;
  if (ok) out = g_spare[--g_spare_count];
  return ok;
}

bool spare_push(const Spare& sp) {
  std::lock_guard guard(g_spare_lock);
  const bool ok = g_spare_count < g_spare_max;
  if (ok) g_spare[g_spare_count++] = sp;
  return ok;
}

Slab* slab_new(unsigned cls, SecureHeap* h) {
  const std::size_t page = os::page_size(), usable = kSlabBytes - page;
  Spare sp{nullptr, false};
  const bool reused = spare_pop(sp);
  if (!reused) {
    sp.base = static_cast<std::uint8_t*>(region_obtain(region(), kSlabBytes, kSlabBytes));
    if (sp.base == nullptr) return nullptr;
    if (g_zero_free && !region_reads_zero(sp.base)) std::memset(sp.base, 0, usable);  // fresh blocks read as zero
  }
  std::uint8_t* base = sp.base;
  const auto bs = static_cast<std::uint32_t>(class_size(cls));
  const auto count = static_cast<std::uint32_t>(usable / bs);
  auto* s = static_cast<Slab*>(meta_alloc(Slab::bytes(count)));
  if (s == nullptr) {
    if (!reused || !spare_push(sp)) region_release(base, kSlabBytes, sp.guarded);
    return nullptr;
  }
  s->magic = kSlabMagic;
  s->bs = bs;
  s->count = count;
  s->words = static_cast<std::uint16_t>(Slab::words_for(count));
  s->reciprocal = static_cast<std::uint32_t>(((std::uint64_t{1} << 32) + bs - 1) / bs);
  s->cls = static_cast<std::uint16_t>(cls);
  s->owner = h;
  s->base = base;
  s->first = base + (usable - std::size_t{count} * bs);
  s->secret = next_random(h->rng);
  s->fill = g_zero_free ? 0 : fill_word(s->secret);
  s->fill_len = static_cast<std::uint16_t>(g_zero_free || bs < kFillMax ? bs : kFillMax);
  for (std::uint32_t w = 0; w < count / 64; ++w) s->fresh()[w] = ~std::uint64_t{0};
  if (count % 64 != 0) s->fresh()[count / 64] = (std::uint64_t{1} << (count % 64)) - 1;
  // If the kernel refuses (its limit on mappings), the slab has no guard.
  s->guarded = reused ? sp.guarded : os::protect(base + usable, page, false);
  if (!s->guarded) g_unguarded.fetch_add(1, std::memory_order_relaxed);
  g_slabs.fetch_add(1, std::memory_order_relaxed);
  region_set_word(base, s);
  return s;
}

void slab_release(Slab* s) {
  region_set_word(s->base, nullptr);
  if (!s->guarded) g_unguarded.fetch_sub(1, std::memory_order_relaxed);
  g_slabs.fetch_sub(1, std::memory_order_relaxed);
  const Spare sp{s->base, s->guarded};
  meta_free(s, Slab::bytes(s->count));
  if (!spare_push(sp)) region_release(sp.base, kSlabBytes, sp.guarded);
}

void unlink_partial(Bin& b, Slab* s) {
  if (s->prev != nullptr) s->prev->next = s->next;
  else b.partial = s->next;
  if (s->next != nullptr) s->next->prev = s->prev;
  s->next = s->prev = nullptr;
  s->listed = false;
}

void link_partial(Bin& b, Slab* s) {
  s->prev = nullptr;
  s->next = b.partial;
  if (b.partial != nullptr) b.partial->prev = s;
  b.partial = s;
  s->listed = true;
}

// Puts a slab that is not current where it belongs after blocks of it were
// freed: released when empty, otherwise on its bin's partial list if it has
// a free block. An empty slab stays on the partial list while another
// thread is still freeing into the owner's slabs (counted as kept: see
// release_kept) or has it listed (collect settles it again).
//
// The in-flight count first: a thread whose block was just collected may
// still be listing the slab, and it leaves the count only after listing. So
// a count of 0 means the flag is read after any such listing.
void settle(SecureHeap* h, Slab* s) {
  Bin& b = h->bins[s->cls];
  if (s->used == 0) {
    if (__atomic_load_n(&h->in_flight, __ATOMIC_SEQ_CST) == 0) {
      if (!__atomic_load_n(&s->remote_listed, __ATOMIC_SEQ_CST)) {
        if (s->listed) unlink_partial(b, s);
        slab_release(s);
        return;
      }
    } else {
      b.kept++;
      __atomic_store_n(&h->kept, h->kept + 1, __ATOMIC_RELAXED);
    }
  }
  if (!s->listed && s->used < s->count) link_partial(b, s);  // a full one may be listed with nothing to collect
}

// Releases the empty slabs settle kept, once no free is under way. A live
// heap would reuse them (they are on its partial lists); an idle one would
// keep them until a new thread adopts it, which may never come, so the
// thread that leaves an idle heap calls this (heap_done, collect_idle).
void release_kept(SecureHeap* h) {
  if (h->kept == 0 || __atomic_load_n(&h->in_flight, __ATOMIC_SEQ_CST) != 0) return;
  for (Bin& b : h->bins) {
    if (b.kept == 0) continue;
    b.kept = 0;
    for (Slab* s = b.partial; s != nullptr;) {
      Slab* next = s->next;
      if (s->used == 0 && !__atomic_load_n(&s->remote_listed, __ATOMIC_SEQ_CST)) {
        unlink_partial(b, s);
        slab_release(s);
      }
      s = next;
    }
  }
  __atomic_store_n(&h->kept, 0u, __ATOMIC_RELAXED);
}

// Whether the thread that just left idle heap h must take it up again:
// frees listed slabs meanwhile, or kept slabs wait and no free is under way
// (a free under way, leaving, finds the heap idle and collects: its
// decrement and our load of the count, our store of kIdle and its load of
// the state are ordered, so one of the two sees the other).
bool idle_needs_collect(SecureHeap* h) {
  return __atomic_load_n(&h->remote_slabs, __ATOMIC_SEQ_CST) != nullptr ||
         (__atomic_load_n(&h->kept, __ATOMIC_RELAXED) != 0 && __atomic_load_n(&h->in_flight, __ATOMIC_SEQ_CST) == 0);
}

// Takes back the blocks other threads freed into h's slabs (h's owner, or a
// thread that holds h in state kBusy).
void collect(SecureHeap* h) {
  Slab* s = __atomic_exchange_n(&h->remote_slabs, nullptr, __ATOMIC_ACQUIRE);
  while (s != nullptr) {
    Slab* next = s->remote_next;  // before the flag: a freeing thread may list s again at once
    __atomic_store_n(&s->remote_listed, false, __ATOMIC_SEQ_CST);
    for (std::uint32_t w = 0, used_words = (s->count + 63) / 64; w < used_words; ++w) {  // not the padding
      if (__atomic_load_n(&s->remote()[w], __ATOMIC_RELAXED) == 0) continue;
      std::uint64_t bits = __atomic_exchange_n(&s->remote()[w], 0, __ATOMIC_SEQ_CST);
      __atomic_store_n(&s->in_use()[w], s->in_use()[w] & ~bits, __ATOMIC_RELAXED);
      s->used -= static_cast<std::uint32_t>(__builtin_popcountll(bits));
      count_used(h, -static_cast<std::int64_t>(s->bs) * __builtin_popcountll(bits));
      for (; bits != 0; bits &= bits - 1) {
        const auto i = static_cast<std::uint16_t>(w * 64 + static_cast<unsigned>(__builtin_ctzll(bits)));
        s->stack()[s->top++] = i;
        // The rest of a block another thread freed (free_checked cleared its
        // first kFillMax bytes); a write there meanwhile is erased, one into
        // its first bytes is still found at its reuse.
        if (s->fill_len > kFillMax)
          fill_block(s->first + std::size_t{i} * s->bs + kFillMax, s->fill_len - kFillMax, s->fill);
      }
    }
    if (!s->current) settle(h, s);
    s = next;
  }
}

// Collects for an idle heap (its thread exited), as long as frees keep
// listing slabs and no other thread is at it.
void collect_idle(SecureHeap* h) {
  for (;;) {
    std::uint32_t idle = kIdle;
    if (!__atomic_compare_exchange_n(&h->state, &idle, kBusy, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) return;
    collect(h);
    release_kept(h);
    __atomic_store_n(&h->state, kIdle, __ATOMIC_SEQ_CST);
    if (!idle_needs_collect(h)) return;
  }
}

void quarantine_flush(SecureHeap* h);

// A thread's exit: what other threads freed is collected, current slabs go
// back to their lists (or are released), and the heap is left idle.
void heap_done(void* value) {
  auto* h = static_cast<SecureHeap*>(value);
  quarantine_flush(h);
  collect(h);
  for (Bin& b : h->bins) {
    if (Slab* s = b.current; s != nullptr) {
      b.current = nullptr;
      s->current = false;
      settle(h, s);
    }
  }
  release_kept(h);
  tl_sheap = nullptr;
  {
    std::lock_guard guard(g_heaps_lock);
    __atomic_store_n(&h->state, kIdle, __ATOMIC_SEQ_CST);
    h->next_idle = g_heaps_idle;
    g_heaps_idle = h;
  }
  if (idle_needs_collect(h)) collect_idle(h);
}

// A fresh block of s (none freed on the stack, used < count), at random
// among the next 16 fresh blocks of the bitmap: the order of neighbours is
// unpredictable, while blocks allocated together stay within a few cache
// lines of each other, as a program's traversals and the hardware
// prefetchers expect (mimalloc's secure build shuffles within a page's
// extension the same way).
__attribute__((always_inline)) inline std::uint32_t take_fresh(Slab* s, std::uint64_t& rng) {
  std::uint32_t w = s->fresh_word;
  while (s->fresh()[w] == 0) ++w;  // a fresh block exists: used + top < count
  s->fresh_word = w;
  const std::uint64_t bits = s->fresh()[w];
  const auto lo = static_cast<unsigned>(__builtin_ctzll(bits));
  const std::uint64_t window = (bits >> lo) & 0xffff;  // fresh among the 16 blocks from the first fresh one
  const auto r = static_cast<unsigned>(next_random(rng) & 15);
  const std::uint64_t rotated = ((window >> r) | (window << (16 - r))) & 0xffff;  // the first at or after r
  const std::uint32_t i = w * 64 + lo + ((static_cast<unsigned>(__builtin_ctzll(rotated)) + r) & 15);
  s->fresh()[w] &= ~(std::uint64_t{1} << (i % 64));
  return i;
}

// The canary's end: up to kCanaryMax bytes after the block's user bytes, at
// most to its end. Contiguous overflows cross these first; farther bytes
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

// The current slab of the bin when it has no free block: blocks freed by
// other threads are collected, then a slab with free blocks or a new one.
Slab* refill(SecureHeap* h, Bin& b, unsigned cls) {
  if (__atomic_load_n(&h->remote_slabs, __ATOMIC_RELAXED) != nullptr) collect(h);
  Slab* s = b.current;
  if (s != nullptr) {
    if (s->used < s->count) return s;
    s->current = false;  // full: on no list until a free
  }
  s = b.partial;
  if (s != nullptr) unlink_partial(b, s);
  else s = slab_new(cls, h);
  b.current = s;
  if (s != nullptr) s->current = true;
  return s;
}

// A freed block's fill, checked as it is handed out again. Reported; with
// TAILOR_ON_ERROR=warn the block is used all the same.
__attribute__((always_inline)) inline void check_fill(std::uint8_t* blk, const Slab* s) {
  if (std::uint8_t* changed = differs_block(blk, s->fill_len, s->fill);
      __builtin_expect(changed != nullptr, 0)) {
    misuse_report("malloc", "write after free in the block at", blk, "its byte ",
                  static_cast<std::uint64_t>(changed - blk), " (header included) changed after it was freed");
    fill_block(blk, s->fill_len, s->fill);  // TAILOR_ON_ERROR=warn goes on: the block reads as zero again (calloc)
  }
}

// Block i of s handed out for `size` bytes at `align`: its in-use bit and
// counts, the fill checked if it was freed before, header and canary.
__attribute__((always_inline)) inline void* hand_out(SecureHeap* h, Slab* s, std::uint32_t i, bool reused,
                                                     std::size_t size, std::size_t align) {
  std::uint64_t& word = s->in_use()[i / 64];
  __atomic_store_n(&word, word | std::uint64_t{1} << (i % 64), __ATOMIC_RELAXED);
  s->used++;
  count_used(h, s->bs);
  std::uint8_t* blk = s->first + std::size_t{i} * s->bs;
  if (reused) check_fill(blk, s);
  auto* p = reinterpret_cast<std::uint8_t*>((addr(blk) + kHeader + align - 1) & ~(align - 1));
  arm(s->secret, p, size, blk + s->bs);
  return p;
}

// The thread's heap (set up at its first request) and the bin's slab with
// a free block, when the bin's current slab is missing or full.
__attribute__((noinline)) Slab* slab_for(SecureHeap*& h, unsigned cls) {
  if (h == nullptr && (h = heap_attach()) == nullptr) return nullptr;
  Bin& b = h->bins[cls];
  if (Slab* s = b.current; s != nullptr && s->used < s->count) return s;
  return refill(h, b, cls);
}

// A block of the class when the bin's current slab has no freed block to
// give: a fresh one (random order), or one of another slab.
__attribute__((noinline)) void* slab_malloc_slow(std::size_t size, std::size_t align, unsigned cls) {
  SecureHeap* h = tl_sheap;
  Slab* s;
  if ((h == nullptr || (s = h->bins[cls].current) == nullptr || s->used == s->count) && (s = slab_for(h, cls)) == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  const bool reused = s->top > 0;  // a slab from the partial list has freed blocks
  const std::uint32_t i = reused ? s->stack()[--s->top] : take_fresh(s, h->rng);
  return hand_out(h, s, i, reused, size, align);
}

// The common malloc, inline: the last block freed into the bin's current slab.
__attribute__((always_inline)) inline void* slab_malloc(std::size_t size, std::size_t align, std::size_t need) {
  SecureHeap* h = tl_sheap;
  const unsigned cls = class_index(need);
  Slab* s;
  if (__builtin_expect(h == nullptr || (s = h->bins[cls].current) == nullptr || s->top == 0, 0))
    return slab_malloc_slow(size, align, cls);
  return hand_out(h, s, s->stack()[--s->top], true, size, align);
}

// ----------------------------------------------------------------- large

// Freed large regions kept for reuse with their guard page in place (as the
// slabs' spares): a program that frees and allocates large blocks again and
// again (buffers, vectors that grow) pays no mprotect, no mapping change and
// no page faults each time, which on several threads also means no fight
// for the kernel's lock on the address space. A region serves requests that
// need from 4/5 of its size up to all of it; at most kLargeSpares regions
// of at most kLargeSpareMax bytes each, HEAP_CACHE / 4 bytes in all. Their
// region word is null, so a free into one is reported as a free of no live
// block.
//
// With SECURE_ZERO a freed region is made no-access while kept (sealed): a
// read or write through a dangling pointer faults at the access, as under a
// fresh mapping's guard; it is cleared by calloc's rule (large_release,
// large_malloc). With SECURE_QUARANTINE a kept region is not
// handed out again before kLargeReuseDelay more large blocks are freed.
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
  bool sealed = false;         // its pages before the guard page are no-access
  bool zero = false;           // purged at its free: reads as zero
  std::uint64_t freed_at = 0;  // g_large_frees when it was kept
};
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

// A secret for a large block: from the thread's secure heap if it has one
// (no system call per block), else from the OS.
std::uint64_t large_secret() {
  if (SecureHeap* h = tl_sheap; h != nullptr) return next_random(h->rng);
  std::uint64_t seed = os::random64();
  return next_random(seed);
}

__attribute__((noinline)) void* large_malloc(std::size_t size, std::size_t align, std::size_t capacity) {
  const std::size_t page = os::page_size();
  const std::size_t need = ((kHeader + capacity + 1 + align + page - 1) & ~(page - 1)) + page;
  LargeSpare sp{nullptr, need, false};
  bool reused = large_spare_pop(need, sp);
  if (reused && sp.sealed && !os::protect(sp.base, sp.bytes - page, true)) {
    // Still no-access: kept for a later try, or (no room) left mapped and
    // unused rather than handed to the region pool sealed.
    large_spare_push(sp);
    reused = false;
    sp = LargeSpare{nullptr, need, false};
  }
  sp.sealed = false;  // accessible now (a failure below keeps it as such)
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
  // A kept region holds its last block's bytes (sealed meanwhile) unless
  // it was purged, and a region from the pool may hold an earlier one's:
  // cleared where the new block lies, by purging if the program leaves
  // most pages of such blocks untouched (calloc_zero.h), else by a memset.
  const std::size_t span = static_cast<std::size_t>(m->end - first_page(m));
  bool zero = reused ? sp.zero : region_reads_zero(sp.base);
  if (g_zero_free && !zero) {
    zero = span >= kCallocPurgeMin && zeroing_purge_pays() && os::purge(first_page(m), span);
    if (!zero) std::memset(m->user - kHeader, 0, static_cast<std::size_t>(m->end - m->user) + kHeader);
  }
  m->watch = g_zero_free && zero && span >= kCallocPurgeMin;
  arm(m->secret, m->user, size, m->end);
  return m->user;
}

void large_release(Large* m) {
  region_set_word(m->base, nullptr);
  if (!m->guarded) g_unguarded.fetch_sub(1, std::memory_order_relaxed);
  g_large.fetch_sub(1, std::memory_order_relaxed);
  g_large_bytes.fetch_sub(m->bytes, std::memory_order_relaxed);
  LargeSpare sp{m->base, m->bytes, m->guarded};
  const std::size_t body = static_cast<std::size_t>(m->end - m->base);  // before the guard page
  if (g_zero_free && m->watch) zeroing_observe(first_page(m), static_cast<std::size_t>(m->end - first_page(m)));
  meta_free(m, sizeof(Large));
  if (g_zero_free && sp.bytes <= kLargeSpareMax) {
    // Cleared now by purging, if the program leaves most pages of such
    // blocks untouched (calloc_zero.h's policy: a program that touches a few
    // words of a big block would pay a memset of all of it at the reuse),
    // else at the reuse by a memset (one that fills its blocks would pay a
    // fault per page instead of the stores); sealed either way.
    sp.zero = body >= kCallocPurgeMin && zeroing_purge_pays() && os::purge(sp.base, body);
    sp.sealed = os::protect(sp.base, body, false);
  }
  if (!large_spare_push(sp)) {
    // Back to the region pool as it is: the pool knows a span it has not
    // purged since from one that reads as zero, and whoever obtains it next
    // here clears it (region_reads_zero).
    if (sp.sealed && !os::protect(sp.base, body, true)) return;  // left mapped and unused, as above
    region_release(sp.base, sp.bytes, sp.guarded);
  }
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
  std::uint32_t magic;  // kZeroMagic; first, where a Slab keeps its magic
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
    auto* base = static_cast<std::uint8_t*>(region_obtain(g_secure_region, kZeroRegion, kSlabBytes));
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

// ----------------------------------------------------------------- checks

// What a checked pointer is: a slab's block or a large block.
struct Found {
  ZeroRegion* zero = nullptr;  // a zero-size block's region (n = 0, nothing else set)
  Slab* slab = nullptr;
  Large* large = nullptr;
  std::uint32_t index = 0;
  std::uint8_t* end = nullptr;  // the block's end (the canary's)
  std::size_t n = 0;            // the size asked for
  std::uint64_t secret = 0;
};

bool frees(const char* fn) { return fn[0] == 'f' || fn[0] == 'o'; }  // free, free_sized, operator delete

// The header and canary of the block whose user bytes would start at p.
bool header_and_canary(const char* fn, std::uint8_t* p, std::uint8_t* blk, std::size_t bs, Found& f) {
  // p may be any pointer a program passed (unaligned ones too).
  const std::uint64_t n = load_word(p - 8), check = load_word(p - kHeader);
  if (n >= static_cast<std::uint64_t>(f.end - p) || check != check_word(f.secret, p, n)) {
    if (p == blk + kHeader)
      misuse_report(fn, "heap underflow or corruption before", p, "the block's 16-byte header was overwritten",
                    kNoNumber, nullptr);
    else
      misuse_report(fn, "invalid pointer", p, "not the start of a block: ", static_cast<std::uint64_t>(p - blk),
                    bs != 0 ? " bytes into a block of secure mode" : nullptr);
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

// Checks p; true with f filled.
bool locate(const char* fn, void* ptr, Found& f) {
  auto* p = static_cast<std::uint8_t*>(ptr);
  Segment* seg = segment_of(p);
  if (!segment_known(seg)) {
    misuse_unknown(fn, p);
    return false;
  }
  const auto* magic = static_cast<const std::uint32_t*>(secure_owns(seg) ? region_word(seg, p) : nullptr);
  if (magic != nullptr && *magic == kSlabMagic) {
    auto* s = const_cast<Slab*>(reinterpret_cast<const Slab*>(magic));
    if (p < s->first + kHeader || p >= s->first + std::size_t{s->count} * s->bs) {
      misuse_report(fn, "invalid pointer", p, "not in a block: the padding or guard page of a slab", kNoNumber, nullptr);
      return false;
    }
    const auto i = static_cast<std::uint32_t>(static_cast<std::uint64_t>(p - s->first) * s->reciprocal >> 32);
    std::uint8_t* blk = s->first + std::size_t{i} * s->bs;
    const std::uint64_t bit = std::uint64_t{1} << (i % 64);
    // Free: not in use, or freed by another thread and not collected yet.
    if ((__atomic_load_n(&s->in_use()[i / 64], __ATOMIC_RELAXED) & bit) == 0 ||
        (__atomic_load_n(&s->remote()[i / 64], __ATOMIC_RELAXED) & bit) != 0) {
      if (p == blk + kHeader)
        misuse_report(fn, frees(fn) ? "double free of" : "block already freed:", p, "block of ", s->bs,
                      " bytes, already free");
      else
        misuse_report(fn, "invalid pointer", p, "not the start of a block: ", static_cast<std::uint64_t>(p - blk),
                      " bytes into a free block");
      return false;
    }
    f.slab = s;
    f.index = i;
    f.end = blk + s->bs;
    f.secret = s->secret;
    return header_and_canary(fn, p, blk, s->bs, f);
  }
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
    return header_and_canary(fn, p, p - kHeader, 0, f);
  }
  misuse_report(fn, frees(fn) ? "double or invalid free of" : "invalid pointer", p,
                "in no live block of secure mode: freed already, or never allocated", kNoNumber, nullptr);
  return false;
}

// Another thread's free of block i of s (checked, filled): its bit in the
// slab's remote bitmap, and the slab on the owner's remote list. The
// owner's in-flight count keeps every slab of the owner alive meanwhile
// (settle), since the block may be collected, and its slab emptied, between
// the bit and the list.
void free_remote_block(const char* fn, void* p, Slab* s, std::uint32_t i) {
  SecureHeap* o = s->owner;
  __atomic_add_fetch(&o->in_flight, 1, __ATOMIC_SEQ_CST);
  const std::uint64_t bit = std::uint64_t{1} << (i % 64);
  const std::uint64_t old = __atomic_fetch_or(&s->remote()[i / 64], bit, __ATOMIC_SEQ_CST);
  if ((old & bit) != 0) {  // two threads freeing it at once
    __atomic_sub_fetch(&o->in_flight, 1, __ATOMIC_SEQ_CST);
    misuse_report(fn, "double free of", p, "block of ", s->bs, " bytes, already free");
    return;
  }
  // Listed after the bit: if the flag is already set, the owner clears it
  // later than this read and collects after clearing, so it sees the bit.
  if (!__atomic_load_n(&s->remote_listed, __ATOMIC_SEQ_CST) &&
      !__atomic_exchange_n(&s->remote_listed, true, __ATOMIC_SEQ_CST)) {
    Slab* head = __atomic_load_n(&o->remote_slabs, __ATOMIC_RELAXED);
    do {
      s->remote_next = head;
    } while (!__atomic_compare_exchange_n(&o->remote_slabs, &head, s, true, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
  }
  __atomic_sub_fetch(&o->in_flight, 1, __ATOMIC_SEQ_CST);
  if (__atomic_load_n(&o->state, __ATOMIC_SEQ_CST) == kIdle) collect_idle(o);
}

// The owner's side of a free of block i of s (checked, filled), or of its
// leaving the quarantine: on the slab's stack, for the next malloc.
__attribute__((always_inline)) inline void release_owned(SecureHeap* h, Slab* s, std::uint32_t i) {
  s->stack()[s->top++] = static_cast<std::uint16_t>(i);
  const bool was_full = s->used == s->count;
  s->used--;
  count_used(h, -static_cast<std::int64_t>(s->bs));
  if (!s->current && (s->used == 0 || was_full)) settle(h, s);
}

// The owner's free of block i of s (checked, filled): no longer in use, and
// into the quarantine, whose oldest block, when it is full, goes back to its
// slab. A block comes back no sooner than g_quarantine frees of the thread
// later, so a dangling pointer does not reach the next owner of its size at
// once (hardened_malloc's delayed reuse; Scudo's quarantine holds bytes).
__attribute__((always_inline)) inline void free_owned(SecureHeap* h, Slab* s, std::uint32_t i) {
  std::uint64_t& word = s->in_use()[i / 64];
  __atomic_store_n(&word, word & ~(std::uint64_t{1} << (i % 64)), __ATOMIC_RELAXED);
  if (g_quarantine != 0) {
    Quarantined& slot = h->quarantine[h->q_head];
    h->q_head = h->q_head + 1 == g_quarantine ? 0 : h->q_head + 1;
    if (h->q_len < g_quarantine) {
      h->q_len++;
      slot = Quarantined{s, i};
      return;
    }
    const Quarantined out = slot;
    slot = Quarantined{s, i};
    s = out.slab;
    i = out.index;
  }
  release_owned(h, s, i);
}

// Every block of the quarantine back to its slab (a thread's exit).
void quarantine_flush(SecureHeap* h) {
  for (std::uint32_t k = 0; k < h->q_len; ++k) release_owned(h, h->quarantine[k].slab, h->quarantine[k].index);
  h->q_head = h->q_len = 0;
}

// The common free, in one pass and without a report: a block at its slot's
// start (no alignment above 16) of a slab the calling thread owns, header
// and canary intact. Anything else returns false and secure_free's full
// path finds it again and says what is wrong. Slabs are aligned to their
// size, so the slab is the region at p's 64 KiB boundary (p - 1: a block's
// user bytes never start at a slab's first byte); a p past the slab's
// blocks fails the bounds. A free block (freed here or by another thread)
// has its header filled over, so it fails the header's check here and the
// bitmaps are read on the full path only.
__attribute__((always_inline)) inline bool free_fast(std::uint8_t* p, bool sized, std::size_t size) {
  const std::uintptr_t base = (addr(p) - 1) & ~(kSlabBytes - 1);
  auto* s = static_cast<Slab*>(region_word(segment_of(p), reinterpret_cast<const void*>(base)));
  if (s == nullptr || s->magic != kSlabMagic) return false;
  SecureHeap* h = tl_sheap;
  if (s->owner != h) return false;
  std::uint8_t* blk = p - kHeader;
  const std::uintptr_t rel = addr(blk) - addr(s->first);
  const auto i = static_cast<std::uint32_t>(static_cast<std::uint64_t>(rel) * s->reciprocal >> 32);
  if (rel >= std::uintptr_t{s->count} * s->bs || rel != std::uintptr_t{i} * s->bs) return false;
  const std::uint64_t n = load_word(p - 8), check = load_word(blk);
  if (n >= s->bs - kHeader || (sized && size != n) || check != check_word(s->secret, p, n)) return false;
  std::uint8_t* end = blk + s->bs;
  if (!canary_intact(p + n, canary_end(p + n, end), check)) return false;
  fill_block(blk, s->fill_len, s->fill);
  free_owned(h, s, i);
  return true;
}

// Every other free: the checks with their reports, large blocks, other
// threads' slabs.
__attribute__((noinline)) void free_checked(const char* fn, void* ptr, bool sized, std::size_t size) {
  Found f;
  if (!locate(fn, ptr, f)) return;
  if (sized && size != f.n) {
    misuse_wrong_size(fn, ptr, size, f.n);
    return;
  }
  if (f.zero != nullptr) {  // nothing to give back (zero_malloc); the bit, once
    const std::size_t i = static_cast<std::size_t>(static_cast<std::uint8_t*>(ptr) - f.zero->base) / 16;
    const std::uint64_t bit = std::uint64_t{1} << (i % 64);
    if ((__atomic_fetch_and(&f.zero->live[i / 64], ~bit, __ATOMIC_RELAXED) & bit) == 0)  // two threads freeing it at once
      misuse_report(fn, "double free of", ptr, "zero-size block, already free", kNoNumber, nullptr);
    return;
  }
  if (f.large != nullptr) {
    if (!f.large->live.exchange(false, std::memory_order_acq_rel)) {  // two threads freeing it at once
      misuse_report(fn, "double free of", ptr, "large block of ", f.n, " bytes, already free");
      return;
    }
    large_release(f.large);
    return;
  }
  Slab* s = f.slab;
  std::uint8_t* blk = s->first + std::size_t{f.index} * s->bs;
  SecureHeap* h = tl_sheap;
  if (s->owner != h) {
    // Another thread's block: its first 64 bytes (header, pointers, vtable)
    // cleared now, the rest by the owner when it collects the block, so
    // that the lines the owner reads back at reuse are ones it wrote last
    // (written here, each would move between the caches twice).
    fill_block(blk, s->fill_len < kFillMax ? s->fill_len : kFillMax, s->fill);
    free_remote_block(fn, ptr, s, f.index);
    return;
  }
  fill_block(blk, s->fill_len, s->fill);
  free_owned(h, s, f.index);
}

}  // namespace

void secure_free(const char* fn, void* ptr, bool sized, std::size_t size) noexcept {
  if (__builtin_expect(!free_fast(static_cast<std::uint8_t*>(ptr), sized, size), 0)) free_checked(fn, ptr, sized, size);
}

namespace {

void hook_free(void*, void* p) { secure_free("free", p, false, 0); }
size_t hook_usable(void*, const void* p) { return secure_usable("malloc_usable_size", const_cast<void*>(p)); }

void fork_prepare() {
  g_zero_lock.lock();
  g_heaps_lock.lock();
  g_spare_lock.lock();
  g_meta_lock.lock();
}
void fork_parent() {
  g_meta_lock.unlock();
  g_spare_lock.unlock();
  g_heaps_lock.unlock();
  g_zero_lock.unlock();
}
// The child has one thread: every other thread's heap is idle now (a heap
// a freeing thread was collecting too), and no free is under way.
void fork_child() {
  for (SecureHeap* h = g_heaps_all; h != nullptr; h = h->next_all) {
    h->in_flight = 0;
    if (h == tl_sheap) continue;
    if (h->state == kOwned) {
      h->next_idle = g_heaps_idle;
      g_heaps_idle = h;
    }
    h->state = kIdle;
  }
  fork_parent();
}

}  // namespace

void secure_init() noexcept {
  if (!g_secure) return;
  if (g_config.dmm[0] != '\0' || g_config.value[static_cast<int>(Param::kPools)] != 0 ||
      os::getenv("TAILOR_POOLS_FILE") != nullptr)
    os::write_stderr("tailor: TAILOR_SECURE=1: the DMM and call-site pools set are not used in secure mode\n");
  g_quarantine = static_cast<std::uint32_t>(g_config.value[static_cast<int>(Param::kSecureQuarantine)]);
  g_zero_free = g_config.value[static_cast<int>(Param::kSecureZero)] != 0;
  g_spare_max = g_config.heap_cache_bytes / kSlabBytes;
  g_large_spare_budget = g_config.heap_cache_bytes / 4;
  if (g_spare_max > 0) {
    const std::size_t bytes = (g_spare_max * sizeof(Spare) + os::page_size() - 1) & ~(os::page_size() - 1);
    g_spare = static_cast<Spare*>(os::reserve_aligned(bytes, os::page_size()));
    if (g_spare == nullptr) g_spare_max = 0;
  }
  tailor_region_hooks hooks{};
  hooks.free = &hook_free;
  hooks.usable_size = &hook_usable;
  RegionPool* rp = region_pool_create(hooks);
  if (rp == nullptr || pthread_key_create(&g_heap_key, &heap_done) != 0) {
    os::write_stderr("tailor: TAILOR_SECURE=1: cannot set secure mode up (no memory); aborting\n");
    abort();
  }
  // After the pool's own handlers: ours run first at a fork and take our
  // locks before the pool's, the order in which malloc takes them.
  pthread_atfork(&fork_prepare, &fork_parent, &fork_child);
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
  const std::size_t need = kHeader + capacity + 1 + (align - 16);
  if (need <= kSlabMax) return slab_malloc(size, align, need);
  return large_malloc(size, align, capacity);
}
}  // namespace

void* secure_malloc(std::size_t size, std::size_t align) noexcept {
  // malloc's small requests straight to the slabs (no alignment or
  // overflow to weigh); the rest through allocate's checks.
  if (align <= 16 && size <= kSlabMax - kHeader - 1) {
    if (__builtin_expect(size == 0, 0))
      if (void* z = zero_malloc()) return z;
    return slab_malloc(size, 16, kHeader + size + 1);
  }
  return allocate(size, align, size);
}

bool secure_zeroes() noexcept { return g_zero_free; }

void secure_totals(HeapTotals& out) noexcept {
  std::uint64_t used = 0;
  {
    std::lock_guard guard(g_heaps_lock);
    for (SecureHeap* h = g_heaps_all; h != nullptr; h = h->next_all) used += __atomic_load_n(&h->used_bytes, __ATOMIC_RELAXED);
  }
  std::uint64_t spare_bytes, spares;
  {
    std::lock_guard guard(g_spare_lock);
    spare_bytes = g_spare_count * kSlabBytes + g_large_spare_bytes;
    spares = g_spare_count + g_large_spare_count;
  }
  const std::uint64_t large = g_large_bytes.load(std::memory_order_relaxed);
  out.arena += g_slabs.load(std::memory_order_relaxed) * kSlabBytes + large + spare_bytes;
  out.used += used + large;
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
  const std::size_t room = static_cast<std::size_t>(f.end - p) - 1;  // keeps one canary byte
  if (size != 0 && size <= room && size >= room / 2) {
    arm(f.secret, p, size, f.end);
    return p;
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
    st.slabs = g_slabs.load(std::memory_order_relaxed);
    st.large_blocks = g_large.load(std::memory_order_relaxed);
    st.unguarded = g_unguarded.load(std::memory_order_relaxed);
    st.metadata_bytes = g_meta_bytes.load(std::memory_order_relaxed);
  }
  copy_out(st, out, size);
}
