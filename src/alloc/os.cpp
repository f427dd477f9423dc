// SPDX-License-Identifier: MIT
// Linux implementation of the OS layer (os.h): mmap, munmap, madvise and
// mremap, clock_gettime, and raw read/write for configuration and messages.
#include "alloc/os.h"
#include "dmm/text.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>

extern char** environ;

namespace tailor::alloc::os {

namespace {
constexpr std::size_t kOsPage = 4096;

#ifdef TAILOR_FAULT_INJECTION
std::atomic<long> g_fault_after{-1};  // calls to let through before failing; -1: injection off
std::atomic<long> g_fault_count{0};   // failures left (negative: unlimited)
std::atomic<unsigned> g_fault_ops{0};
std::atomic<unsigned long> g_faults{0};

// True if this call of kind `op` is to fail (errno ENOMEM set).
bool inject(unsigned op) noexcept {
  if ((g_fault_ops.load(std::memory_order_relaxed) & op) == 0) return false;
  if (g_fault_after.load(std::memory_order_relaxed) < 0) return false;
  if (g_fault_after.fetch_sub(1, std::memory_order_relaxed) > 0) return false;
  g_fault_after.store(0, std::memory_order_relaxed);
  const long left = g_fault_count.load(std::memory_order_relaxed);
  if (left == 0) return false;
  if (left > 0 && g_fault_count.fetch_sub(1, std::memory_order_relaxed) <= 0) return false;
  g_faults.fetch_add(1, std::memory_order_relaxed);
  errno = ENOMEM;
  return true;
}
#else
constexpr bool inject(unsigned) noexcept { return false; }
#endif

void* map(std::size_t size) noexcept {
  void* p = inject(kFaultMmap) ? MAP_FAILED
                               : mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p != MAP_FAILED) return p;
  tl_refused = true;
  return nullptr;
}
}  // namespace

thread_local bool tl_refused __attribute__((tls_model("initial-exec"))) = false;

#ifdef TAILOR_FAULT_INJECTION
void fault_set(long after, long count, unsigned ops) noexcept {
  g_fault_ops.store(0, std::memory_order_relaxed);
  g_fault_count.store(count, std::memory_order_relaxed);
  g_fault_after.store(after, std::memory_order_relaxed);
  g_fault_ops.store(ops, std::memory_order_relaxed);
}
unsigned long faults_injected() noexcept { return g_faults.load(std::memory_order_relaxed); }
// With TAILOR_FAULT_INJECT set, the process says at exit how many calls
// failed (bench/alloc_faults.py adds them up over its runs), on a copy of
// stderr taken at start-up (programs may close stderr at exit).
int g_report_fd = -1;
void fault_report() noexcept {
  dmm::TextBuffer<24> n;
  n.append_uint(faults_injected());
  write_fd(g_report_fd, "tailor-fault: ", n.c_str(), " injected failures\n");
}
void fault_init() noexcept {
  const char* s = getenv("TAILOR_FAULT_INJECT");
  if (s == nullptr) return;
  g_report_fd = stderr_copy();
  atexit(fault_report);
  long v[3] = {0, -1, kFaultAll};
  for (int i = 0; i < 3 && *s; ++i) {
    char* end;
    v[i] = strtol(s, &end, 10);
    s = *end == ',' ? end + 1 : end;
  }
  fault_set(v[0], v[1], static_cast<unsigned>(v[2]));
}
#else
void fault_set(long, long, unsigned) noexcept {}
unsigned long faults_injected() noexcept { return 0; }
void fault_init() noexcept {}
#endif

std::size_t page_size() noexcept { return kOsPage; }

void* reserve_aligned(std::size_t size, std::size_t align) noexcept {
  if (align <= kOsPage) return map(size);
  // Over-reserve, then trim both ends so the result is aligned. Try the
  // exact size first: mmap often returns an aligned address by chance.
  void* p = map(size);
  if (p == nullptr) return nullptr;
  if ((reinterpret_cast<std::uintptr_t>(p) & (align - 1)) == 0) return p;
  munmap(p, size);
  std::size_t total = size + align;
  if (total < size) { errno = ENOMEM; return nullptr; }
  auto* raw = static_cast<char*>(map(total));
  if (raw == nullptr) return nullptr;
  auto addr = reinterpret_cast<std::uintptr_t>(raw);
  std::uintptr_t aligned = (addr + align - 1) & ~(std::uintptr_t{align} - 1);
  std::size_t front = aligned - addr;
  std::size_t back = total - front - size;
  if (front) munmap(raw, front);
  if (back) munmap(raw + front + size, back);
  return reinterpret_cast<void*>(aligned);
}

