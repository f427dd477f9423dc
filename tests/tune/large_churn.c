/* SPDX-License-Identifier: MIT
 * 1 MiB blocks allocated, written page by page, and freed, again and again:
 * libtailor reuses the freed span while it is resident, so a configuration
 * that returns every freed span to the OS at once (purge_delay = 0) pays
 * 256 page faults per block. The tune tests' known-bad candidate. */
#include <stdio.h>
#include <stdlib.h>

enum { kRounds = 600, kSize = 1 << 20, kPage = 4096 };

int main(void) {
  unsigned long sum = 0;
  for (int r = 0; r < kRounds; ++r) {
    char* p = malloc(kSize);
    if (p == NULL) return 1;
    for (int off = 0; off < kSize; off += kPage) p[off] = (char)(r + off / kPage);
    sum += (unsigned char)p[(r % 256) * kPage];
    free(p);
  }
  printf("large_churn: checksum %lu\n", sum);
  return 0;
}
