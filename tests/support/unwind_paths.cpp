// SPDX-License-Identifier: MIT
// Call paths that a DWARF unwinder must tell apart, for `tailor record
// --stacks` with each unwinder (tests/record/stats_exact_test.cpp, Stacks.*).
// Built without frame pointers (the walk follows the call-frame rules), and
// every block is leaked, so that `tailor stats --leaks` shows each path's
// stack and block count:
//   - leaf() called from via_a() 3 times and from via_b() 5 times,
//     alternately: two frames of equal size, so that leaf's frame lies at
//     the same address either way and only the return address above it
//     tells the callers apart (a walk that reuses the last one must check);
//   - recursion to depths 1..6 and back, in an order that goes up and down;
//   - a function with a frame of variable size (alloca: its frame is found
//     through rbp);
//   - allocations in a signal handler on the thread's stack and on an
//     alternate signal stack (signal frames);
//   - the library TEST_PLUGIN (argv[1]) loaded, called, unloaded and loaded
//     again (the unwinder must forget the first load's rules);
//   - two threads.
// Sizes tell the paths apart (see each function). Exits 0; 2 on bad use.
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

#include "keep.h"

namespace {

using tailor::test::keep;

__attribute__((noinline)) void leaf() { keep(std::malloc(5001)); }
// Not tail calls (the keep after), so each keeps a frame of its own; noipa:
// not merged into one function although their code is the same.
__attribute__((noipa)) void via_a() {
  leaf();
  keep(nullptr);
}
__attribute__((noipa)) void via_b() {
  leaf();
  keep(nullptr);
}

__attribute__((noinline)) long climb(long n) {
  if (n <= 1) {
    keep(std::malloc(5003));
    return 1;
  }
  const long below = climb(n - 1);
  keep(&n);
  return below + 1;
}

__attribute__((noinline)) void with_vla(int n) {
  auto* buffer = static_cast<char*>(__builtin_alloca(static_cast<std::size_t>(n)));  // a variable frame: the CFA is found from rbp
  buffer[0] = 1;
  keep(buffer);
  keep(std::malloc(5009));
}

void on_signal(int) { keep(std::malloc(5011)); }
void on_alternate_stack(int) { keep(std::malloc(5021)); }

__attribute__((noinline)) void* thread_work(void*) {
  for (int i = 0; i < 4; ++i) via_a();
  return keep(std::malloc(5023));
}

__attribute__((noinline)) bool plugin_round(const char* library, std::size_t n) {
  void* lib = dlopen(library, RTLD_NOW);
  if (!lib) return false;
  auto allocate = reinterpret_cast<void* (*)(std::size_t)>(dlsym(lib, "plugin_allocate"));
  if (!allocate) return false;
  keep(allocate(n));
  dlclose(lib);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: unwind_paths TEST_PLUGIN\n");
    return 2;
  }
  for (int i = 0; i < 8; ++i) i % 2 == 0 && i < 6 ? via_a() : via_b();
  for (long depth : {1, 3, 6, 2, 5, 4}) climb(depth);
  for (int n : {16, 4000, 100}) with_vla(n);

  signal(SIGUSR1, on_signal);
  raise(SIGUSR1);
  static char alternate[64 * 1024];
  stack_t ss{};
  ss.ss_sp = alternate;
  ss.ss_size = sizeof alternate;
  struct sigaction sa {};
  sa.sa_handler = on_alternate_stack;
  sa.sa_flags = SA_ONSTACK;
  if (sigaltstack(&ss, nullptr) != 0 || sigaction(SIGUSR2, &sa, nullptr) != 0) return 1;
  raise(SIGUSR2);

  if (!plugin_round(argv[1], 5039) || !plugin_round(argv[1], 5051)) return 1;

  pthread_t t;
  if (pthread_create(&t, nullptr, thread_work, nullptr) != 0) return 1;
  pthread_join(t, nullptr);
  return 0;
}
