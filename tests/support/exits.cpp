// SPDX-License-Identifier: MIT
// Ends in the way its first argument names, for tests/record/record_test.cpp:
//   exits exit|_exit|return|abort|signal [ANY...]
// Before that it mallocs kBlocks blocks of kBlockSize bytes (never freed).
//   exit, _exit, return: exit status 3 by exit(3), _exit(3), return 3
//   abort:  abort()
//   signal: mallocs and frees kSignalPairs more blocks of kSignalSize (enough
//           events to fill the recorder's per-thread buffers many times over,
//           so that most of them are on disk whatever the buffer size and
//           flush timing), then dies of SIGTERM: the trace has no end record.
// Further arguments are ignored (tests use them to check the recorded command
// line). Prints nothing on stdout.
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

#include "keep.h"

namespace {

constexpr int kBlocks = 7;
constexpr std::size_t kBlockSize = 7001;
constexpr int kSignalPairs = 200000;
constexpr std::size_t kSignalSize = 7003;

using tailor::test::keep;

void* volatile blocks[kBlocks];

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: exits exit|_exit|return|abort|signal\n");
    return 2;
  }
  for (int i = 0; i < kBlocks; ++i) blocks[i] = keep(std::malloc(kBlockSize));
  const char* how = argv[1];
  if (std::strcmp(how, "exit") == 0) std::exit(3);
  if (std::strcmp(how, "_exit") == 0) _exit(3);
  if (std::strcmp(how, "return") == 0) return 3;
  if (std::strcmp(how, "abort") == 0) std::abort();
  if (std::strcmp(how, "signal") == 0) {
    for (int i = 0; i < kSignalPairs; ++i) std::free(keep(std::malloc(kSignalSize)));
    signal(SIGTERM, SIG_DFL);
    raise(SIGTERM);
    return 5;  // not reached
  }
  std::fprintf(stderr, "exits: unknown way to end: %s\n", how);
  return 2;
}
