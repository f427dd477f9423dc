// SPDX-License-Identifier: MIT
// The whole malloc API with libtailor as the process's allocator (this test
// links libtailor.so, so every malloc of the process, GoogleTest's included,
// is libtailor's): every entry point for many sizes and alignments, glibc's
// errno conventions, operator new and delete in all forms, fork from a
// multithreaded parent. Not built under sanitizers (they replace malloc).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>
#include <vector>

#include "tailor/tailor.h"

extern "C" {
void* __libc_malloc(size_t);
void __libc_free(void*);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
void* __libc_valloc(size_t);
void* __libc_pvalloc(size_t);
void cfree(void*);
void free_sized(void*, size_t);
void free_aligned_sized(void*, size_t, size_t);
}

namespace {

bool is_aligned(const void* p, std::size_t a) { return reinterpret_cast<std::uintptr_t>(p) % a == 0; }

// The block must be one of libtailor's: tailor_usable_size agrees with
// malloc_usable_size, and malloc itself resolves to libtailor.so.
TEST(Api, MallocIsLibtailor) {
  Dl_info info{};
  ASSERT_NE(dladdr(reinterpret_cast<void*>(&malloc), &info), 0);
  EXPECT_NE(std::strstr(info.dli_fname, "libtailor"), nullptr) << info.dli_fname;
  void* p = malloc(100);
  EXPECT_EQ(malloc_usable_size(p), tailor_usable_size(p));
  free(p);
}

TEST(Api, EveryEntryPoint) {
  for (std::size_t s = 0; s < (std::size_t{40} << 20); s = s < 64 ? s + 1 : s * 3 / 2) {
    void* ps[] = {malloc(s), calloc(1, s), realloc(nullptr, s), reallocarray(nullptr, 1, s), aligned_alloc(64, s),
                  memalign(256, s), valloc(s), pvalloc(s), __libc_malloc(s), __libc_calloc(s, 1),
                  __libc_memalign(32, s), __libc_valloc(s), __libc_pvalloc(s), __libc_realloc(nullptr, s)};
    std::size_t align[] = {16, 16, 16, 16, 64, 256, 4096, 4096, 16, 16, 32, 4096, 4096, 16};
    for (std::size_t i = 0; i < sizeof ps / sizeof ps[0]; ++i) {
      ASSERT_NE(ps[i], nullptr) << i << " " << s;
      EXPECT_TRUE(is_aligned(ps[i], s <= 8 && align[i] == 16 ? 8 : align[i])) << i << " " << s;
      EXPECT_GE(malloc_usable_size(ps[i]), s) << i;
      std::memset(ps[i], 0x5a, s);
    }
    void* pm = nullptr;
    ASSERT_EQ(posix_memalign(&pm, 128, s), 0);
    EXPECT_TRUE(is_aligned(pm, 128));
    free(pm);
    free(ps[0]);
    cfree(ps[1]);
    free_sized(ps[2], s);
    __libc_free(ps[3]);
    free_aligned_sized(ps[4], 64, s);
    for (std::size_t i = 5; i < sizeof ps / sizeof ps[0]; ++i) free(ps[i]);
  }
  EXPECT_EQ(malloc_usable_size(nullptr), 0u);
  EXPECT_GE(malloc_usable_size(pvalloc(0)), 4096u);  // glibc: one page
}

TEST(Api, GlibcErrnoConventions) {
  // volatile: keep the compiler from folding the impossible sizes at build time.
  volatile std::size_t huge = SIZE_MAX, quarter = SIZE_MAX / 4, half = SIZE_MAX / 2;
  errno = 0;
  EXPECT_EQ(malloc(huge), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  EXPECT_EQ(calloc(quarter, 8), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  errno = 0;
  void* p = malloc(10);
  void* (*volatile reallocarray_fn)(void*, size_t, size_t) = &reallocarray;  // opaque to -Wuse-after-free
  void* r = reallocarray_fn(p, half, 4);
  EXPECT_EQ(r, nullptr);
  EXPECT_EQ(errno, ENOMEM);
  free(p);  // a failed reallocarray leaves the block alone
  errno = 0;
  EXPECT_EQ(aligned_alloc(3, 10), nullptr);
  EXPECT_EQ(errno, EINVAL);
  void* q = reinterpret_cast<void*>(1);
  errno = 0;
  EXPECT_EQ(posix_memalign(&q, 12, 10), EINVAL);
  EXPECT_EQ(posix_memalign(&q, 2, 10), EINVAL);  // not a multiple of sizeof(void*)
  EXPECT_EQ(q, reinterpret_cast<void*>(1));
  EXPECT_EQ(errno, 0);
  // memalign rounds a non-power-of-two alignment up, as glibc does.
  void* m = memalign(48, 100);
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(is_aligned(m, 64));
  free(m);
  errno = 0;
  volatile std::size_t almost = SIZE_MAX - 10;
  EXPECT_EQ(pvalloc(almost), nullptr);
  EXPECT_EQ(errno, ENOMEM);
  // free never changes errno, whatever it releases.
  void* blocks[] = {malloc(10), malloc(100000), malloc(std::size_t{64} << 20)};
  for (void* b : blocks) {
    errno = 4242;
    free(b);
    EXPECT_EQ(errno, 4242);
  }
  errno = 0;
  // realloc(p, 0) frees and returns NULL (glibc); realloc(NULL, n) is malloc.
  EXPECT_EQ(realloc(malloc(5), 0), nullptr);
}

TEST(Api, ReallocKeepsContentsAcrossRanges) {
  auto* p = static_cast<unsigned char*>(malloc(1));
  p[0] = 42;
  std::size_t n = 1;
  for (std::size_t s = 2; s < (std::size_t{80} << 20); s = s * 2 + 3) {
    p = static_cast<unsigned char*>(realloc(p, s));
    ASSERT_NE(p, nullptr);
    ASSERT_EQ(p[0], 42);
    ASSERT_EQ(p[n - 1], n == 1 ? 42 : static_cast<unsigned char>(n));
    std::memset(p + 1, static_cast<int>(s & 0xff), s - 1);
    n = s;
  }
  free(p);
}

TEST(Api, OperatorNewAndDelete) {
  for (std::size_t s : {std::size_t{0}, std::size_t{1}, std::size_t{24}, std::size_t{1000}, std::size_t{1} << 20,
                        std::size_t{40} << 20}) {
    void* a = ::operator new(s);
    ::operator delete(a);
    void* b = ::operator new[](s);
    ::operator delete[](b, s);
    void* c = ::operator new(s, std::nothrow);
    ::operator delete(c, std::nothrow);
    void* d = ::operator new[](s, std::nothrow);
    ::operator delete[](d, std::nothrow);
    for (std::size_t al : {std::size_t{32}, std::size_t{4096}, std::size_t{1} << 21}) {
      auto av = static_cast<std::align_val_t>(al);
      void* e = ::operator new(s, av);
      EXPECT_TRUE(is_aligned(e, al));
      ::operator delete(e, s, av);
      void* f = ::operator new[](s, av);
      EXPECT_TRUE(is_aligned(f, al));
      ::operator delete[](f, av);
      void* g = ::operator new(s, av, std::nothrow);
      EXPECT_TRUE(is_aligned(g, al));
      ::operator delete(g, av, std::nothrow);
      void* h = ::operator new[](s, av, std::nothrow);
      ::operator delete[](h, s, av);
    }
  }
  volatile std::size_t huge = SIZE_MAX / 2;
  EXPECT_THROW(static_cast<void>(::operator new(huge)), std::bad_alloc);
  EXPECT_EQ(::operator new(huge, std::nothrow), nullptr);
  struct alignas(256) Wide { char c[300]; };
  auto* w = new Wide[3];
  EXPECT_TRUE(is_aligned(w, 256));
  delete[] w;
}

// The new-handler loop: the handler runs once per failed attempt, the
// retry asks for the same size even when the handler itself allocates
// (operator new's slow path keeps the size aside), and without a handler
// new throws and nothrow new returns nullptr.
int g_handler_calls = 0;
void handler_that_allocates() {
  ++g_handler_calls;
  char* volatile mine = new char[2000];  // an allocation of its own (above 1 KiB: through the slow path)
  delete[] mine;
  if (g_handler_calls % 2 == 0) std::set_new_handler(nullptr);  // gives up at its second call
}

TEST(Api, NewHandlerRunsAndRetriesWithTheSameSize) {
  volatile std::size_t huge = SIZE_MAX / 2;
  g_handler_calls = 0;
  std::set_new_handler(&handler_that_allocates);
  EXPECT_THROW(static_cast<void>(::operator new(huge)), std::bad_alloc);
  EXPECT_EQ(g_handler_calls, 2);
  std::set_new_handler(&handler_that_allocates);
  EXPECT_EQ(::operator new[](huge, std::nothrow), nullptr);
  EXPECT_EQ(g_handler_calls, 4);
  EXPECT_EQ(std::get_new_handler(), nullptr);
}

// Many objects of one `new` expression, freed by sized delete (the path of
// C++ programs: with TAILOR_POOLS=1, alloc.pools.api, they are pooled past
// the site's window, and a pooled block's size is checked against its
// slot); a wrong size is reported in one line, pooled or not (not under a
// DMM, alloc.dmm.*.api).
struct Node40 {
  char bytes[40];
};
__attribute__((noinline)) Node40* new_node() {
  auto* n = new Node40;
  __asm__ volatile("" : : "r"(n) : "memory");
  return n;
}

TEST(Api, SizedDeleteOfManyObjectsOfOneSite) {
  std::vector<Node40*> v;
  for (int i = 0; i < 1000; ++i) v.push_back(new_node());
  const char* pools = std::getenv("TAILOR_POOLS");
  if (pools != nullptr && pools[0] == '2') {
    EXPECT_EQ(tailor_pool_slot_size(v[0]), 0u);  // watched: the heap's
    EXPECT_EQ(tailor_pool_slot_size(v.back()), 48u);
  }
  if (std::getenv("TAILOR_DMM") == nullptr) {  // a DMM serving malloc checks no sizes
    EXPECT_DEATH(::operator delete(v.back(), 100), "operator delete\\(\\): wrong size for 0x[0-9a-f]+ \\(100 bytes given");
  }
  for (Node40* n : v) delete n;
}

// Threads allocate and free continuously while the main thread forks; the
// child allocates from every range, frees what the parent's threads had, and
// starts threads of its own.
TEST(Api, ForkFromMultithreadedParent) {
  std::atomic<bool> stop{false};
  std::vector<std::thread> ts;
  std::vector<void*> shared(64, nullptr);
  for (int t = 0; t < 3; ++t)
    ts.emplace_back([&stop, t] {
      std::vector<void*> v;
      std::uint64_t i = static_cast<std::uint64_t>(t);
      while (!stop.load(std::memory_order_relaxed)) {
        v.push_back(malloc(16 + (i++ * 7919) % 5000));
        if (v.size() > 1000) {
          for (void* p : v) free(p);
          v.clear();
        }
      }
      for (void* p : v) free(p);
    });
  for (auto& s : shared) s = malloc(100);
  for (int round = 0; round < 8; ++round) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int ok = 1;
      std::vector<void*> v;
      for (std::size_t s = 1; s < (std::size_t{32} << 20); s = s * 2 + 1) {
        void* p = malloc(s);
        if (p == nullptr) ok = 0;
        else std::memset(p, 1, s);
        v.push_back(p);
      }
      for (void* p : v) free(p);
      std::thread child_thread([&ok] {
        for (int i = 0; i < 10000; ++i) {
          void* p = malloc(static_cast<std::size_t>(i % 700));
          if (p == nullptr) ok = 0;
          free(p);
        }
      });
      child_thread.join();
      _exit(ok ? 0 : 3);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << "child died, status " << status;
    EXPECT_EQ(WEXITSTATUS(status), 0);
  }
  stop = true;
  for (auto& t : ts) t.join();
  for (void* s : shared) free(s);
}

TEST(Api, CrossThreadFreesThroughMalloc) {
  std::vector<void*> blocks(100000);
  tailor_dmm_stats before;
  tailor_dmm_get_stats(&before);
  tailor_secure_stats secure_before;
  tailor_secure_get_stats(&secure_before);
  std::thread a([&] {
    for (std::size_t i = 0; i < blocks.size(); ++i) blocks[i] = malloc(i % 300 + 1);
  });
  a.join();  // the allocating thread is gone: its heap is abandoned
  std::thread b([&] {
    for (void* p : blocks) free(p);
  });
  b.join();
  std::thread c([&] {  // adopts a heap and gets its memory back
    for (std::size_t i = 0; i < blocks.size(); ++i) blocks[i] = malloc(i % 300 + 1);
    for (void* p : blocks) free(p);
  });
  c.join();
  tailor_dmm_stats d;
  tailor_dmm_get_stats(&d);
  if (d.active) {  // one DMM serves every thread (TAILOR_DMM): every block came back to it, the
                   // threads' fronts (docs/deploy.md) gave theirs back when the threads ended
    EXPECT_GE(d.allocations - before.allocations + d.front_hits - before.front_hits, 2 * blocks.size()) << d.name;
    EXPECT_GE(d.releases - before.releases, 2 * blocks.size()) << d.name;
    return;
  }
  tailor_secure_stats sec;
  tailor_secure_get_stats(&sec);
  if (sec.active) {  // secure mode on the heaps: the exited threads' quarantines were emptied
    EXPECT_EQ(sec.quarantined, secure_before.quarantined);
  }
  tailor_stats s;
  tailor_get_stats(&s);
  EXPECT_GE(s.heaps_adopted, 1u);
}

}  // namespace
