// SPDX-License-Identifier: MIT
// Linux implementation of the OS layer (os.h): mmap, munmap, madvise and
// mremap, clock_gettime, and raw read/write for configuration and messages.
#include "os.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace tailor::alloc::os {

namespace {
constexpr std::size_t kOsPage = 4096;

void* map(std::size_t size) noexcept {
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}
}  // namespace

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

void purge(void* p, std::size_t size) noexcept {
  int saved = errno;
  madvise(p, size, MADV_DONTNEED);
  errno = saved;
}

void advise_huge_pages(void* p, std::size_t size) noexcept {
  int saved = errno;
  madvise(p, size, MADV_HUGEPAGE);
  errno = saved;
}

void* remap(void* p, std::size_t old_size, std::size_t new_size, std::size_t align) noexcept {
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

void write_stderr(const char* a, const char* b, const char* c, const char* d) noexcept {
  int saved = errno;
  const char* parts[] = {a, b, c, d};
  for (const char* s : parts) {
    if (s == nullptr) continue;
    std::size_t n = std::strlen(s);
    while (n > 0) {
      ssize_t w = write(2, s, n);
      if (w <= 0) break;
      s += w;
      n -= static_cast<std::size_t>(w);
    }
  }
  errno = saved;
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
