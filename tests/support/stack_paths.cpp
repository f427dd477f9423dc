// SPDX-License-Identifier: MIT
// Allocations from known call paths, for `tailor record --stacks`
// (tests/record/stats_exact_test.cpp). Each mode leaks its blocks, so that
// `tailor stats --leaks` shows each path's stack. Built with frame pointers,
// so that both unwinders (libunwind's and the frame-pointer walk) apply.
//   stack_paths recurse N   recurse_down N levels deep, then one malloc(4093)
//   stack_paths threads     two threads: thread_a_work -> malloc(4099),
//                           thread_b_work -> malloc(4111)
//   stack_paths fork        fork; the child: child_work -> malloc(4127) and
//                           exit 0; the parent waits, then parent_work ->
//                           malloc(4133)
// Prints the child's pid in fork mode ("child PID"); exits 0, 2 on bad use.
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "keep.h"

namespace {

using tailor::test::keep;

// Not a tail call (the sum after it), so each level keeps its frame.
__attribute__((noinline)) long recurse_down(long n) {
  if (n <= 1) {
    keep(std::malloc(4093));
    return 1;
  }
  const long below = recurse_down(n - 1);
  keep(&n);
  return below + 1;
}

__attribute__((noinline)) void* thread_a_work(void*) { return keep(std::malloc(4099)); }
__attribute__((noinline)) void* thread_b_work(void*) { return keep(std::malloc(4111)); }
__attribute__((noinline)) void child_work() { keep(std::malloc(4127)); }
__attribute__((noinline)) void parent_work() { keep(std::malloc(4133)); }

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "recurse") == 0) return recurse_down(std::atol(argv[2])) > 0 ? 0 : 1;
  if (argc == 2 && std::strcmp(argv[1], "threads") == 0) {
    pthread_t a, b;
    if (pthread_create(&a, nullptr, thread_a_work, nullptr) != 0) return 1;
    if (pthread_create(&b, nullptr, thread_b_work, nullptr) != 0) return 1;
    pthread_join(a, nullptr);
    pthread_join(b, nullptr);
    return 0;
  }
  if (argc == 2 && std::strcmp(argv[1], "fork") == 0) {
    const pid_t child = fork();
    if (child < 0) return 1;
    if (child == 0) {
      child_work();
      std::exit(0);
    }
    std::printf("child %d\n", static_cast<int>(child));
    int status = 0;
    waitpid(child, &status, 0);
    parent_work();
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
  }
  return 2;
}
