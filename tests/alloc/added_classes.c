/* SPDX-License-Identifier: MIT
 * Classes added by the configuration (docs/allocator.md, "Size classes"),
 * run under LD_PRELOAD=libtailor.so with TAILOR_EXACT_CLASSES=24,40 and
 * TAILOR_CLASSES=144,208 by ctest (alloc.classes.added): requests get the
 * smallest class that holds them, added or default; blocks of an exact
 * class follow each other at its size (8-byte aligned); an aligned request
 * of 16 never gets an 8-aligned block; realloc and calloc keep the rules.
 * Without the variables (alloc.classes.default) every block is 16-aligned.
 * Prints what failed and exits 1. */
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failed = 0;
#define CHECK(cond, ...)            \
  do {                              \
    if (!(cond)) {                  \
      printf("FAIL: " __VA_ARGS__); \
      printf("\n");                 \
      failed = 1;                   \
    }                               \
  } while (0)

int main(void) {
  const int exact = getenv("TAILOR_EXACT_CLASSES") != NULL;
  struct { size_t ask, usable_exact, usable_default; } cases[] = {
      {17, 24, 32}, {24, 24, 32}, {25, 32, 32}, {33, 40, 48}, {40, 40, 48},
      {130, 144, 160}, {150, 160, 160}, {200, 208, 224}, {209, 224, 224}, {5000, 5120, 5120}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
    void* p = malloc(cases[i].ask);
    const size_t want = exact ? cases[i].usable_exact : cases[i].usable_default;
    CHECK(malloc_usable_size(p) == want, "malloc(%zu): usable %zu, want %zu", cases[i].ask, malloc_usable_size(p), want);
    if (want % 16 == 0) CHECK((uintptr_t)p % 16 == 0, "malloc(%zu) = %p: not 16-aligned", cases[i].ask, p);
    free(p);
  }
  /* A run of 24-byte blocks: consecutive, 24 bytes apart when exact. */
  enum { kRun = 64 };
  char* run[kRun];
  size_t apart24 = 0, aligned16 = 0;
  for (int i = 0; i < kRun; ++i) {
    run[i] = malloc(24);
    memset(run[i], 0xab, 24);
    if (i > 0 && run[i] - run[i - 1] == 24) ++apart24;
    aligned16 += (uintptr_t)run[i] % 16 == 0;
  }
  if (exact)
    CHECK(apart24 >= kRun / 2, "24-byte blocks: only %zu of %d follow the previous one at 24 bytes", apart24, kRun);
  else
    CHECK(aligned16 == kRun, "24-byte blocks: %zu of %d 16-aligned without exact classes", aligned16, kRun);
  for (int i = 0; i < kRun; ++i) free(run[i]);
  /* Aligned requests of 16 never take an 8-aligned exact class. */
  for (int i = 0; i < kRun; ++i) {
    void* a = aligned_alloc(16, 24);
    void* m = memalign(16, 40);
    void* q = NULL;
    CHECK(posix_memalign(&q, 16, 17) == 0, "posix_memalign failed");
    CHECK((uintptr_t)a % 16 == 0 && (uintptr_t)m % 16 == 0 && (uintptr_t)q % 16 == 0, "an aligned request of 16: %p %p %p",
          a, m, q);
    free(a);
    free(m);
    free(q);
  }
  /* calloc zeroes an exact block; realloc moves across classes keeping the bytes. */
  unsigned char* z = calloc(3, 8);
  for (int i = 0; i < 24; ++i) CHECK(z[i] == 0, "calloc(3, 8)[%d] = %d", i, z[i]);
  memset(z, 7, 24);
  z = realloc(z, 40);
  for (int i = 0; i < 24; ++i) CHECK(z[i] == 7, "realloc kept byte %d: %d", i, z[i]);
  CHECK(malloc_usable_size(z) == (exact ? 40u : 48u), "realloc(40): usable %zu", malloc_usable_size(z));
  free(z);
  if (!failed) puts(exact ? "ok: added classes" : "ok: default classes");
  return failed;
}
