// SPDX-License-Identifier: MIT
// tailor-replay-driver PLAN: replays a plan (plan_format.h) on whatever malloc
// this process has (glibc's, or one preloaded by `tailor replay`) and prints
// what it measured as one JSON object on stdout. It exists apart from `tailor`
// so that the allocator under test sees the trace's calls and nothing else:
// it links no C++ runtime (built with -fno-exceptions -fno-rtti, linked as C),
// takes all its memory from mmap, and calls nothing that allocates before its
// loop but pthread_create. Rules (docs/deploy.md, "Replay"):
//  - one pthread per trace thread, all released at once by a barrier (a
//    trace of one thread runs on the main thread, as its program did); time
//    is CLOCK_MONOTONIC from the release to the last thread's end;
//  - each thread runs its ops in order; freeing a block another thread
//    allocated first waits (pause, then sched_yield) until that allocation
//    published it in its slot (store-release / load-acquire);
//  - every block gets its first byte and one byte every 4096 written, so its
//    pages are really used;
//  - peak RSS is reset (clear_refs 5) and RSS read just before the loop; after
//    it: VmHWM, VmRSS, minor faults over the loop, and the allocator's own
//    count of memory held from the OS, through symbols it may export (weak
//    references: resolved at start if a loaded library defines them, null
//    otherwise, so no dlsym error path can allocate);
//  - the op stream is read in windows with pread into buffers mapped and
//    touched before the loop: reading the plan adds no page faults and no RSS;
//  - it exits with _exit, leaving what the trace left live.
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>

#include "replay/plan_format.h"
#include "tailor/tailor.h"

namespace plan = tailor::replay::plan;

// The allocators' own statistics, if the loaded libraries have them.
#pragma weak tailor_get_stats_sized
#pragma weak tailor_dmm_get_stats_sized
#pragma weak tailor_dmm_reset_peak
extern "C" {
__attribute__((weak)) int mallctl(const char* name, void* oldp, size_t* oldlenp, void* newp, size_t newlen);
__attribute__((weak)) int MallocExtension_GetNumericProperty(const char* property, size_t* value);
__attribute__((weak)) void mi_process_info(size_t* elapsed_msecs, size_t* user_msecs, size_t* system_msecs,
                                           size_t* current_rss, size_t* peak_rss, size_t* current_commit,
                                           size_t* peak_commit, size_t* page_faults);
}

