// SPDX-License-Identifier: MIT
// The calls that end a process image without running exit handlers (_exit,
// _Exit, abort, a failed assert) or replace it (exec*): each writes the
// pending events and the end record first, so the trace is complete. A normal
// exit is handled by the recorder's destructor instead. If an exec fails the
// process goes on, recording into a new file (see output_file.h).
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>

#include "record/real_functions.h"
#include "record/recorder.h"

using tailor::record::real;
namespace rec = tailor::record;
using tailor::trace::EndReason;

#define TAILOR_EXPORT __attribute__((visibility("default")))

namespace {

[[noreturn]] void exit_group(int status) {
  syscall(SYS_exit_group, status);
  __builtin_unreachable();
}

// Runs an exec function; resumes recording in a new file if it returns.
template <class F>
int exec_with(F&& call) {
  bool finished = rec::prepare_exec();
  int rc = call();
  int saved = errno;
  if (finished) rec::resume_after_exec();
  errno = saved;
  return rc;
}

// Collects execl-style variadic arguments (first already taken) into argv.
// Returns the number of arguments; argv must hold max + 1 entries.
std::size_t collect(const char* first, va_list ap, char** argv, std::size_t max) {
  std::size_t n = 0;
  for (const char* a = first; a && n < max; a = va_arg(ap, const char*)) argv[n++] = const_cast<char*>(a);
  argv[n] = nullptr;
  return n;
}

constexpr std::size_t kMaxListArgs = 4096;

}  // namespace

extern "C" {

TAILOR_EXPORT [[noreturn]] void _exit(int status) {
  rec::finish(EndReason::FastExit, status);
  if (real.exit_now) real.exit_now(status);
  exit_group(status);
}

TAILOR_EXPORT [[noreturn]] void _Exit(int status) {
  rec::finish(EndReason::FastExit, status);
  if (real.Exit_now) real.Exit_now(status);
  exit_group(status);
}

TAILOR_EXPORT [[noreturn]] void abort() {
  rec::finish(EndReason::Abort, SIGABRT);
  if (real.abort) real.abort();
  raise(SIGABRT);
  exit_group(128 + SIGABRT);
}

TAILOR_EXPORT [[noreturn]] void __assert_fail(const char* assertion, const char* file, unsigned line,
                                              const char* function) {
  rec::finish(EndReason::Abort, SIGABRT);
  if (real.assert_fail) real.assert_fail(assertion, file, line, function);
  abort();
}

TAILOR_EXPORT int execve(const char* path, char* const argv[], char* const envp[]) {
  return exec_with([&] { return real.execve(path, argv, envp); });
}

TAILOR_EXPORT int execv(const char* path, char* const argv[]) {
  return exec_with([&] { return real.execv(path, argv); });
}

TAILOR_EXPORT int execvp(const char* file, char* const argv[]) {
  return exec_with([&] { return real.execvp(file, argv); });
}

TAILOR_EXPORT int execvpe(const char* file, char* const argv[], char* const envp[]) {
  return exec_with([&] { return real.execvpe(file, argv, envp); });
}

TAILOR_EXPORT int fexecve(int fd, char* const argv[], char* const envp[]) {
  return exec_with([&] { return real.fexecve(fd, argv, envp); });
}

TAILOR_EXPORT int execl(const char* path, const char* arg, ...) {
  char* argv[kMaxListArgs + 1];
  va_list ap;
  va_start(ap, arg);
  collect(arg, ap, argv, kMaxListArgs);
  va_end(ap);
  return execv(path, argv);
}

TAILOR_EXPORT int execlp(const char* file, const char* arg, ...) {
  char* argv[kMaxListArgs + 1];
  va_list ap;
  va_start(ap, arg);
  collect(arg, ap, argv, kMaxListArgs);
  va_end(ap);
  return execvp(file, argv);
}

TAILOR_EXPORT int execle(const char* path, const char* arg, ...) {
  char* argv[kMaxListArgs + 1];
  va_list ap;
  va_start(ap, arg);
  std::size_t n = collect(arg, ap, argv, kMaxListArgs);
  // After the terminating NULL comes envp. If the list was cut at kMaxListArgs,
  // skip to its end first.
  if (n == kMaxListArgs)
    while (va_arg(ap, const char*)) {}
  char* const* envp = va_arg(ap, char* const*);
  va_end(ap);
  return execve(path, argv, envp);
}

}  // extern "C"
