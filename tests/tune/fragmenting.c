/* SPDX-License-Identifier: MIT
 * A program whose peak memory depends on the allocator's size classes:
 * 40000 live blocks of 1100 bytes, all written, then freed. With 4 classes
 * per doubling they take 1280 bytes each, with 8 classes 1152, and a DMM
 * with exact classes 1100: `tailor tune --objective memory` must find a
 * configuration with less peak RSS than default libtailor's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kBlocks = 40000, kSize = 1100 };

int main(void) {
  static char* blocks[kBlocks];
  unsigned long sum = 0;
  for (int round = 0; round < 10; ++round) {
    for (int i = 0; i < kBlocks; ++i) {
      blocks[i] = malloc(kSize);
      if (blocks[i] == NULL) return 1;
      memset(blocks[i], (char)(i + round), kSize);
    }
    for (int i = 0; i < kBlocks; ++i) {
      sum += (unsigned char)blocks[i][i % kSize];
      free(blocks[i]);
    }
  }
  printf("fragmenting: checksum %lu\n", sum);
  return 0;
}