namespace {

constexpr std::uint64_t kWindowWords = 32768;  // 256 KiB of ops per thread buffer
constexpr std::size_t kStackSize = 512 * 1024;
constexpr unsigned kSpinsBeforeYield = 1024;

[[noreturn]] __attribute__((format(printf, 1, 2))) void die(const char* fmt, ...) {
  char buf[512];
  int n = snprintf(buf, sizeof buf, "tailor-replay-driver: ");
  va_list ap;
  va_start(ap, fmt);
  n += vsnprintf(buf + n, sizeof buf - static_cast<std::size_t>(n), fmt, ap);
  va_end(ap);
  if (n > static_cast<int>(sizeof buf) - 2) n = static_cast<int>(sizeof buf) - 2;
  buf[n++] = '\n';
  if (write(STDERR_FILENO, buf, static_cast<std::size_t>(n)) < 0) {}
  _exit(2);
}

void* map_zeroed(std::uint64_t bytes, const char* what) {
  if (bytes == 0) return nullptr;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (p == MAP_FAILED) die("cannot map %llu bytes for %s", static_cast<unsigned long long>(bytes), what);
  return p;
}

void read_at(int fd, void* data, std::uint64_t bytes, std::uint64_t offset) {
  auto* p = static_cast<char*>(data);
  while (bytes > 0) {
    const ssize_t n = pread(fd, p, bytes, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) die("cannot read the plan: %s", strerror(errno));
    if (n == 0) die("the plan is cut at byte %llu", static_cast<unsigned long long>(offset));
    p += n;
    bytes -= static_cast<std::uint64_t>(n);
    offset += static_cast<std::uint64_t>(n);
  }
}

std::uint64_t now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

// --- the plan and the threads that run it --------------------------------------------

struct Slot {
  void* block;
  std::uint64_t generation;  // allocations into the slot so far; written with release, waited on with acquire
};

struct alignas(64) Worker {
  pthread_t handle;
  std::uint64_t file_offset;  // of the next word to read
  std::uint64_t words_left;   // words still in the file
  std::uint64_t* buf;
  std::uint64_t capacity, pos, end;
  std::uint64_t calls[plan::kKinds];
  std::uint64_t failed, waits, yields, emulated, end_ns;
};

// The aligned calls the allocator under test does not define itself (jemalloc
// has no pvalloc): libc's would take the block from glibc's heap, which the
// allocator's free cannot take back, so they are made with its posix_memalign.
struct Aligned {
  bool own[plan::kAlignedCalls];
};

struct Globals {
  int fd;
  std::uint64_t slots;
  Slot* table;
  Worker* workers;
  std::uint32_t threads;
  pthread_barrier_t start;
  std::uint64_t page;
  Aligned aligned;
} g;

void refill(Worker& w) {
  const std::uint64_t kept = w.end - w.pos;
  for (std::uint64_t i = 0; i < kept; ++i) w.buf[i] = w.buf[w.pos + i];
  std::uint64_t n = w.capacity - kept;
  if (n > w.words_left) n = w.words_left;
  read_at(g.fd, w.buf + kept, n * 8, w.file_offset);
  w.file_offset += n * 8;
  w.words_left -= n;
  w.pos = 0;
  w.end = kept + n;
}

inline void touch(void* p, std::uint64_t bytes) {
  volatile char* c = static_cast<volatile char*>(p);
  if (bytes > 0) c[0] = 1;
  for (std::uint64_t off = 4096; off < bytes; off += 4096) c[off] = 1;
}

// A NULL result of a request for no bytes is no failure (realloc(p, 0) frees p).
inline void publish(Worker& w, Slot& s, void* p, std::uint64_t bytes) {
  if (p)
    touch(p, bytes);
  else if (bytes > 0)
    ++w.failed;
  s.block = p;
  __atomic_store_n(&s.generation, __atomic_load_n(&s.generation, __ATOMIC_RELAXED) + 1, __ATOMIC_RELEASE);
}

// The block in `s`; for a block of another thread, once its allocation published it.
inline void* take(Worker& w, Slot& s, const plan::Op& op) {
  if (op.flags & plan::kWait) {
    if (__atomic_load_n(&s.generation, __ATOMIC_ACQUIRE) < op.wait) {
      ++w.waits;
      for (unsigned spins = 0; __atomic_load_n(&s.generation, __ATOMIC_ACQUIRE) < op.wait;) {
        if (++spins < kSpinsBeforeYield) {
          __builtin_ia32_pause();
        } else {
          ++w.yields;
          sched_yield();
        }
      }
    }
  }
  return s.block;
}

std::uint64_t round_up_pow2(std::uint64_t a) {
  std::uint64_t p = sizeof(void*);
  while (p < a && p < (std::uint64_t{1} << 62)) p <<= 1;
  return p;
}

void* aligned_call(Worker& w, unsigned call, std::uint64_t alignment, std::uint64_t size) {
  if (call >= plan::kAlignedCalls) die("damaged plan: unknown aligned call %u", call);
  if (g.aligned.own[call]) {
    switch (call) {
      case plan::kMemalign: return memalign(alignment, size);
      case plan::kPosixMemalign: {
        void* p = nullptr;
        return posix_memalign(&p, alignment, size) == 0 ? p : nullptr;
      }
      case plan::kValloc: return valloc(size);
      case plan::kPvalloc: return pvalloc(size);
      default: return aligned_alloc(alignment, size);  // aligned_alloc, aligned new
    }
  }
  ++w.emulated;
  if (call == plan::kValloc || call == plan::kPvalloc) alignment = g.page;
  if (call == plan::kPvalloc) size = size ? (size + g.page - 1) / g.page * g.page : g.page;
  void* p = nullptr;
  return posix_memalign(&p, round_up_pow2(alignment), size) == 0 ? p : nullptr;
}

void run(Worker& w) {
  for (;;) {
    if (w.end - w.pos < plan::kMaxOpWords && w.words_left) refill(w);
    if (w.pos == w.end) break;
    const std::uint64_t* word = w.buf + w.pos;
    const unsigned n = plan::op_words(*word);
    if (n > w.end - w.pos) die("damaged plan: an op is cut");
    const plan::Op op = plan::decode_op(word);
    w.pos += n;
    if (op.slot >= g.slots || op.kind == 0 || op.kind >= plan::kKinds) die("damaged plan: bad op");
    Slot& s = g.table[op.slot];
    ++w.calls[op.kind];
    switch (op.kind) {
      case plan::kMalloc:
        publish(w, s, malloc(op.size), op.size);
        break;
      case plan::kCalloc: {
        std::uint64_t bytes = 0;
        if (__builtin_mul_overflow(op.size, op.element, &bytes)) bytes = 0;
        publish(w, s, calloc(op.size, op.element), bytes);
        break;
      }
      case plan::kRealloc: {
        publish(w, s, realloc(take(w, s, op), op.size), op.size);
        break;
      }
      case plan::kAligned:
        publish(w, s, aligned_call(w, op.call, op.alignment, op.size), op.size);
        break;
      case plan::kFree:
        free(take(w, s, op));
        break;
    }
  }
}

void* thread_main(void* arg) {
  Worker& w = *static_cast<Worker*>(arg);
  pthread_barrier_wait(&g.start);
  run(w);
  w.end_ns = now_ns();
  return nullptr;
}

// --- measurements --------------------------------------------------------------------

// VmRSS, VmHWM (bytes) from /proc/self/status; read without stdio, which allocates.
struct Status {
  std::uint64_t rss = 0, hwm = 0;
};

std::uint64_t status_field(const char* text, const char* name) {
  const char* p = strstr(text, name);
  if (!p) return 0;
  p += strlen(name);
  while (*p == ' ' || *p == '\t') ++p;
  std::uint64_t kib = 0;
  while (*p >= '0' && *p <= '9') kib = kib * 10 + static_cast<std::uint64_t>(*p++ - '0');
  return kib * 1024;
}

Status read_status() {
  static char text[16384];
  Status s;
  const int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return s;
  std::size_t len = 0;
  for (ssize_t n; len < sizeof text - 1 && (n = read(fd, text + len, sizeof text - 1 - len)) > 0;)
    len += static_cast<std::size_t>(n);
  close(fd);
  text[len] = '\0';
  s.rss = status_field(text, "VmRSS:");
  s.hwm = status_field(text, "VmHWM:");
  return s;
}

bool reset_peak_rss() {
  const int fd = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = write(fd, "5", 1) == 1;
  close(fd);
  return ok;
}

bool same_object(const void* f, const void* ref) {
  Dl_info a{}, b{};
  return dladdr(f, &a) != 0 && dladdr(ref, &b) != 0 && a.dli_fbase == b.dli_fbase;
}

template <class F>
const void* address_of(F* f) {
  return reinterpret_cast<const void*>(f);
}

// The JSON object, appended to a static buffer (the loop is over; still no
// need for the heap).
char out[32768];
std::size_t out_len = 0;

__attribute__((format(printf, 1, 2))) void emit(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const int n = vsnprintf(out + out_len, sizeof out - out_len, fmt, ap);
  va_end(ap);
  if (n > 0) out_len += static_cast<std::size_t>(n);
  if (out_len >= sizeof out) die("report too long");
}

void emit_string(const char* s) {
  emit("\"");
  for (; s && *s; ++s) {
    const unsigned char c = static_cast<unsigned char>(*s);
    if (c == '"' || c == '\\')
      emit("\\%c", c);
    else if (c < 0x20)
      emit("\\u%04x", c);
    else
      emit("%c", c);
  }
  emit("\"");
}

using u64 = unsigned long long;

// The allocator's own numbers: which allocator it is, bytes it holds from the
// OS now (and at its peak, if it keeps one), and its raw counters.
void emit_allocator() {
  Dl_info malloc_info{};
  dladdr(address_of(&malloc), &malloc_info);
  const char* name = "glibc";
  if (tailor_get_stats_sized)
    name = "libtailor";
  else if (mallctl)
    name = "jemalloc";
  else if (MallocExtension_GetNumericProperty)
    name = "tcmalloc";
  else if (mi_process_info)
    name = "mimalloc";
  else if (!malloc_info.dli_fname || !strstr(malloc_info.dli_fname, "libc.so"))
    name = "unknown";
  emit("\"allocator\":");
  emit_string(name);
  emit(",\"malloc_from\":");
  emit_string(malloc_info.dli_fname);

  long long os = -1, os_peak = -1;
  const char* source = "none";
  emit(",\"allocator_stats\":{");
  if (tailor_get_stats_sized) {
    tailor_stats st{};
    tailor_get_stats(&st);
    os = static_cast<long long>(st.bytes_mapped);
    source = "tailor_get_stats bytes_mapped (address space reserved)";
    emit("\"segments_mapped\":%llu,\"bytes_mapped\":%llu,\"huge_blocks\":%llu,\"bytes_purged\":%llu,"
         "\"heaps_created\":%llu",
         static_cast<u64>(st.segments_mapped), static_cast<u64>(st.bytes_mapped), static_cast<u64>(st.huge_blocks),
         static_cast<u64>(st.bytes_purged), static_cast<u64>(st.heaps_created));
    tailor_dmm_stats d{};
    if (tailor_dmm_get_stats_sized) tailor_dmm_get_stats(&d);
    emit(",\"dmm\":{\"active\":%d", d.active);
    if (d.active) {
      emit(",\"name\":");
      emit_string(d.name);
      emit(",\"held_bytes\":%llu,\"held_high_water\":%llu,\"os_bytes\":%llu,\"os_high_water\":%llu,"
           "\"metadata_bytes\":%llu,\"allocations\":%llu,\"releases\":%llu,\"outside\":%llu",
           static_cast<u64>(d.held_bytes), static_cast<u64>(d.held_high_water), static_cast<u64>(d.os_bytes),
           static_cast<u64>(d.os_high_water), static_cast<u64>(d.metadata_bytes), static_cast<u64>(d.allocations),
           static_cast<u64>(d.releases), static_cast<u64>(d.outside));
      os = static_cast<long long>(d.os_bytes);
      os_peak = static_cast<long long>(d.os_high_water);
      source = "tailor_dmm_get_stats os_bytes (pages of the held ranges + metadata)";
    }
    emit("}");
  } else if (mallctl) {
    std::uint64_t epoch = 1;
    size_t len = sizeof epoch;
    mallctl("epoch", &epoch, &len, &epoch, len);
    size_t mapped = 0, resident = 0;
    len = sizeof(size_t);
    const bool ok = mallctl("stats.mapped", &mapped, &len, nullptr, 0) == 0;
    len = sizeof(size_t);
    mallctl("stats.resident", &resident, &len, nullptr, 0);
    if (ok) {
      os = static_cast<long long>(mapped);
      source = "mallctl stats.mapped";
    }
    emit("\"mapped\":%llu,\"resident\":%llu", static_cast<u64>(mapped), static_cast<u64>(resident));
  } else if (MallocExtension_GetNumericProperty) {
    size_t heap = 0, unmapped = 0;
    const bool ok = MallocExtension_GetNumericProperty("generic.heap_size", &heap) &&
                    MallocExtension_GetNumericProperty("tcmalloc.pageheap_unmapped_bytes", &unmapped);
    if (ok) {
      os = static_cast<long long>(heap - unmapped);
      source = "generic.heap_size - tcmalloc.pageheap_unmapped_bytes";
    }
    emit("\"heap_size\":%llu,\"pageheap_unmapped_bytes\":%llu", static_cast<u64>(heap), static_cast<u64>(unmapped));
  } else if (mi_process_info) {
    size_t elapsed = 0, user = 0, sys = 0, rss = 0, peak_rss = 0, commit = 0, peak_commit = 0, faults = 0;
    mi_process_info(&elapsed, &user, &sys, &rss, &peak_rss, &commit, &peak_commit, &faults);
    os = static_cast<long long>(commit);
    os_peak = static_cast<long long>(peak_commit);
    source = "mi_process_info current_commit (peak: peak_commit, since start)";
    emit("\"current_commit\":%llu,\"peak_commit\":%llu,\"current_rss\":%llu,\"peak_rss\":%llu",
         static_cast<u64>(commit), static_cast<u64>(peak_commit), static_cast<u64>(rss), static_cast<u64>(peak_rss));
  } else if (strcmp(name, "glibc") == 0) {
    const struct mallinfo2 mi = mallinfo2();
    os = static_cast<long long>(mi.arena + mi.hblkhd);
    source = "mallinfo2 arena + hblkhd";
    emit("\"arena\":%llu,\"hblkhd\":%llu,\"uordblks\":%llu,\"fordblks\":%llu", static_cast<u64>(mi.arena),
         static_cast<u64>(mi.hblkhd), static_cast<u64>(mi.uordblks), static_cast<u64>(mi.fordblks));
  }
  emit("},\"os_bytes\":");
  if (os >= 0) emit("%lld", os); else emit("null");
  emit(",\"os_peak_bytes\":");
  if (os_peak >= 0) emit("%lld", os_peak); else emit("null");
  emit(",\"os_bytes_source\":");
  emit_string(source);
}

void open_plan(const char* path) {
  g.fd = open(path, O_RDONLY | O_CLOEXEC);
  if (g.fd < 0) die("cannot open %s: %s", path, strerror(errno));
  struct stat st {};
  if (fstat(g.fd, &st) != 0) die("cannot stat %s: %s", path, strerror(errno));
  const auto file_size = static_cast<std::uint64_t>(st.st_size);
  plan::PlanHeader h{};
  if (file_size < sizeof h) die("%s is not a replay plan (too short)", path);
  read_at(g.fd, &h, sizeof h, 0);
  if (memcmp(h.magic, plan::kMagic, sizeof h.magic) != 0) die("%s is not a replay plan (bad magic)", path);
  if (h.version != plan::kVersion) die("%s: plan version %u, this driver reads %u", path, h.version, plan::kVersion);
  if (h.slots > plan::kMaxSlots || h.threads > (file_size - sizeof h) / sizeof(plan::PlanThreadEntry))
    die("%s: damaged plan header", path);
  g.slots = h.slots;
  g.threads = h.threads;
  auto* entries = static_cast<plan::PlanThreadEntry*>(map_zeroed(h.threads * sizeof(plan::PlanThreadEntry), "threads"));
  read_at(g.fd, entries, h.threads * sizeof(plan::PlanThreadEntry), sizeof h);
  g.workers = static_cast<Worker*>(map_zeroed(h.threads * sizeof(Worker), "threads"));
  std::uint64_t buffer_words = 0;
  for (std::uint32_t i = 0; i < h.threads; ++i) {
    const auto& e = entries[i];
    if (e.offset % 8 != 0 || e.offset > file_size || e.words > (file_size - e.offset) / 8)
      die("%s: damaged plan: thread %u lies outside the file", path, i);
    buffer_words += e.words < kWindowWords ? e.words : kWindowWords;
  }
  // The slot table and every thread's op buffer, touched now (MAP_POPULATE).
  g.table = static_cast<Slot*>(map_zeroed(g.slots * sizeof(Slot), "the slot table"));
  auto* buffers = static_cast<std::uint64_t*>(map_zeroed(buffer_words * 8, "op buffers"));
  for (std::uint32_t i = 0; i < h.threads; ++i) {
    Worker& w = g.workers[i];
    w.file_offset = entries[i].offset;
    w.words_left = entries[i].words;
    w.capacity = w.words_left < kWindowWords ? w.words_left : kWindowWords;
    w.buf = buffers;
    buffers += w.capacity;
    refill(w);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 || argv[1][0] == '-') {
    static const char usage[] =
        "usage: tailor-replay-driver PLAN\n"
        "Replays a plan written by `tailor replay --keep-plan` on this process's malloc and prints a JSON report.\n";
    if (write(argc == 2 ? STDOUT_FILENO : STDERR_FILENO, usage, sizeof usage - 1) < 0) {}
    _exit(argc == 2 && strcmp(argv[1], "--help") == 0 ? 0 : 2);
  }
  g.page = static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
  open_plan(argv[1]);

  const void* m = address_of(&malloc);
  if (!same_object(address_of(&posix_memalign), m)) die("the allocator under test does not define posix_memalign");
  g.aligned.own[plan::kMemalign] = same_object(address_of(&memalign), m);
  g.aligned.own[plan::kPosixMemalign] = true;
  g.aligned.own[plan::kAlignedAlloc] = g.aligned.own[plan::kNewAligned] = same_object(address_of(&aligned_alloc), m);
  g.aligned.own[plan::kValloc] = same_object(address_of(&valloc), m);
  g.aligned.own[plan::kPvalloc] = same_object(address_of(&pvalloc), m);

  // A trace of one thread runs on the main thread, as its program did: no
  // thread start-up allocates, and a single-threaded process stays one.
  const bool on_main = g.threads == 1;
  if (!on_main) {
    if (pthread_barrier_init(&g.start, nullptr, g.threads + 1) != 0) die("pthread_barrier_init failed");
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, kStackSize);
    for (std::uint32_t i = 0; i < g.threads; ++i)
      if (const int err = pthread_create(&g.workers[i].handle, &attr, thread_main, &g.workers[i]); err != 0)
        die("cannot start thread %u of %u: %s", i + 1, g.threads, strerror(err));
  }

