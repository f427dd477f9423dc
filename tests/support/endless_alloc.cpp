// SPDX-License-Identifier: MIT
// Allocates and frees in a loop until killed, for the SIGKILL recovery test in
// tests/record/record_test.cpp. After kReadyPairs malloc/free pairs (enough
// events to fill the recorder's per-thread buffers many times over, so whole
// chunks are already on disk) it writes "recording\n" to stdout, then goes on.
// As a safety net for a test that died before killing it, it stops by itself
// (exit 0) after kMaxSeconds.
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>

#include "keep.h"

namespace {

constexpr long kReadyPairs = 200000;
constexpr std::int64_t kMaxSeconds = 120;

using tailor::test::keep;

std::int64_t seconds() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec);
}

}  // namespace

int main() {
  const std::int64_t start = seconds();
  void* held[64] = {};
  for (long i = 0;; ++i) {
    std::size_t slot = static_cast<std::size_t>(i) % 64;
    std::free(held[slot]);
    held[slot] = keep(std::malloc(16 + static_cast<std::size_t>(i % 4093)));
    if (i + 1 == kReadyPairs) {
      static const char line[] = "recording\n";
      if (write(STDOUT_FILENO, line, sizeof line - 1) < 0) return 1;
    }
    if ((i & 0xffff) == 0 && seconds() - start > kMaxSeconds) return 0;
  }
}
