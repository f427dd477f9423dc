// SPDX-License-Identifier: MIT
// Secure mode (secure.h): slabs and large regions with guard pages, blocks
// with encoded headers and canaries, metadata in mappings of its own.
// Everything here runs inside malloc: no stdio, no allocation.
#include "secure.h"

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <new>

#include "config.h"
#include "heap.h"
#include "misuse.h"
#include "os.h"
#include "region.h"
#include "spin_lock.h"
#include "tailor/tailor.h"

namespace tailor::alloc {

bool g_secure = false;
RegionPool* g_secure_region = nullptr;

namespace {

// tailor_secure_get_stats.
std::atomic<std::uint64_t> g_slabs{0}, g_large{0}, g_unguarded{0}, g_meta_bytes{0};

constexpr std::size_t kSlabBytes = 64 * 1024;  // a slab's region, its guard page included
constexpr std::size_t kHeader = 16;            // before every block: encoded size, check word
constexpr std::size_t kSlabMax = 8 * 1024;     // largest block (header + size + canary) on a slab
constexpr std::size_t kFillMax = 256;          // bytes of a freed block filled, and checked at reuse
constexpr std::size_t kCanaryMax = 64;         // canary bytes after a block, at most (up to its end)
constexpr unsigned kShards = 8;
constexpr unsigned kClasses = 31;              // 32..128 by 16, then 4 per doubling up to 8 KiB
constexpr std::uint32_t kSlabMagic = 0x5ec51ab0u, kLargeMagic = 0x5ec1a46eu;

// --------------------------------------------------------------- classes

std::size_t class_size(unsigned c) {
  if (c < 7) return (c + 2) * 16;
  const unsigned e = 7 + (c - 7) / 4, k = (c - 7) % 4;
  return (std::size_t{1} << e) + (k + 1) * (std::size_t{1} << (e - 2));
}

unsigned class_index(std::size_t need) {  // 1 <= need <= kSlabMax
  if (need <= 128) return need <= 32 ? 0 : static_cast<unsigned>((need + 15) / 16 - 2);
  const unsigned e = 63 - static_cast<unsigned>(__builtin_clzll(need - 1));
  const std::size_t k = (need - 1 - (std::size_t{1} << e)) >> (e - 2);
  return 7 + (e - 7) * 4 + static_cast<unsigned>(k);
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
// reads a small count, as under glibc, and reaches the check.
std::uint64_t check_word(std::uint64_t secret, const void* p, std::uint64_t n) {
  return mix(secret ^ addr(p) ^ (n * 0x9e3779b97f4a7c15u));
}

// The canary: byte (a & 7) of this word at every address a after a block's
// user bytes. Each byte's lowest bit is the opposite of its highest, so no
// byte is 0x00 or 0xff, the values an off-by-one most often writes (a
// string's terminator, -1): those are always caught, any other value with
// a chance of 127/128.
std::uint64_t canary_word(std::uint64_t secret, const void* p) {
  const std::uint64_t w = mix(secret ^ (addr(p) << 1) ^ 0x7f4a7c159e3779b9u);
  return (w & 0xfefefefefefefefeu) | (~w >> 7 & 0x0101010101010101u);
}
std::uint64_t fill_word(std::uint64_t secret) { return mix(secret ^ 0xf4eef4eef4eef4eeu); }

using word_alias = std::uint64_t __attribute__((may_alias));

void fill(std::uint8_t* a, std::uint8_t* end, std::uint64_t w) {
  while (a < end && (addr(a) & 7) != 0) { *a = static_cast<std::uint8_t>(w >> (8 * (addr(a) & 7))); ++a; }
  for (; a + 8 <= end; a += 8) *reinterpret_cast<word_alias*>(a) = w;
  for (; a < end; ++a) *a = static_cast<std::uint8_t>(w >> (8 * (addr(a) & 7)));
}

// The first byte of [a, end) that differs from the pattern, or nullptr.
std::uint8_t* differs(std::uint8_t* a, std::uint8_t* end, std::uint64_t w) {
  for (; a < end && (addr(a) & 7) != 0; ++a)
    if (*a != static_cast<std::uint8_t>(w >> (8 * (addr(a) & 7)))) return a;
  for (; a + 8 <= end; a += 8)
    if (*reinterpret_cast<word_alias*>(a) != w) break;
  for (; a < end; ++a)
    if (*a != static_cast<std::uint8_t>(w >> (8 * (addr(a) & 7)))) return a;
  return nullptr;
}

// ------------------------------------------------------------- metadata

struct Slab {
  std::uint32_t magic;  // kSlabMagic
  std::uint32_t bs;     // block size
  std::uint32_t count;  // blocks
  std::uint32_t used;   // in use
  std::uint32_t top;    // freed blocks on the stack
  std::uint32_t words;  // of each bitmap
  std::uint32_t fresh_word;  // no fresh block below this word of the bitmap
  std::uint16_t cls, shard;
  bool current, listed, guarded;
  std::uint8_t* base;   // the region (kSlabBytes, the guard page last)
  std::uint8_t* first;  // the first block; the last ends at the guard page
  std::uint64_t secret;
  Slab* next;  // the shard's list of slabs with free blocks (not its current one)
  Slab* prev;
  std::uint64_t* in_use() { return reinterpret_cast<std::uint64_t*>(this + 1); }
  std::uint64_t* fresh() { return in_use() + words; }  // never handed out
  std::uint16_t* stack() { return reinterpret_cast<std::uint16_t*>(fresh() + words); }
  static std::size_t bytes(std::uint32_t count) {
    const std::size_t words = (count + 63) / 64;
    return sizeof(Slab) + 16 * words + 2 * std::size_t{count};
  }
};
static_assert(sizeof(Slab) % 8 == 0);

struct Large {
  std::uint32_t magic;  // kLargeMagic
  bool guarded;
  std::uint8_t* base;   // the region
  std::size_t bytes;
  std::uint8_t* user;   // the block's user bytes; the header is before them
  std::uint8_t* end;    // the guard page (or the region's end)
  std::uint64_t secret;
  std::atomic<bool> live;
};

struct alignas(64) Shard {
  std::atomic<bool> locked{false};
  Slab* current = nullptr;
  Slab* partial = nullptr;
  std::uint64_t rng = 0;
};

Shard g_shards[kClasses][kShards];

// Metadata lives in mappings of its own, never next to blocks: carved from
// 1 MiB chunks, recycled through free lists by size (64-byte units).
constexpr std::size_t kMetaUnit = 64, kMetaChunk = 1 << 20, kMetaLists = 128;
std::atomic<bool> g_meta_locked{false};
void* g_meta_free[kMetaLists + 1];
std::uint8_t* g_meta_bump = nullptr;
std::uint8_t* g_meta_end = nullptr;

void* meta_alloc(std::size_t bytes) {
  const std::size_t units = (bytes + kMetaUnit - 1) / kMetaUnit;
  if (units > kMetaLists) return nullptr;
  spin_lock(g_meta_locked);
  void* m = g_meta_free[units];
  if (m != nullptr) {
    g_meta_free[units] = *static_cast<void**>(m);
  } else {
    if (g_meta_bump == nullptr || g_meta_bump + units * kMetaUnit > g_meta_end) {
      auto* chunk = static_cast<std::uint8_t*>(os::reserve_aligned(kMetaChunk, os::page_size()));
      if (chunk == nullptr) {
        spin_unlock(g_meta_locked);
        return nullptr;
      }
      g_meta_bump = chunk;
      g_meta_end = chunk + kMetaChunk;
      g_meta_bytes.fetch_add(kMetaChunk, std::memory_order_relaxed);
    }
    m = g_meta_bump;
    g_meta_bump += units * kMetaUnit;
  }
  spin_unlock(g_meta_locked);
  std::memset(m, 0, units * kMetaUnit);
  return m;
}

void meta_free(void* m, std::size_t bytes) {
  const std::size_t units = (bytes + kMetaUnit - 1) / kMetaUnit;
  std::memset(m, 0, units * kMetaUnit);  // a stale lookup finds no magic
  spin_lock(g_meta_locked);
  *static_cast<void**>(m) = g_meta_free[units];
  g_meta_free[units] = m;
  spin_unlock(g_meta_locked);
}

RegionPool* region() {
  RegionPool* rp = __atomic_load_n(&g_secure_region, __ATOMIC_ACQUIRE);
  while (rp == nullptr) {  // another thread is still setting secure mode up
    sched_yield();
    rp = __atomic_load_n(&g_secure_region, __ATOMIC_ACQUIRE);
  }
  return rp;
}

unsigned my_shard() {
  static std::atomic<unsigned> next{0};
  static thread_local unsigned shard __attribute__((tls_model("initial-exec"))) = 0;
  if (shard == 0) shard = next.fetch_add(1, std::memory_order_relaxed) % kShards + 1;
  return shard - 1;
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
std::atomic<bool> g_spare_locked{false};
Spare* g_spare = nullptr;  // a stack, in a mapping of its own
std::size_t g_spare_count = 0, g_spare_max = 0;

bool spare_pop(Spare& out) {
  spin_lock(g_spare_locked);
  const bool ok = g_spare_count > 0;
  if (ok) out = g_spare[--g_spare_count];
  spin_unlock(g_spare_locked);
  return ok;
}

bool spare_push(const Spare& sp) {
  spin_lock(g_spare_locked);
  const bool ok = g_spare_count < g_spare_max;
  if (ok) g_spare[g_spare_count++] = sp;
  spin_unlock(g_spare_locked);
  return ok;
}

Slab* slab_new(unsigned cls, unsigned shard, std::uint64_t& rng) {
  const std::size_t page = os::page_size(), usable = kSlabBytes - page;
  Spare sp{nullptr, false};
  const bool reused = spare_pop(sp);
  if (!reused) {
    sp.base = static_cast<std::uint8_t*>(region_obtain(region(), kSlabBytes, kSlabBytes));
    if (sp.base == nullptr) return nullptr;
  }
  std::uint8_t* base = sp.base;
  const auto bs = static_cast<std::uint32_t>(class_size(cls));
  const auto count = static_cast<std::uint32_t>(usable / bs);
  auto* s = static_cast<Slab*>(meta_alloc(Slab::bytes(count)));
  if (s == nullptr) {
    if (!reused || !spare_push(sp)) {
      if (sp.guarded) os::protect(base + usable, page, true);
      region_give_back(region(), base, kSlabBytes);
    }
    return nullptr;
  }
  s->magic = kSlabMagic;
  s->bs = bs;
  s->count = count;
  s->words = (count + 63) / 64;
  s->cls = static_cast<std::uint16_t>(cls);
  s->shard = static_cast<std::uint16_t>(shard);
  s->base = base;
  s->first = base + (usable - std::size_t{count} * bs);
  s->secret = next_random(rng);
  for (std::uint32_t i = 0; i < count; ++i) s->fresh()[i / 64] |= std::uint64_t{1} << (i % 64);
  // If the kernel refuses (its limit on mappings), the slab has no guard.
  s->guarded = reused ? sp.guarded : os::protect(base + usable, page, false);
  if (!s->guarded) g_unguarded.fetch_add(1, std::memory_order_relaxed);
  g_slabs.fetch_add(1, std::memory_order_relaxed);
  region_set_word(base, s);
  return s;
}

// Called with the shard's lock held (lock order: shard, spares, then the region pool).
void slab_release(Slab* s) {
  region_set_word(s->base, nullptr);
  if (!s->guarded) g_unguarded.fetch_sub(1, std::memory_order_relaxed);
  g_slabs.fetch_sub(1, std::memory_order_relaxed);
  const Spare sp{s->base, s->guarded};
  meta_free(s, Slab::bytes(s->count));
  if (spare_push(sp)) return;
  if (sp.guarded && !os::protect(sp.base + kSlabBytes - os::page_size(), os::page_size(), true)) return;  // kept
  region_give_back(region(), sp.base, kSlabBytes);
}

void unlink_partial(Shard& sh, Slab* s) {
  if (s->prev != nullptr) s->prev->next = s->next;
  else sh.partial = s->next;
  if (s->next != nullptr) s->next->prev = s->prev;
  s->next = s->prev = nullptr;
  s->listed = false;
}

void link_partial(Shard& sh, Slab* s) {
  s->prev = nullptr;
  s->next = sh.partial;
  if (sh.partial != nullptr) sh.partial->prev = s;
  sh.partial = s;
  s->listed = true;
}

// A block of s (used < count): the last freed, else a fresh one at random
// among the next 64 fresh blocks (a word of the bitmap, a few KiB): the
// order of neighbours is unpredictable, while blocks allocated together
// stay on the same few pages, as a program's traversals expect (mimalloc's
// secure build shuffles within a page's extension the same way).
std::uint32_t slab_take(Slab* s, std::uint64_t& rng, bool& reused) {
  std::uint32_t i;
  reused = s->top > 0;
  if (reused) {
    i = s->stack()[--s->top];
  } else {
    std::uint32_t w = s->fresh_word;
    while (s->fresh()[w] == 0) ++w;  // a fresh block exists: used + top < count
    s->fresh_word = w;
    const std::uint64_t bits = s->fresh()[w];
    const auto r = static_cast<unsigned>(next_random(rng) & 63);
    const std::uint64_t rotated = (bits >> r) | (r != 0 ? bits << (64 - r) : 0);  // the first set bit at or after r
    i = w * 64 + ((static_cast<unsigned>(__builtin_ctzll(rotated)) + r) & 63);
    s->fresh()[w] &= ~(std::uint64_t{1} << (i % 64));
  }
  s->in_use()[i / 64] |= std::uint64_t{1} << (i % 64);
  s->used++;
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
void arm(std::uint64_t secret, std::uint8_t* p, std::size_t n, std::uint8_t* end) {
  auto* h = reinterpret_cast<word_alias*>(p - kHeader);
  h[0] = check_word(secret, p, n);
  h[1] = n;
  fill(p + n, canary_end(p + n, end), canary_word(secret, p));
}

void* slab_malloc(std::size_t size, std::size_t align, std::size_t need) {
  const unsigned cls = class_index(need), si = my_shard();
  Shard& sh = g_shards[cls][si];
  spin_lock(sh.locked);
  Slab* s = sh.current;
  if (s == nullptr || s->used == s->count) {
    if (s != nullptr) s->current = false;  // full: on no list until a free
    s = sh.partial;
    if (s != nullptr) unlink_partial(sh, s);
    else s = slab_new(cls, si, sh.rng);
    sh.current = s;
    if (s == nullptr) {
      spin_unlock(sh.locked);
      errno = ENOMEM;
      return nullptr;
    }
    s->current = true;
  }
  bool reused;
  const std::uint32_t i = slab_take(s, sh.rng, reused);
  std::uint8_t* blk = s->first + std::size_t{i} * s->bs;
  std::uint8_t* changed =
      reused ? differs(blk, blk + (s->bs < kFillMax ? s->bs : kFillMax), fill_word(s->secret)) : nullptr;
  const std::uint64_t secret = s->secret;
  const std::uint32_t bs = s->bs;
  spin_unlock(sh.locked);
  auto* p = reinterpret_cast<std::uint8_t*>((addr(blk) + kHeader + align - 1) & ~(align - 1));
  if (changed != nullptr)  // reported; with TAILOR_ON_ERROR=warn the block is used all the same
    misuse_report("malloc", "write after free in the block at", blk, "its byte ",
                  static_cast<std::uint64_t>(changed - blk), " (header included) changed after it was freed");
  arm(secret, p, size, blk + bs);
  return p;
}

// ----------------------------------------------------------------- large

void* large_malloc(std::size_t size, std::size_t align, std::size_t capacity) {
  const std::size_t page = os::page_size();
  const std::size_t bytes = ((kHeader + capacity + 1 + align + page - 1) & ~(page - 1)) + page;
  auto* base = static_cast<std::uint8_t*>(region_obtain(region(), bytes, page));
  if (base == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  auto* m = static_cast<Large*>(meta_alloc(sizeof(Large)));
  if (m == nullptr) {
    region_give_back(region(), base, bytes);
    errno = ENOMEM;
    return nullptr;
  }
  std::uint64_t seed = os::random64();
  m->magic = kLargeMagic;
  m->base = base;
  m->bytes = bytes;
  m->end = base + bytes - page;
  m->secret = next_random(seed);
  m->guarded = os::protect(m->end, page, false);
  if (!m->guarded) g_unguarded.fetch_add(1, std::memory_order_relaxed);
  g_large.fetch_add(1, std::memory_order_relaxed);
  // The block (with its room to grow) ends 1 to `align` bytes before the guard page.
  m->user = reinterpret_cast<std::uint8_t*>((addr(m->end) - capacity - 1) & ~(align - 1));
  m->live.store(true, std::memory_order_relaxed);
  region_set_word(base, m);
  arm(m->secret, m->user, size, m->end);
  return m->user;
}

void large_release(Large* m) {
  if (m->guarded && !os::protect(m->end, os::page_size(), true)) return;  // kept
  if (!m->guarded) g_unguarded.fetch_sub(1, std::memory_order_relaxed);
  g_large.fetch_sub(1, std::memory_order_relaxed);
  region_give_back(region(), m->base, m->bytes);
  meta_free(m, sizeof(Large));
}

// ----------------------------------------------------------------- checks

// What a checked pointer is: a slab's block (with its shard's lock held) or
// a large block.
struct Found {
  Slab* slab = nullptr;
  Shard* shard = nullptr;
  Large* large = nullptr;
  std::uint32_t index = 0;
  std::uint8_t* end = nullptr;  // the block's end (the canary's)
  std::size_t n = 0;            // the size asked for
  std::uint64_t secret = 0;
};

bool frees(const char* fn) { return fn[0] == 'f' || fn[0] == 'o'; }  // free, free_sized, operator delete

// The header and canary of the block whose user bytes would start at p.
bool header_and_canary(const char* fn, std::uint8_t* p, std::uint8_t* blk, std::size_t bs, Found& f) {
  auto* h = reinterpret_cast<word_alias*>(p - kHeader);
  const std::uint64_t n = h[1];
  if (n >= static_cast<std::uint64_t>(f.end - p) || h[0] != check_word(f.secret, p, n)) {
    if (p == blk + kHeader)
      misuse_report(fn, "heap underflow or corruption before", p, "the block's 16-byte header was overwritten",
                    kNoNumber, nullptr);
    else
      misuse_report(fn, "invalid pointer", p, "not the start of a block: ", static_cast<std::uint64_t>(p - blk),
                    bs != 0 ? " bytes into a block of secure mode" : nullptr);
    return false;
  }
  f.n = n;
  if (std::uint8_t* bad = differs(p + n, canary_end(p + n, f.end), canary_word(f.secret, p)); bad != nullptr) {
    misuse_report(fn, "heap overflow past the end of", p, "the block of ", n,
                  bad == p + n ? " bytes: the byte right after it was overwritten" : " bytes: bytes after it were overwritten");
    return false;
  }
  return true;
}

// Checks p; true with f filled (and, for a slab, its shard locked).
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
    const auto i = static_cast<std::uint32_t>(static_cast<std::size_t>(p - s->first) / s->bs);
    std::uint8_t* blk = s->first + std::size_t{i} * s->bs;
    Shard& sh = g_shards[s->cls][s->shard];
    spin_lock(sh.locked);
    if ((s->in_use()[i / 64] >> (i % 64) & 1) == 0) {
      spin_unlock(sh.locked);
      if (p == blk + kHeader)
        misuse_report(fn, frees(fn) ? "double free of" : "block already freed:", p, "block of ", s->bs,
                      " bytes, already free");
      else
        misuse_report(fn, "invalid pointer", p, "not the start of a block: ", static_cast<std::uint64_t>(p - blk),
                      " bytes into a free block");
      return false;
    }
    f.slab = s;
    f.shard = &sh;
    f.index = i;
    f.end = blk + s->bs;
    f.secret = s->secret;
    if (!header_and_canary(fn, p, blk, s->bs, f)) {
      spin_unlock(sh.locked);
      return false;
    }
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

void unlock(Found& f) {
  if (f.shard != nullptr) spin_unlock(f.shard->locked);
}

}  // namespace

void secure_free(const char* fn, void* ptr, bool sized, std::size_t size) noexcept {
  Found f;
  if (!locate(fn, ptr, f)) return;
  if (sized && size != f.n) {
    unlock(f);
    misuse_wrong_size(fn, ptr, size, f.n);
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
  Shard& sh = *f.shard;
  std::uint8_t* blk = s->first + std::size_t{f.index} * s->bs;
  fill(blk, blk + (s->bs < kFillMax ? s->bs : kFillMax), fill_word(s->secret));
  s->in_use()[f.index / 64] &= ~(std::uint64_t{1} << (f.index % 64));
  s->stack()[s->top++] = static_cast<std::uint16_t>(f.index);
  const bool was_full = s->used == s->count;
  s->used--;
  if (!s->current) {
    if (s->used == 0) {
      if (s->listed) unlink_partial(sh, s);
      slab_release(s);
    } else if (was_full && !s->listed) {
      link_partial(sh, s);
    }
  }
  spin_unlock(sh.locked);
}

namespace {

void hook_free(void*, void* p) { secure_free("free", p, false, 0); }
size_t hook_usable(void*, const void* p) { return secure_usable("malloc_usable_size", const_cast<void*>(p)); }

void fork_prepare() {
  for (auto& row : g_shards)
    for (auto& sh : row) spin_lock(sh.locked);
  spin_lock(g_spare_locked);
  spin_lock(g_meta_locked);
}
void fork_parent() {
  spin_unlock(g_meta_locked);
  spin_unlock(g_spare_locked);
  for (auto& row : g_shards)
    for (auto& sh : row) spin_unlock(sh.locked);
}

}  // namespace

void secure_init() noexcept {
  if (!g_secure) return;
  if (g_config.dmm[0] != '\0' || g_config.value[static_cast<int>(Param::kPools)] != 0 ||
      os::getenv("TAILOR_POOLS_FILE") != nullptr)
    os::write_stderr("tailor: TAILOR_SECURE=1: the DMM and call-site pools set are not used in secure mode\n");
  std::uint64_t seed = os::random64();
  for (auto& row : g_shards)
    for (auto& sh : row) sh.rng = next_random(seed);
  g_spare_max = g_config.heap_cache_bytes / kSlabBytes;
  if (g_spare_max > 0) {
    const std::size_t bytes = (g_spare_max * sizeof(Spare) + os::page_size() - 1) & ~(os::page_size() - 1);
    g_spare = static_cast<Spare*>(os::reserve_aligned(bytes, os::page_size()));
    if (g_spare == nullptr) g_spare_max = 0;
  }
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
  const std::size_t need = kHeader + capacity + 1 + (align - 16);
  if (need <= kSlabMax) return slab_malloc(size, align, need);
  return large_malloc(size, align, capacity);
}
}  // namespace

void* secure_malloc(std::size_t size, std::size_t align) noexcept { return allocate(size, align, size); }

void* secure_calloc(std::size_t count, std::size_t size) noexcept {
  std::size_t total;
  if (__builtin_mul_overflow(count, size, &total)) {
    errno = ENOMEM;
    return nullptr;
  }
  void* p = secure_malloc(total, 16);
  if (p != nullptr) std::memset(p, 0, total);
  return p;
}

bool secure_check(const char* fn, void* p, bool sized, std::size_t size) noexcept {
  Found f;
  if (!locate(fn, p, f)) return false;
  unlock(f);
  if (sized && size != f.n) {
    misuse_wrong_size(fn, p, size, f.n);
    return false;
  }
  return true;
}

std::size_t secure_usable(const char* fn, void* p) noexcept {
  Found f;
  if (!locate(fn, p, f)) return 0;
  unlock(f);
  return f.n;
}

void* secure_realloc(void* ptr, std::size_t size) noexcept {
  auto* p = static_cast<std::uint8_t*>(ptr);
  Found f;
  if (!locate("realloc", p, f)) {
    errno = EINVAL;
    return nullptr;
  }
  const std::size_t room = static_cast<std::size_t>(f.end - p) - 1;  // keeps one canary byte
  if (size != 0 && size <= room && size >= room / 2) {
    auto* h = reinterpret_cast<word_alias*>(p - kHeader);
    h[0] = check_word(f.secret, p, size);
    h[1] = size;
    fill(p + size, canary_end(p + size, f.end), canary_word(f.secret, p));
    unlock(f);
    return p;
  }
  unlock(f);
  if (size == 0) {  // glibc frees and returns NULL
    secure_free("realloc", p, false, 0);
    return nullptr;
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

extern "C" void tailor_secure_get_stats(tailor_secure_stats* out) {
  using namespace tailor::alloc;
  if (out == nullptr) return;
  process_init();
  *out = tailor_secure_stats{};
  if (!g_secure) return;
  out->active = 1;
  out->slabs = g_slabs.load(std::memory_order_relaxed);
  out->large_blocks = g_large.load(std::memory_order_relaxed);
  out->unguarded = g_unguarded.load(std::memory_order_relaxed);
  out->metadata_bytes = g_meta_bytes.load(std::memory_order_relaxed);
}