  if (tailor_dmm_reset_peak) tailor_dmm_reset_peak();
  const bool peak_reset = reset_peak_rss();
  const Status before = read_status();
  rusage ru0{};
  getrusage(RUSAGE_SELF, &ru0);
  const std::uint64_t t0 = now_ns();
  std::uint64_t t1 = t0;
  if (on_main) {
    run(g.workers[0]);
    t1 = g.workers[0].end_ns = now_ns();
  } else {
    pthread_barrier_wait(&g.start);
    for (std::uint32_t i = 0; i < g.threads; ++i) {
      pthread_join(g.workers[i].handle, nullptr);
      if (g.workers[i].end_ns > t1) t1 = g.workers[i].end_ns;
    }
  }
  rusage ru1{};
  getrusage(RUSAGE_SELF, &ru1);
  const Status after = read_status();

  std::uint64_t calls[plan::kKinds] = {}, failed = 0, waits = 0, yields = 0, emulated = 0;
  for (std::uint32_t i = 0; i < g.threads; ++i) {
    const Worker& w = g.workers[i];
    for (unsigned k = 1; k < plan::kKinds; ++k) calls[k] += w.calls[k];
    failed += w.failed;
    waits += w.waits;
    yields += w.yields;
    emulated += w.emulated;
  }
  for (unsigned k = 1; k < plan::kKinds; ++k) calls[0] += calls[k];

