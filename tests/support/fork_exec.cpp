// SPDX-License-Identifier: MIT
// Process-tree events for tests/record/record_test.cpp.
//
// `fork_exec` (the root):
//   1. mallocs one kRootSize block; starts a helper thread that mallocs one
//      kHelperSize block and then waits, so that every fork below happens in
//      a multithreaded process;
//   2. forks child A: mallocs and frees kChildBlocks blocks of kChildSize, then
//      exit(kChildStatus);
//   3. forks child B: mallocs kBeforeExecBlocks blocks of kBeforeExecSize, then
//      execs this program as `fork_exec image 3`;
//   4. forks child C: execs /bin/true;
//   5. waits for the three (exits 1 unless A exited kChildStatus and B and C
//      exited 0), stops and joins the helper thread, frees its block, writes
//      "children A B C\n" (their pids) to stdout, and finally execs this
//      program as `fork_exec image 2`.
// `fork_exec image N`: mallocs and frees N blocks of kImageSize and returns 0.
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "keep.h"

namespace {

constexpr std::size_t kRootSize = 1111;
constexpr std::size_t kHelperSize = 7777;
constexpr std::size_t kChildSize = 5555;
constexpr int kChildBlocks = 5;
constexpr int kChildStatus = 7;
constexpr std::size_t kBeforeExecSize = 5557;
constexpr int kBeforeExecBlocks = 2;
constexpr std::size_t kImageSize = 3333;

using tailor::test::keep;

pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
bool helper_ready = false;
bool helper_stop = false;

void* helper(void*) {
  void* p = keep(std::malloc(kHelperSize));
  pthread_mutex_lock(&mu);
  helper_ready = true;
  pthread_cond_broadcast(&cv);
  while (!helper_stop) pthread_cond_wait(&cv, &mu);
  pthread_mutex_unlock(&mu);
  std::free(p);
  return nullptr;
}

int image(int blocks) {
  for (int i = 0; i < blocks; ++i) std::free(keep(std::malloc(kImageSize)));
  return 0;
}

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fork_exec: %s: %s\n", what, std::strerror(errno));
  std::_Exit(1);
}

int exit_status(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) fail("waitpid");
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "image") == 0) return image(std::atoi(argv[2]));
  if (argc != 1) {
    std::fprintf(stderr, "usage: fork_exec [image N]\n");
    return 2;
  }

  void* root_block = keep(std::malloc(kRootSize));
  pthread_t thread;
  if (pthread_create(&thread, nullptr, helper, nullptr) != 0) fail("pthread_create");
  pthread_mutex_lock(&mu);
  while (!helper_ready) pthread_cond_wait(&cv, &mu);
  pthread_mutex_unlock(&mu);

  pid_t a = fork();
  if (a < 0) fail("fork");
  if (a == 0) {
    void* blocks[kChildBlocks];
    for (auto& b : blocks) b = keep(std::malloc(kChildSize));
    for (auto* b : blocks) std::free(b);
    std::exit(kChildStatus);
  }

  pid_t b = fork();
  if (b < 0) fail("fork");
  if (b == 0) {
    for (int i = 0; i < kBeforeExecBlocks; ++i) std::free(keep(std::malloc(kBeforeExecSize)));
    char arg0[] = "fork_exec", arg1[] = "image", arg2[] = "3";
    char* args[] = {arg0, arg1, arg2, nullptr};
    execv("/proc/self/exe", args);
    fail("execv");
  }

  pid_t c = fork();
  if (c < 0) fail("fork");
  if (c == 0) {
    execl("/bin/true", "true", static_cast<char*>(nullptr));
    fail("execl /bin/true");
  }

  bool ok = exit_status(a) == kChildStatus;
  ok = exit_status(b) == 0 && ok;
  ok = exit_status(c) == 0 && ok;

  pthread_mutex_lock(&mu);
  helper_stop = true;
  pthread_cond_broadcast(&cv);
  pthread_mutex_unlock(&mu);
  pthread_join(thread, nullptr);
  std::free(root_block);
  if (!ok) {
    std::fprintf(stderr, "fork_exec: a child did not exit as expected\n");
    return 1;
  }

  char line[128];
  int n = std::snprintf(line, sizeof line, "children %d %d %d\n", static_cast<int>(a), static_cast<int>(b),
                        static_cast<int>(c));
  if (write(STDOUT_FILENO, line, static_cast<std::size_t>(n)) != n) fail("write");

  char arg0[] = "fork_exec", arg1[] = "image", arg2[] = "2";
  char* args[] = {arg0, arg1, arg2, nullptr};
  execv("/proc/self/exe", args);
  fail("execv");
}
