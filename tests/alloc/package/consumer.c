/* SPDX-License-Identifier: MIT */
/* Links libtailor the ordinary way (find_package or pkg-config) and checks
 * that plain malloc is libtailor's: after a malloc, the calling thread has a
 * libtailor heap and the block is in use in it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tailor/tailor.h>

int main(void) {
  char* p = malloc(100);
  if (p == NULL) return 1;
  strcpy(p, "hello");
  tailor_stats s;
  tailor_get_stats(&s);
  if (s.heaps_created < 1 || s.thread_used_bytes < 100 || tailor_usable_size(p) < 100) {
    fprintf(stderr, "consumer: malloc is not libtailor's\n");
    return 1;
  }
  free(p);
  printf("consumer: malloc is libtailor\n");
  return 0;
}
