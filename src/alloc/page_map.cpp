// SPDX-License-Identifier: MIT
// Which pages of a range have memory behind them (os.h, backed_map), read
// from /proc/self/pagemap: one 64-bit entry per page, bit 63 present, bit
// 62 swapped out. An entry with neither (and no other bit but soft-dirty)
// is a page table hole: the page was never touched since the mapping was
// made or purged, and a private anonymous page there reads as zero. mincore
// cannot tell this: it calls a swapped-out page, which holds data, not
// resident. calloc uses the map to write zeros only where memory is
// (calloc_zero.h), where purging the whole block would cost a TLB
// shootdown across the process's cores and a fault per page it touches
// again (92 us against 3 us for a 2.3 MiB block with two pages touched).
//
// The file stays open (close-on-exec). Reading a stale descriptor would
// return another process's page tables or another file's bytes, and a
// wrong map would make calloc return memory that is not zero, so every
// read is checked twice: the process is the one that opened the file
// (a child of fork, or of _Fork without fork handlers, opens its own), and
// after the read the descriptor still names the same file (a program may
// close descriptors it did not open, and its next open reuse the number).
// Any doubt answers "cannot tell", and calloc falls back to its other ways.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>

#include "alloc/os.h"

namespace tailor::alloc::os {

namespace {

// The open pagemap: (pid << 32) | fd, 0 before the first open; the file's
// identity to check a descriptor against; and the process that could not
// open it (no /proc, a sandbox), which does not try again.
std::atomic<std::uint64_t> g_open{0};
std::atomic<std::uint64_t> g_dev{0}, g_ino{0};
std::atomic<std::uint32_t> g_unavailable_pid{0};

constexpr std::uint64_t kSoftDirty = std::uint64_t{1} << 55;
constexpr std::size_t kChunk = 256;  // entries read at once: 2 KiB of stack

bool same_file(int fd) noexcept {
  struct stat st;
  return fstat(fd, &st) == 0 && static_cast<std::uint64_t>(st.st_dev) == g_dev.load(std::memory_order_acquire) &&
         static_cast<std::uint64_t>(st.st_ino) == g_ino.load(std::memory_order_acquire);
}

// The descriptor for process pid, opened if this process has none; -1 if
// the OS cannot give one.
int pagemap_fd(std::uint32_t pid) noexcept {
  std::uint64_t cur = g_open.load(std::memory_order_acquire);
  if (cur != 0 && static_cast<std::uint32_t>(cur >> 32) == pid) return static_cast<int>(cur & 0xffffffffu);
  if (g_unavailable_pid.load(std::memory_order_relaxed) == pid) return -1;
  if (cur != 0 && same_file(static_cast<int>(cur & 0xffffffffu)))
    close(static_cast<int>(cur & 0xffffffffu));  // the parent's, inherited: still ours to close
  const int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    if (fd >= 0) close(fd);
    g_unavailable_pid.store(pid, std::memory_order_relaxed);
    g_open.store(0, std::memory_order_release);
    return -1;
  }
  // The identity before the descriptor is published, so that no reader
  // checks the new descriptor against the old identity (it would call the
  // map doubtful and drop the descriptor, open). Any open of this
  // process's pagemap names the same file: a racing thread stores the same.
  g_dev.store(static_cast<std::uint64_t>(st.st_dev), std::memory_order_release);
  g_ino.store(static_cast<std::uint64_t>(st.st_ino), std::memory_order_release);
  const std::uint64_t mine = (std::uint64_t{pid} << 32) | static_cast<std::uint32_t>(fd);
  // Two threads may open at once (the first calls, or both after a doubt):
  // the first to publish wins, the other closes its own.
  if (!g_open.compare_exchange_strong(cur, mine, std::memory_order_acq_rel)) {
    close(fd);
    return cur != 0 && static_cast<std::uint32_t>(cur >> 32) == pid ? static_cast<int>(cur & 0xffffffffu) : -1;
  }
  return fd;
}

}  // namespace

bool backed_map(void* p, std::size_t size, unsigned char* vec) noexcept {
  const int saved = errno;
  const auto pid = static_cast<std::uint32_t>(getpid());
  const int fd = pagemap_fd(pid);
  bool ok = fd >= 0;
  const std::size_t pages = size / page_size();
  const std::uintptr_t first = reinterpret_cast<std::uintptr_t>(p) / page_size();
  std::uint64_t entry[kChunk];
  for (std::size_t done = 0; ok && done < pages;) {
    const std::size_t n = pages - done < kChunk ? pages - done : kChunk;
    const auto want = static_cast<ssize_t>(n * sizeof entry[0]);
    ok = pread(fd, entry, n * sizeof entry[0], static_cast<off_t>((first + done) * sizeof entry[0])) == want;
    for (std::size_t i = 0; ok && i < n; ++i) vec[done + i] = (entry[i] & ~kSoftDirty) != 0;
    done += n;
  }
  if (fd >= 0 && !same_file(fd)) {
    // The number was closed, or names another file now: not ours to close.
    // The next call opens again.
    std::uint64_t cur = (std::uint64_t{pid} << 32) | static_cast<std::uint32_t>(fd);
    g_open.compare_exchange_strong(cur, 0, std::memory_order_acq_rel);
    ok = false;
  }
  errno = saved;
  return ok;
}

}  // namespace tailor::alloc::os
