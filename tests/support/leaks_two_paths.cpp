// SPDX-License-Identifier: MIT
// A program that leaks a known number of blocks from two call paths, for
// tests/record/stats_exact_test.cpp (`tailor stats --leaks`). Usage:
// leaks_two_paths A B. Path a leaks A blocks of kSizeA bytes, path b leaks B
// blocks of kSizeB bytes, each from its own malloc call (so each path is one
// call site); between them the program allocates and frees other blocks
// from a third site, which must not show as a leak. Prints nothing; exits 0,
// or 2 on bad arguments.
#include <cstdlib>

#include "keep.h"

namespace {

constexpr std::size_t kSizeA = 1031;
constexpr std::size_t kSizeB = 2063;

using tailor::test::keep;

__attribute__((noinline)) void leak_path_a() { keep(std::malloc(kSizeA)); }
__attribute__((noinline)) void leak_path_b() { keep(std::malloc(kSizeB)); }
__attribute__((noinline)) void churn() { std::free(keep(std::malloc(3079))); }

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  const long a = std::atol(argv[1]), b = std::atol(argv[2]);
  if (a < 0 || b < 0) return 2;
  for (long i = 0; i < a || i < b; ++i) {
    if (i < a) leak_path_a();
    churn();
    if (i < b) leak_path_b();
  }
  return 0;
}
