// SPDX-License-Identifier: MIT
// TAILOR_ASSERT: invariants written as code, checked in debug builds.
//
// The allocator's and the DMMs' invariants (a free list stays in its page,
// counts add up, a segment carries the tag of the heap that owns it) used to
// live in comments; a bug that breaks one shows up much later as a corrupt
// block somewhere else. TAILOR_ASSERT checks them where they must hold, in
// builds configured with -DTAILOR_DEBUG=ON (the sanitizer builds of `make
// test-sanitize` and `make test-tsan`), and compiles to nothing otherwise:
// the expression is not evaluated, so release code and its instruction
// counts are the same as without the line.
//
// It runs inside malloc, so a failure allocates nothing: the message is
// built in a stack buffer (dmm::Text), written to stderr with write(2), and
// the process aborts (a core dump or a debugger shows the rest).
// TAILOR_DEBUG_ONLY(x) keeps a statement, such as a walk that an assertion
// needs, out of release builds.
#pragma once

#if defined(TAILOR_DEBUG) && TAILOR_DEBUG

#include <cstdlib>
#include <unistd.h>

#include "dmm/text.h"

namespace tailor::dmm::detail {

[[noreturn, gnu::cold, gnu::noinline]] inline void assert_failed(const char* expr, const char* file, int line,
                                                                   const char* function) noexcept {
  char buf[512];
  Text text(buf, sizeof buf);
  text.append("tailor: assertion failed: ").append(expr).append(" (").append(file).append(':');
  text.append_int(line).append(", in ").append(function).append(")\n");
  for (const char* p = text.c_str(); *p != '\0';) {
    const ssize_t n = ::write(2, p, std::strlen(p));
    if (n <= 0) break;
    p += n;
  }
  std::abort();
}

}  // namespace tailor::dmm::detail

#define TAILOR_ASSERT(expr)                                                                           \
  (__builtin_expect(static_cast<bool>(expr), 1)                                                       \
       ? static_cast<void>(0)                                                                         \
       : ::tailor::dmm::detail::assert_failed(#expr, __FILE__, __LINE__, __func__))
#define TAILOR_DEBUG_ONLY(...) __VA_ARGS__

#else

// Not evaluated; sizeof keeps the names it uses referenced (no unused warnings).
#define TAILOR_ASSERT(expr) static_cast<void>(sizeof(static_cast<bool>(expr)))
#define TAILOR_DEBUG_ONLY(...)

#endif
