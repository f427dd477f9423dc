/* SPDX-License-Identifier: MIT
 * tailor-run: runs one command and reports how it ran, for `tailor tune`'s
 * real runs.
 *
 *   tailor-run FD [NAME=VALUE | -NAME]... -- CMD ARGS...
 *
 * Why a separate, small program: Linux carries a process's peak RSS
 * (ru_maxrss) across fork and exec, so a command forked by `tailor` itself,
 * which holds a trace in memory, would report at least tailor's own RSS. A
 * process forked by this helper starts its count at the helper's few pages.
 * The helper sets and removes the variables given (in the command's process
 * only), runs CMD with this process's standard streams, waits for it, and
 * writes one line to file descriptor FD:
 *
 *   <exit status or 128+signal> <1 if killed by a signal> <wall seconds> <peak RSS in KiB>
 *
 * Exit status: 0 when the line was written, 2 on bad usage, 3 if CMD could
 * not be started (errno in the line's status as 127 or 126). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: tailor-run FD [NAME=VALUE | -NAME]... -- CMD ARGS...\n");
    return 2;
  }
  char* end = NULL;
  const long fd = strtol(argv[1], &end, 10);
  int cmd = 2;
  while (cmd < argc && strcmp(argv[cmd], "--") != 0) ++cmd;
  if (*end != '\0' || fd < 0 || cmd + 1 >= argc) {
    fprintf(stderr, "tailor-run: bad arguments (usage: tailor-run FD [NAME=VALUE | -NAME]... -- CMD ARGS...)\n");
    return 2;
  }
  const double t0 = now();
  const pid_t child = fork();
  if (child < 0) {
    fprintf(stderr, "tailor-run: fork failed: %s\n", strerror(errno));
    return 3;
  }
  if (child == 0) {
    close((int)fd);
    for (int i = 2; i < cmd; ++i) {
      if (argv[i][0] == '-') {
        unsetenv(argv[i] + 1);
      } else {
        char* eq = strchr(argv[i], '=');
        if (eq == NULL) continue;
        *eq = '\0';
        setenv(argv[i], eq + 1, 1);
      }
    }
    execvp(argv[cmd + 1], argv + cmd + 1);
    _exit(errno == ENOENT ? 127 : 126);
  }
  int status = 0;
  struct rusage ru;
  memset(&ru, 0, sizeof ru);
  while (wait4(child, &status, 0, &ru) < 0 && errno == EINTR) {
  }
  const double seconds = now() - t0;
  const int signaled = WIFSIGNALED(status);
  const int code = signaled ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
  char line[128];
  const int n = snprintf(line, sizeof line, "%d %d %.6f %ld\n", code, signaled, seconds, ru.ru_maxrss);
  if (write((int)fd, line, (size_t)n) != n) return 3;
  return 0;
}
