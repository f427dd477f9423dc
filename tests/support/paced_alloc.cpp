// SPDX-License-Identifier: MIT
// A program that allocates at a known pace, for the recorder's test of
// event times (tests/record/record_test.cpp): one thread makes kBlocks
// mallocs of kFirstSize + i bytes, sleeping kPauseMs after each, then frees
// them. A single recorded thread reads the clock only every few events
// (src/record/recorder.h): the test checks that times still keep the
// thread's order and are at most that many events early.
#include <time.h>

#include <cstdlib>

namespace {

constexpr int kBlocks = 64;
constexpr std::size_t kFirstSize = 70001;
constexpr long kPauseMs = 2;

__attribute__((noinline)) void* keep(void* p) {
  asm volatile("" : : "r"(p) : "memory");
  return p;
}

}  // namespace

int main() {
  void* blocks[kBlocks];
  for (int i = 0; i < kBlocks; ++i) {
    blocks[i] = keep(std::malloc(kFirstSize + static_cast<std::size_t>(i)));
    timespec pause{0, kPauseMs * 1000000};
    while (nanosleep(&pause, &pause) != 0) {
    }
  }
  for (void* p : blocks) std::free(p);
  return 0;
}