// release, purge and shrink run inside free, which must preserve errno.
void release(void* p, std::size_t size) noexcept {
  int saved = errno;
  munmap(p, size);
  errno = saved;
}

bool purge(void* p, std::size_t size) noexcept {
  int saved = errno;
  bool ok = !inject(kFaultMadvise) && madvise(p, size, MADV_DONTNEED) == 0;
  errno = saved;
  return ok;
}

long resident_pages(void* p, std::size_t size) noexcept {
  unsigned char vec[256];
  const std::size_t ps = page_size();
  auto* at = static_cast<std::uint8_t*>(p);
  std::size_t pages = (size + ps - 1) / ps;
  long resident = 0;
  while (pages != 0) {
    const std::size_t n = pages < sizeof vec ? pages : sizeof vec;
    if (!resident_map(at, n * ps, vec)) return -1;
    for (std::size_t i = 0; i < n; ++i) resident += vec[i] & 1;
    at += n * ps;
    pages -= n;
  }
  return resident;
}

bool resident_map(void* p, std::size_t size, unsigned char* vec) noexcept {
  const int saved = errno;
  const bool ok = mincore(p, size, vec) == 0;
  errno = saved;
  return ok;
}

bool protect(void* p, std::size_t size, bool accessible) noexcept {
  int saved = errno;
  bool ok = !inject(kFaultProtect) && mprotect(p, size, accessible ? PROT_READ | PROT_WRITE : PROT_NONE) == 0;
  errno = saved;
  return ok;
}

std::uint64_t random64() noexcept {
  int saved = errno;
  std::uint64_t v = 0;
  if (getrandom(&v, sizeof v, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof v)) v = 0;
  errno = saved;
  // Mixed with the clock and an address, so that a failed getrandom still
  // differs between runs.
  v ^= now_ms() * 0x9e3779b97f4a7c15u ^ reinterpret_cast<std::uintptr_t>(&v);
  return v;
}

void advise_huge_pages(void* p, std::size_t size) noexcept {
  int saved = errno;
  madvise(p, size, MADV_HUGEPAGE);
  errno = saved;
}

void* remap(void* p, std::size_t old_size, std::size_t new_size, std::size_t align) noexcept {
  if (inject(kFaultMremap)) {
    tl_refused = true;
    return nullptr;
  }
  void* q = mremap(p, old_size, new_size, 0);
  if (q != MAP_FAILED) return q;
  void* dst = reserve_aligned(new_size, align);
  if (dst == nullptr) return nullptr;
  q = mremap(p, old_size, old_size, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
  if (q == MAP_FAILED) { munmap(dst, new_size); return nullptr; }
  return q;
}

void shrink(void* p, std::size_t old_size, std::size_t new_size) noexcept {
  if (new_size < old_size) release(static_cast<char*>(p) + new_size, old_size - new_size);
}

std::uint64_t now_ms() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000u + static_cast<std::uint64_t>(ts.tv_nsec) / 1000000u;
}

void write_fd(int fd, const char* a, const char* b, const char* c, const char* d) noexcept {
  int saved = errno;
  const char* parts[] = {a, b, c, d};
  for (const char* s : parts) {
    if (s == nullptr) continue;
    std::size_t n = std::strlen(s);
    while (n > 0) {
      ssize_t w = write(fd, s, n);
      if (w <= 0) break;
      s += w;
      n -= static_cast<std::size_t>(w);
    }
  }
  errno = saved;
}

int stderr_copy() noexcept {
  const int saved = errno;
  const int fd = fcntl(2, F_DUPFD_CLOEXEC, 3);
  errno = saved;
  return fd;
}

const char* getenv(const char* name) noexcept {
  if (environ == nullptr) return nullptr;
  std::size_t n = std::strlen(name);
  for (char** e = environ; *e != nullptr; ++e)
    if (std::strncmp(*e, name, n) == 0 && (*e)[n] == '=') return *e + n + 1;
  return nullptr;
}

long read_file(const char* path, char* buf, std::size_t cap) noexcept {
  int saved = errno;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) { errno = saved; return -1; }
  std::size_t len = 0;
  while (len + 1 < cap) {
    ssize_t r = read(fd, buf + len, cap - 1 - len);
    if (r <= 0) break;
    len += static_cast<std::size_t>(r);
  }
  close(fd);
  buf[len] = '\0';
  errno = saved;
  return static_cast<long>(len);
}

bool executable_path(char* buf, std::size_t cap) noexcept {
  int saved = errno;
  ssize_t n = readlink("/proc/self/exe", buf, cap);
  errno = saved;
  if (n <= 0 || static_cast<std::size_t>(n) >= cap) return false;
  buf[n] = '\0';
  return true;
}

}  // namespace tailor::alloc::os
