/* SPDX-License-Identifier: MIT */
/* libtailor's public API: the extended allocation functions (always
 * available, whether or not libtailor also replaces malloc), heap
 * statistics, and the active configuration. Plain C, usable from C++.
 * See docs/allocator.md for the design and the TAILOR_* parameters. */
#ifndef TAILOR_TAILOR_H
#define TAILOR_TAILOR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TAILOR_API __attribute__((visibility("default")))

/* The allocator itself; same contracts as malloc, free, calloc, realloc,
 * aligned_alloc and malloc_usable_size. tailor_free accepts any pointer
 * returned by any of these, from any thread. */
TAILOR_API void* tailor_malloc(size_t size);
TAILOR_API void tailor_free(void* p);
TAILOR_API void* tailor_calloc(size_t count, size_t size);
TAILOR_API void* tailor_realloc(void* p, size_t size);
TAILOR_API void* tailor_aligned_alloc(size_t alignment, size_t size);
TAILOR_API size_t tailor_usable_size(const void* p);

/* Returns what the calling thread's heap holds back to the OS now: hands
 * pending cross-thread frees back, frees empty pages, purges every free span
 * regardless of TAILOR_PURGE_DELAY and unmaps empty segments. */
TAILOR_API void tailor_collect(void);

/* Process-wide counters (all threads) plus the calling thread's heap. */
typedef struct tailor_stats {
  uint64_t segments_mapped;     /* segments currently mapped (normal + huge) */
  uint64_t bytes_mapped;        /* address space currently reserved from the OS */
  uint64_t huge_blocks;         /* live blocks mapped directly */
  uint64_t bytes_purged;        /* total bytes given back with madvise so far */
  uint64_t heaps_created;       /* thread heaps ever created */
  uint64_t heaps_adopted;       /* heaps of exited threads taken over by new threads */
  uint64_t heaps_abandoned;     /* heaps currently waiting for a new thread */
  uint64_t thread_used_bytes;   /* calling thread: bytes in live blocks (block sizes) */
  uint64_t thread_free_bytes;   /* calling thread: bytes of free spans in its segments */
  uint64_t thread_dirty_bytes;  /* calling thread: of which still resident (not purged) */
} tailor_stats;
TAILOR_API void tailor_get_stats(tailor_stats* out);

/* The active configuration, one entry per TAILOR_* parameter. */
typedef enum tailor_config_source {
  TAILOR_SOURCE_DEFAULT = 0,
  TAILOR_SOURCE_ENV = 1,
  TAILOR_SOURCE_FILE = 2
} tailor_config_source;
typedef struct tailor_config_entry {
  const char* name;         /* environment variable, e.g. "TAILOR_PAGE_SIZE" */
  int64_t value;            /* the value in use (bytes, milliseconds or a count) */
  const char* unit;         /* "bytes", "ms" or "count" */
  tailor_config_source source;
  const char* description;  /* one line */
} tailor_config_entry;
/* Number of parameters; fills out[0..min(n, count)-1]. */
TAILOR_API size_t tailor_config(tailor_config_entry* out, size_t n);
/* The config file that was read, or NULL if none. */
TAILOR_API const char* tailor_config_file(void);

#ifdef __cplusplus
}
#endif

#endif /* TAILOR_TAILOR_H */
