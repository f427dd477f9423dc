// SPDX-License-Identifier: MIT
// The OS layer of libtailor: the only file set that talks to the kernel. A
// handful of primitives (reserve, release, purge, remap, clock, stderr) with
// stated preconditions, so the back end above never includes a system header.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tailor::alloc::os {

// Reserves `size` bytes of read-write address space aligned to `align`
// (both powers of two multiples of the OS page). Pages are committed lazily
// on first touch and never counted against overcommit (MAP_NORESERVE), so a
// footprint may exceed physical memory as long as it is not touched.
// Returns nullptr (errno ENOMEM) on failure. The memory reads as zero.
void* reserve_aligned(std::size_t size, std::size_t align) noexcept;

// Returns [p, p + size) to the OS. p and size page-aligned.
void release(void* p, std::size_t size) noexcept;

// Gives the physical pages of [p, p + size) back (MADV_DONTNEED): RSS drops
// at once, the range stays reserved and reads as zero afterwards. False if
// the OS refused (the pages keep their contents).
bool purge(void* p, std::size_t size) noexcept;

// Of the OS pages of [p, p + size) (p page-aligned), how many are resident
// (mincore); -1 if the OS cannot tell.
long resident_pages(void* p, std::size_t size) noexcept;
// The same page by page: vec[i] & 1 tells whether page i of [p, p + size)
// is resident (vec holds size / page_size() bytes); false if the OS cannot tell.
bool resident_map(void* p, std::size_t size, unsigned char* vec) noexcept;

// Which OS pages of [p, p + size) (p page-aligned) have memory behind them:
// vec[i] = 1 if page i is present or swapped out (it may hold data), 0 if it
// has none (never touched since it was mapped or purged: it reads as zero).
// vec holds size / page_size() bytes. From /proc/self/pagemap (page_map.cpp),
// which, unlike mincore, tells a swapped-out page from an untouched one.
// False if the OS cannot tell; vec is then meaningless.
bool backed_map(void* p, std::size_t size, unsigned char* vec) noexcept;

// Grows or moves the mapping [p, p + old_size) to new_size without copying.
// Tries in place first; otherwise moves the pages into a fresh mapping
// aligned to `align`. Returns the new address or nullptr (nothing changed).
void* remap(void* p, std::size_t old_size, std::size_t new_size, std::size_t align) noexcept;

// Asks for transparent huge pages on a range (MADV_HUGEPAGE), where the
// kernel's THP setting is "madvise" or "always"; a no-op elsewhere.
void advise_huge_pages(void* p, std::size_t size) noexcept;

// Makes [p, p + size) inaccessible (a guard page: any access faults) or
// read-write again. p and size page-aligned. False if the OS refused (the
// mapping count limit, vm.max_map_count, is the usual reason).
bool protect(void* p, std::size_t size, bool accessible) noexcept;

// Shrinks a mapping in place (unmaps its tail). Sizes page-aligned.
void shrink(void* p, std::size_t old_size, std::size_t new_size) noexcept;

std::size_t page_size() noexcept;  // the OS page (4 KiB here)

// 64 random bits (getrandom, mixed with the clock): secrets and keys.
std::uint64_t random64() noexcept;

// Milliseconds of a coarse monotonic clock (a few ms of resolution, no syscall).
std::uint64_t now_ms() noexcept;

// Writes a message to file descriptor fd with write(2): no stdio, no
// allocation. write_stderr: to fd 2.
void write_fd(int fd, const char* a, const char* b = nullptr, const char* c = nullptr,
              const char* d = nullptr) noexcept;
inline void write_stderr(const char* a, const char* b = nullptr, const char* c = nullptr,
                         const char* d = nullptr) noexcept {
  write_fd(2, a, b, c, d);
}

// A close-on-exec copy of fd 2, for what libtailor writes at exit: many
// programs (coreutils among them) close stderr in an atexit handler, before
// the destructors run. -1 if stderr is not open.
int stderr_copy() noexcept;

// The value of environment variable `name`, or nullptr. Reads `environ`
// directly (no allocation; works before main).
const char* getenv(const char* name) noexcept;

// Reads at most cap-1 bytes of a file into buf (NUL-terminated) with
// open/read/close. Returns the byte count, or -1 if the file cannot be read.
long read_file(const char* path, char* buf, std::size_t cap) noexcept;

// The path of the running executable (/proc/self/exe, symlinks resolved),
// NUL-terminated. False if it cannot be read or does not fit.
bool executable_path(char* buf, std::size_t cap) noexcept;

// Set when the OS refuses this thread a mapping (mmap, mremap; injected
// failures included). malloc's slow path, having no block to return, takes
// it to know whether giving cached memory back and trying again may help
// (heap.cpp); nothing is paid on the way of a request that succeeds.
extern thread_local bool tl_refused __attribute__((tls_model("initial-exec"), visibility("hidden")));
inline bool take_refused() noexcept {
  const bool r = tl_refused;
  tl_refused = false;
  return r;
}

// Fault injection, compiled in only with TAILOR_FAULT_INJECTION (the test
// library libtailor-fault.so, never the installed one): after `after` more
// calls of the kinds in `ops`, the next `count` such calls fail as if the OS
// had refused (count < 0: all of them). TAILOR_FAULT_INJECT=after,count[,ops]
// sets it at start-up (ops by default mmap, madvise and mremap). In other
// builds both are no-ops. kFaultProtect is mprotect, which secure mode's
// guard pages need and which the kernel refuses past vm.max_map_count.
enum FaultOp : unsigned { kFaultMmap = 1, kFaultMadvise = 2, kFaultMremap = 4, kFaultAll = 7, kFaultProtect = 8 };
void fault_init() noexcept;
void fault_set(long after, long count, unsigned ops) noexcept;
unsigned long faults_injected() noexcept;

}  // namespace tailor::alloc::os
