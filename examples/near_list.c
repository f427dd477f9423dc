/* SPDX-License-Identifier: MIT */
/* A C program on the installed locality library: builds a linked list whose
 * nodes are allocated near their predecessor with tailor_malloc_near, checks
 * it, and releases the nodes with plain free(). That is right only because
 * linking tailor-locality (CMake tailor::locality, pkg-config tailor-locality)
 * makes libtailor the program's malloc, which it checks through tailor.h. */
#include <stdio.h>
#include <stdlib.h>
#include <tailor/locality.h>
#include <tailor/tailor.h>

struct node {
  struct node* next;
  long value;
};

int main(void) {
  enum { kNodes = 10000 };
  struct node* head = NULL;
  struct node* tail = NULL;
  for (long i = 0; i < kNodes; ++i) {
    struct node* n = tailor_malloc_near(sizeof *n, tail);
    if (n == NULL) {
      fprintf(stderr, "near_list: tailor_malloc_near failed at node %ld\n", i);
      return 1;
    }
    n->next = NULL;
    n->value = i;
    if (tail != NULL) tail->next = n; else head = n;
    tail = n;
  }
  long sum = 0, count = 0;
  for (struct node* n = head; n != NULL; n = n->next) sum += n->value, ++count;

  /* Plain malloc is libtailor's: the thread has a libtailor heap. */
  void* probe = malloc(16);
  tailor_stats s;
  tailor_get_stats(&s);
  free(probe);
  if (s.heaps_created < 1) {
    fprintf(stderr, "near_list: malloc is not libtailor's: hinted blocks must not go to free()\n");
    return 1;
  }
  /* The hinted blocks belong to libtailor: its usable size knows them. */
  if (tailor_usable_size(head) < sizeof *head) {
    fprintf(stderr, "near_list: libtailor does not know the hinted block %p\n", (void*)head);
    return 1;
  }
  while (head != NULL) {
    struct node* next = head->next;
    free(head);
    head = next;
  }
  printf("near_list: %ld nodes, sum %ld, freed with free() on libtailor\n", count, sum);
  return count == kNodes && sum == (long)kNodes * (kNodes - 1) / 2 ? 0 : 1;
}
