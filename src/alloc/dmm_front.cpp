// SPDX-License-Identifier: MIT
// The DMM front end (dmm_front.h): setting the DMM up from TAILOR_DMM, the
// lock that makes it one heap for all threads, and the entry points.
#include "alloc/dmm_front.h"

#include <pthread.h>
#include <sched.h>
#include <sys/single_threaded.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <new>

#include "alloc/alloc.h"
#include "dmm/binary_buddy.h"
#include "dmm/composite.h"
#include "dmm/fibonacci_buddy.h"
#include "dmm/front.h"
#include "dmm/kingsley.h"
#include "dmm/lea.h"
#include "dmm/segregated_lists.h"
#include "alloc/dmm_memory.h"
#include "alloc/dmm_spec_file.h"
#include "alloc/heap.h"
#include "alloc/os.h"
#include "alloc/spin_lock.h"

namespace tailor::alloc {

std::uintptr_t g_dmm_base = 0;
std::uintptr_t g_dmm_size = 0;

namespace {

constexpr unsigned kSpanShift = 36;  // each allocator of a DMM: 64 GiB of address space
constexpr std::uint64_t kSpan = std::uint64_t{1} << kSpanShift;
constexpr std::uint64_t kPage = RealMemory::kPage;

// ---------------------------------------------------------------- arena

constexpr std::size_t kArenaBytes = std::size_t{1} << 30;
char* g_arena = nullptr;
std::size_t g_arena_used = 0;

// ---------------------------------------------------------------- lock

// One lock for the DMM (spin_lock.h).
SpinLock g_lock;

void lock() noexcept { g_lock.lock(); }
void unlock() noexcept { g_lock.unlock(); }

// No lock while the process has one thread: glibc clears
// __libc_single_threaded in pthread_create before the second thread runs,
// and never sets it again, so a guard that skipped the lock ends before any
// other thread can enter.
struct Guard {
  bool locked = !__libc_single_threaded;
  Guard() noexcept {
    if (locked) lock();
  }
  ~Guard() {
    if (locked) unlock();
  }
  Guard(const Guard&) = delete;
  Guard& operator=(const Guard&) = delete;
};

// ---------------------------------------------------------------- the DMM

// A built-in mechanism or a spec's allocators, composed by the simulator's
// own composition (dmm/composite.h); allocator i on the i-th span.
dmm::Composite<RealMemory>* g_dmm = nullptr;
MemoryTotals g_totals;
RealMemory* g_memories[dmm::Composite<RealMemory>::kMaxParts];
std::size_t g_memory_count = 0;
char g_name[64] = "";
std::uint64_t g_allocations = 0, g_releases = 0, g_outside = 0;
// Resident bytes (docs/deploy.md): the pages the DMM's held ranges touch
// plus the state of its mechanisms and memories, taken after every
// operation that changed the bytes held, as the simulator takes them
// (src/simulate/simulator.h), and their high-water mark.
std::uint64_t g_resident = 0, g_resident_high = 0;
Heap* g_fallback = nullptr;  // serves what the DMM cannot; used under the lock only

std::size_t part_of(dmm::Address a) noexcept { return (a - g_dmm_base) >> kSpanShift; }

// ---------------------------------------------------------------- the front

// The cache of free blocks in front of the DMM (dmm/front.h), one per thread
// that allocates or frees: its bins are the thread's alone, so a request it
// serves takes no lock; it passes requests and blocks on to the DMM under
// the lock. A thread that ends gives its blocks back (front_done) and its
// Front goes on a list for the next thread. Fronts come from the arena and
// live for ever; every one made is on g_fronts (stats sum their counters).
struct ThreadFront {
  dmm::Front front;
  dmm::FrontCounters counters;
  ThreadFront* next_all = nullptr;
  ThreadFront* next_spare = nullptr;
};
unsigned g_front_limit = 0;  // blocks per bin; 0: no front
std::uint8_t g_owner[dmm::Front::kBins + 1];
// Blocks each bin keeps (dmm::Front::limits): while the process has one
// thread, and each thread's once it has several.
std::uint32_t g_limits[dmm::Front::kBins + 1];
std::uint32_t g_threads_limits[dmm::Front::kBins + 1];
ThreadFront* g_fronts = nullptr;   // every front made (under the lock)
ThreadFront* g_spares = nullptr;   // fronts of threads that ended (under the lock)
pthread_key_t g_front_key;
thread_local constinit ThreadFront* tl_front __attribute__((tls_model("initial-exec"))) = nullptr;

std::uint64_t load_word(dmm::Address a) noexcept { return *reinterpret_cast<const std::uint64_t*>(a); }
void store_word(dmm::Address a, std::uint64_t v) noexcept { *reinterpret_cast<std::uint64_t*>(a) = v; }

template <class T, class... Args>
T* make(Args&&... args) {
  void* p = OsArena::allocate(sizeof(T));
  return p == nullptr ? nullptr : ::new (p) T(std::forward<Args>(args)...);
}

template <class Mech, class... Args>
bool build_one(Args&&... args) {
  g_dmm = make<dmm::Composite<RealMemory>>();
  return g_dmm != nullptr && g_dmm->build_one<Mech>(*g_memories[0], std::forward<Args>(args)...) == nullptr;
}

// Reserves `parts` spans and makes one memory on each.
bool reserve(std::size_t parts) {
  void* base = os::reserve_aligned(parts * kSpan, kSpan);
  if (base == nullptr) return false;
  g_dmm_base = reinterpret_cast<std::uintptr_t>(base);
  for (std::size_t i = 0; i < parts; ++i) {
    g_memories[i] = make<RealMemory>(g_dmm_base + i * kSpan, kSpan, g_totals);
    if (g_memories[i] == nullptr) return false;
  }
  g_memory_count = parts;
  return true;
}

void set_name(const char* name) {
  std::size_t n = std::strlen(name);
  if (n >= sizeof g_name) n = sizeof g_name - 1;
  std::memcpy(g_name, name, n);
  g_name[n] = '\0';
}

void report(const char* setting, const char* why) {
  os::write_stderr("tailor: TAILOR_DMM=", setting, ": ", why);
  os::write_stderr("; running on libtailor's own heaps\n");
}

// The sizes of EXA and of "exact" classes when no trace names them:
// TAILOR_DMM_SIZES, else every multiple of 8 up to 32 KiB (exact fit above).
constexpr std::size_t kDefaultExactSizes = 32 * 1024 / 8;
std::size_t default_exact_sizes(std::uint64_t* sizes) {
  std::size_t n = dmm_sizes_file(sizes, kDefaultExactSizes);
  if (n == 0)
    for (n = 0; n < kDefaultExactSizes; ++n) sizes[n] = (n + 1) * 8;
  return n;
}

// Room for those sizes while a DMM is built (not part of its state: the
// classes keep what they need).
struct ScratchSizes {
  static constexpr std::size_t kBytes = kDefaultExactSizes * sizeof(std::uint64_t);
  std::uint64_t* data = static_cast<std::uint64_t*>(os::reserve_aligned(kBytes, kPage));
  bool ok() const noexcept { return data != nullptr; }
  ScratchSizes() = default;
  ScratchSizes(const ScratchSizes&) = delete;
  ScratchSizes& operator=(const ScratchSizes&) = delete;
  ~ScratchSizes() {
    if (data != nullptr) os::release(data, kBytes);
  }
};

// The built-in DMMs, as the simulator builds them (src/simulate/simulator.cpp).
bool is_builtin(const char* name) {
  for (const char* n : {"kng", "lea", "fib", "buddy", "s10", "exa"})
    if (std::strcmp(name, n) == 0) return true;
  return false;
}

// A built-in (is_builtin) as the DMM; false, reported, if it cannot be set up.
bool build_builtin(const char* name, const char* setting) {
  using M = RealMemory;
  auto is = [&](const char* n) { return std::strcmp(name, n) == 0; };
  if (!reserve(1)) {
    report(setting, "cannot reserve the DMM's address space");
    return false;
  }
  bool ok = false;
  if (is("kng")) ok = build_one<dmm::Kingsley<M>>(kPage);
  if (is("lea")) ok = build_one<dmm::Lea<M>>(kPage);
  if (is("fib")) ok = build_one<dmm::FibonacciBuddy<M>>(dmm::FibonacciBuddy<M>::kDefaultTop, kPage);
  if (is("buddy")) ok = build_one<dmm::BinaryBuddy<M>>(dmm::BinaryBuddy<M>::kDefaultMaxOrder, kPage);
  if (is("s10")) {
    dmm::SizeClasses<OsArena> classes;
    ok = dmm::assign_s10_classes(classes) &&
         build_one<dmm::SegregatedLists<M>>(std::move(classes), dmm::s10_config(kPage));
  }
  if (is("exa")) {
    ScratchSizes sizes;
    dmm::SizeClasses<OsArena> classes;
    if (sizes.ok()) {
      const std::size_t n = default_exact_sizes(sizes.data);
      ok = dmm::assign_exa_classes(classes, sizes.data, n) &&
           build_one<dmm::SegregatedLists<M>>(std::move(classes), dmm::exa_config(kPage));
    }
  }
  if (!ok) report(setting, "out of memory for the DMM's own state");
  set_name(name);
  return ok;
}

bool build_spec(const char* path) {
  SpecFile spec;
  if (!spec.load(path)) {
    report(path, spec.error());
    return false;
  }
  const dmm::SpecView& v = spec.view();
  if (v.allocators[v.count - 1].bounded) {  // a program may ask for any size (the simulator checks the trace's)
    char line[256];
    dmm::Text t(line, sizeof line);
    t.append("allocators[").append_uint(v.count - 1).append("].sizes.max: requests above ");
    t.append_uint(v.allocators[v.count - 1].max).append(" bytes are covered by none; give the last allocator no max");
    report(path, line);
    return false;
  }
  if (!reserve(spec.view().count)) {
    report(path, "cannot reserve the DMM's address space");
    return false;
  }
  // "exact" classes come from the sizes the file carries (the search writes
  // the trace's), else from TAILOR_DMM_SIZES, else every multiple of 8 up
  // to 32 KiB.
  dmm::SpecView view = spec.view();
  bool exact = false;
  for (std::size_t i = 0; i < view.count; ++i) exact = exact || view.allocators[i].classes == dmm::ClassKind::kExact;
  ScratchSizes sizes;
  if (exact && view.exact_size_count == 0 && sizes.ok()) {
    view.exact_sizes = sizes.data;
    view.exact_size_count = default_exact_sizes(sizes.data);
  }
  g_dmm = make<dmm::Composite<RealMemory>>();
  std::size_t failed = 0;
  const char* why = g_dmm == nullptr ? "out of memory for the DMM's own state" : g_dmm->build(view, g_memories, failed);
  if (why != nullptr) {
    char line[256];
    dmm::Text t(line, sizeof line);
    t.append("allocators[").append_uint(failed).append("]: ").append(why);
    report(path, line);
    return false;
  }
  set_name(spec.view().name);
  return true;
}

void account_resident() noexcept {
  std::uint64_t n = g_totals.os + g_dmm->state_bytes();
  for (std::size_t i = 0; i < g_memory_count; ++i) n += g_memories[i]->state_bytes();
  g_resident = n;
  if (n > g_resident_high) g_resident_high = n;
}

// The calling thread's front, made (or taken from a thread that ended) on
// its first use; nullptr if the arena is out of room. Under the lock.
__attribute__((noinline)) ThreadFront* front_make() noexcept {
  ThreadFront* f = g_spares;
  if (f != nullptr) {
    g_spares = f->next_spare;
  } else {
    void* p = OsArena::allocate(sizeof(ThreadFront));
    if (p == nullptr) return nullptr;
    f = ::new (p) ThreadFront;
    f->next_all = g_fronts;
    g_fronts = f;
  }
  tl_front = f;
  pthread_setspecific(g_front_key, f);
  return f;
}
inline ThreadFront* front_locked() noexcept {
  ThreadFront* f = tl_front;
  return f != nullptr ? f : front_make();
}

// A thread ends: its blocks go back to the DMM, its front to the spares.
void front_done(void* value) {
  auto* f = static_cast<ThreadFront*>(value);
  if (f == nullptr) return;
  lock();
  f->front.drain(load_word, [](dmm::Address a) {
    ++g_releases;
    g_dmm->release(part_of(a), a);
  });
  f->next_spare = g_spares;
  g_spares = f;
  account_resident();
  unlock();
  tl_front = nullptr;
}

void fork_prepare() { lock(); }
void fork_parent() { unlock(); }
void fork_child() { unlock(); }

// Serves a request the DMM cannot from the fallback heap (under the lock).
void* outside(std::size_t size, std::size_t align) noexcept {
  if (g_fallback == nullptr) g_fallback = heap_create_detached();
  if (g_fallback == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  ++g_outside;
  return align > 16 ? heap_malloc_aligned_on(g_fallback, size, align) : heap_malloc_unrouted(g_fallback, size);
}

}  // namespace

void* OsArena::allocate(std::size_t bytes) noexcept {
  if (g_arena == nullptr) {
    g_arena = static_cast<char*>(os::reserve_aligned(kArenaBytes, kPage));
    if (g_arena == nullptr) return nullptr;
  }
  bytes = (bytes + 15) & ~std::size_t{15};
  if (bytes > kArenaBytes - g_arena_used) return nullptr;
  void* p = g_arena + g_arena_used;
  g_arena_used += bytes;
  return p;
}
void OsArena::release(void*, std::size_t) noexcept {}
std::size_t OsArena::used() noexcept { return g_arena_used; }

void dmm_init() noexcept {
  // TAILOR_DMM, else the config file's `dmm` (config.h).
  const char* setting = g_config.dmm;
  if (setting[0] == '\0') return;
  const std::size_t n = std::strlen(setting);
  const bool file = std::strchr(setting, '/') != nullptr || (n > 5 && std::strcmp(setting + n - 5, ".json") == 0);
  bool ok;
  if (file) {
    ok = build_spec(setting);
  } else {
    ok = is_builtin(setting) && build_builtin(setting, setting);
    if (!is_builtin(setting)) report(setting, "unknown DMM (built-ins: kng, lea, fib, buddy, s10, exa; or a JSON spec file)");
  }
  if (!ok) {
    if (g_dmm_base != 0 && g_memory_count > 0) os::release(reinterpret_cast<void*>(g_dmm_base), g_memory_count * kSpan);
    g_dmm_base = 0;
    g_memory_count = 0;
    return;
  }
  account_resident();
  g_front_limit = static_cast<unsigned>(g_config.value[static_cast<int>(Param::kDmmFront)]);
  if (g_front_limit > 0) {
    dmm::Front::owners(g_owner, [](std::uint64_t bytes) { return g_dmm->part_for(bytes); });
    dmm::Front::limits(g_limits, g_owner, g_front_limit, [](std::size_t i) { return g_dmm->merges(i); });
    dmm::Front::limits(g_threads_limits, g_owner, g_front_limit, [](std::size_t i) { return g_dmm->merges(i); },
                       dmm::Front::kThreadsUnmergedLimit);
    if (pthread_key_create(&g_front_key, &front_done) != 0) g_front_limit = 0;
  }
  pthread_atfork(fork_prepare, fork_parent, fork_child);
  g_dmm_size = g_memory_count * kSpan;  // from here on, the DMM serves malloc
}

namespace {

// A request the front did not serve: the DMM's mechanism, under the lock.
// `bin`: the request's front bin (0: none serves it).
__attribute__((noinline)) void* dmm_malloc_slow(std::size_t size, std::size_t align, unsigned bin) noexcept {
  Guard g;
  const std::uint64_t held = g_totals.held;
  const dmm::Block b = g_dmm->allocate(size, align);
  if (b.address != 0) [[likely]] {
    ++g_allocations;
    if (g_totals.held != held) [[unlikely]]
      account_resident();
    if (bin != 0) {  // the bin such blocks come back to (dmm/front.h, "learn")
      ThreadFront* f = front_locked();
      if (f != nullptr && !f->front.learned(bin)) {
        const unsigned t = dmm::Front::bin_of_block(b.address, g_dmm->usable(part_of(b.address), b.address));
        f->front.learn(bin, t != 0 && g_owner[t] == g_owner[bin] ? t : bin);
      }
    }
    return reinterpret_cast<void*>(b.address);
  }
  return outside(size, align);
}

}  // namespace

// The thread's front first, without the lock or the mechanism (a thread has
// a front from its first request of a bin or free of a DMM block, and only
// while fronts are on): kept small, so that a request it serves pays no
// more than a few loads.
void* dmm_malloc(std::size_t size, std::size_t align) noexcept {
  const unsigned bin = dmm::Front::bin_of_request(size, align);
  // Bin 0 (aligned or above 1 KiB) has no owner while fronts are on; while
  // they are off no thread has a front, and the request goes on below.
  if (g_owner[bin] == dmm::Front::kNoOwner) return dmm_malloc_slow(size, align, 0);
  ThreadFront* f = tl_front;
  if (f == nullptr) [[unlikely]]  // no front yet, or fronts are off
    return dmm_malloc_slow(size, align, g_front_limit > 0 ? bin : 0);
  if (const dmm::Address a = f->front.take(bin, size, load_word); a != 0) {
    ++f->counters.hits;
    return reinterpret_cast<void*>(a);
  }
  ++f->counters.misses;  // its bin had no block
  return dmm_malloc_slow(size, align, bin);
}

namespace {

// A block the front does not keep goes back to its allocator (the caller
// holds the lock): out of line, so that a free the front keeps saves no
// more registers than it uses.
__attribute__((noinline)) void release_locked(dmm::Address a, std::size_t part) noexcept {
  ++g_releases;
  const std::uint64_t held = g_totals.held;
  g_dmm->release(part, a);
  if (g_totals.held != held) [[unlikely]]
    account_resident();
}

// The front's bin for a freed block of allocator `part` with `usable`
// bytes, or 0: none, or a bin another allocator owns (dmm/front.h).
inline unsigned front_bin(dmm::Address a, std::uint64_t usable, std::size_t part) noexcept {
  const unsigned b = dmm::Front::bin_of_block(a, usable);
  return b != 0 && g_owner[b] == part ? b : 0;
}

// Keeps the block in bin b of the thread's front if the bin has room;
// false, counted as passed on, if it has not.
inline bool keep_in_front(ThreadFront* f, unsigned b, dmm::Address a, std::uint32_t limit) noexcept {
  if (f->front.push(b, a, limit, store_word)) {
    ++f->counters.kept;
    return true;
  }
  ++f->counters.passed;
  return false;
}

// A free the single-threaded fast path did not take: with the lock (once
// the process has threads), the front made on first use, the block kept or
// passed on.
__attribute__((noinline)) void dmm_free_slow(dmm::Address a) noexcept {
  Guard g;
  const std::size_t part = part_of(a);
  if (g_front_limit > 0) {
    // The block's usable bytes come from its header, which a neighbour's
    // release may be rewriting: under the lock (none while single-threaded).
    if (const unsigned b = front_bin(a, g_dmm->usable(part, a), part); b != 0) {
      if (ThreadFront* f = front_locked();
          f != nullptr && keep_in_front(f, b, a, g.locked ? g_threads_limits[b] : g_limits[b]))
        return;
    }
  }
  release_locked(a, part);
}

}  // namespace

// While the process has one thread and this thread has a front (fronts are
// on), a block whose header the composition reads inline (composite.h,
// usable_inline: every mechanism of the dmm layer) is decided here, with no
// lock and, when its bin keeps it, no call; every other free goes through
// dmm_free_slow, which decides the same way under the lock.
void dmm_free(void* p) noexcept {
  const auto a = reinterpret_cast<dmm::Address>(p);
  ThreadFront* f = tl_front;
  const std::size_t part = part_of(a);
  std::uint64_t usable;
  if (f != nullptr && __libc_single_threaded && g_dmm->usable_inline(part, a, usable)) [[likely]] {
    if (const unsigned b = front_bin(a, usable, part); b != 0 && keep_in_front(f, b, a, g_limits[b])) return;
    release_locked(a, part);  // no lock: one thread
    return;
  }
  dmm_free_slow(a);
}

std::size_t dmm_usable(const void* p) noexcept {
  Guard g;
  const auto a = reinterpret_cast<dmm::Address>(p);
  return g_dmm->usable(part_of(a), a);
}

void* dmm_realloc(void* p, std::size_t size) noexcept {
  if (p == nullptr) return dmm_malloc(size, 0);
  if (size == 0) {  // glibc frees and returns NULL
    free_inline(p);
    return nullptr;
  }
  // Not modelled by a DMM: a new block, the contents copied, the old block
  // released (what an allocator must do when a block moves).
  const std::size_t old = dmm_owns(p) ? dmm_usable(p) : usable_size(p);
  void* q = dmm_malloc(size, 0);
  if (q == nullptr) return nullptr;  // p is left untouched
  std::memcpy(q, p, old < size ? old : size);
  free_inline(p);
  return q;
}

void dmm_get_stats(tailor_dmm_stats* out) noexcept {
  *out = tailor_dmm_stats{};
  if (!dmm_active()) return;
  Guard g;
  out->active = 1;
  out->name = g_name;
  out->held_bytes = g_totals.held;
  out->held_high_water = g_totals.held_high;
  out->metadata_bytes = g_resident - g_totals.os;
  out->os_bytes = g_resident;
  out->os_high_water = g_resident_high;
  out->allocations = g_allocations;
  out->releases = g_releases;
  out->outside = g_outside;
  out->front_limit = g_front_limit;
  for (const ThreadFront* f = g_fronts; f != nullptr; f = f->next_all) {  // other threads' counts: racy snapshots
    out->front_hits += f->counters.hits;
    out->front_kept += f->counters.kept;
    out->front_blocks += f->front.blocks();
  }
}

void dmm_reset_peak() noexcept {
  if (!dmm_active()) return;
  Guard g;
  g_totals.reset_peak();
  g_resident_high = g_resident;
}

}  // namespace tailor::alloc
