// SPDX-License-Identifier: MIT
// Runs a check in a forked child and waits for it with a time limit: the
// fork tests need to tell a child that failed from one that hung (a lock
// held across fork spins forever).
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

namespace tailor::test {

enum class ChildEnd { kPassed, kFailed, kHung, kNoFork };

/// Forks; the child runs `check` (returning true for success) and exits
/// with _exit, so no atexit handler or static destructor of the parent's
/// copy runs. A child still running after `limit` is killed and counts as
/// hung.
template <class Check>
ChildEnd run_in_child(Check&& check, std::chrono::seconds limit = std::chrono::seconds(5)) {
  const pid_t pid = fork();
  if (pid < 0) return ChildEnd::kNoFork;
  if (pid == 0) _exit(check() ? 0 : 1);
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return ChildEnd::kHung;
    }
    usleep(200);
  }
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? ChildEnd::kPassed : ChildEnd::kFailed;
}

}  // namespace tailor::test