  emit("{\"driver_version\":1,");
  emit_allocator();
  emit(",\"threads\":%u,\"slots\":%llu", g.threads, static_cast<u64>(g.slots));
  emit(",\"calls\":{\"total\":%llu,\"malloc\":%llu,\"calloc\":%llu,\"realloc\":%llu,\"aligned\":%llu,\"free\":%llu}",
       static_cast<u64>(calls[0]), static_cast<u64>(calls[plan::kMalloc]), static_cast<u64>(calls[plan::kCalloc]),
       static_cast<u64>(calls[plan::kRealloc]), static_cast<u64>(calls[plan::kAligned]),
       static_cast<u64>(calls[plan::kFree]));
  emit(",\"failed\":%llu,\"waits\":%llu,\"yields\":%llu,\"emulated_aligned\":%llu", static_cast<u64>(failed),
       static_cast<u64>(waits), static_cast<u64>(yields), static_cast<u64>(emulated));
  emit(",\"seconds\":%.9f", static_cast<double>(t1 - t0) / 1e9);
  emit(",\"rss_before_bytes\":%llu,\"peak_rss_bytes\":%llu,\"rss_after_bytes\":%llu,\"peak_reset\":%s",
       static_cast<u64>(before.rss), static_cast<u64>(after.hwm), static_cast<u64>(after.rss),
       peak_reset ? "true" : "false");
  emit(",\"minor_faults\":%lld,\"major_faults\":%lld", static_cast<long long>(ru1.ru_minflt - ru0.ru_minflt),
       static_cast<long long>(ru1.ru_majflt - ru0.ru_majflt));
  emit("}\n");
  for (std::size_t done = 0; done < out_len;) {
    const ssize_t n = write(STDOUT_FILENO, out + done, out_len - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(3);
    done += static_cast<std::size_t>(n);
  }
  _exit(0);
}
