/* SPDX-License-Identifier: MIT
 * A program that relies on malloc's 16-byte alignment: it stores into
 * 24-byte blocks with aligned SSE stores (movdqa), as code GCC vectorized
 * on that assumption does. Under libtailor's exact 8-byte classes
 * (exact_classes = 24) half its blocks are 8-aligned and it faults:
 * `tailor tune --objective memory` must refuse those classes (tune_test.sh,
 * case needs_alignment). Enough live blocks that the classes are proposed. */
#include <emmintrin.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  enum { kBlocks = 200000 };
  __m128i** blocks = malloc(kBlocks * sizeof *blocks);
  if (blocks == NULL) return 1;
  unsigned long sum = 0;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < kBlocks; ++i) {
      blocks[i] = malloc(24);
      if (blocks[i] == NULL) return 1;
      _mm_store_si128(blocks[i], _mm_set1_epi32(i + round));
    }
    for (int i = 0; i < kBlocks; ++i) sum += (unsigned)_mm_cvtsi128_si32(_mm_load_si128(blocks[i]));
    for (int i = 0; i < kBlocks; ++i) free(blocks[i]);
  }
  free(blocks);
  printf("needs_alignment: checksum %lu\n", sum);
  return 0;
}
