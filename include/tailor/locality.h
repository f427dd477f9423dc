/* SPDX-License-Identifier: MIT */
/* Locality by hints (the Defero paper, Defero), the C entry points: allocate near a
 * hint address from the process-wide locality heap (Match predicate, default
 * K). When libtailor is the process's malloc (linked or LD_PRELOADed), the
 * heap lives in libtailor's memory and free, realloc and malloc_usable_size
 * accept its blocks. Otherwise (glibc, another malloc) release them with
 * tailor_free_near, never with free. tailor_free_near works in both cases.
 * C++ code gets the whole layer (heap, predicates, allocator, memory
 * resource) from this header too. */
#ifndef TAILOR_LOCALITY_H
#define TAILOR_LOCALITY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* size bytes, 16-aligned, in the K-class of hint if it has a free chunk of
 * that size, else in the nearest one; hint may be NULL or any address. NULL
 * if memory is exhausted. */
void* tailor_malloc_near(size_t size, const void* hint);
/* Releases memory from tailor_malloc_near, from any thread; NULL is ignored. */
void tailor_free_near(void* p);
/* The usable bytes of a block from tailor_malloc_near. */
size_t tailor_near_usable_size(const void* p);

#ifdef __cplusplus
}
#include "allocator.h"
#include "locality/default_heap.h"
#include "locality/memory_resource.h"
#endif

#endif
