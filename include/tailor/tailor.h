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

/* The structs that libtailor fills (tailor_stats, tailor_dmm_stats,
 * tailor_pools_stats, tailor_secure_stats, tailor_config_entry) only ever
 * grow at their end. The functions that fill them take the size the caller
 * was compiled with (the inline wrappers below pass sizeof), write at most
 * that many bytes and zero the fields they do not know: a program built
 * against this header keeps working with a later libtailor, and one built
 * against a later header with this one. */

/* The allocator itself; same contracts as malloc, free, calloc, realloc,
 * aligned_alloc and malloc_usable_size. tailor_free accepts any pointer
 * returned by any of these, from any thread. */
TAILOR_API void* tailor_malloc(size_t size);
TAILOR_API void tailor_free(void* p);
TAILOR_API void* tailor_calloc(size_t count, size_t size);
TAILOR_API void* tailor_realloc(void* p, size_t size);
TAILOR_API void* tailor_aligned_alloc(size_t alignment, size_t size);
TAILOR_API size_t tailor_usable_size(const void* p);

/* Regions: libtailor's memory lent to an allocator layered on it (the
 * locality heap of tailor/locality.h uses them; docs/allocator.md,
 * "Regions"). A region pool hands out aligned regions carved from segments
 * of its own; the owner carves its blocks out of them. When libtailor is the
 * process's malloc, free, realloc and malloc_usable_size (and tailor_free,
 * tailor_realloc, tailor_usable_size) of a pointer inside one of the pool's
 * regions call the pool's hooks: hooks.free(owner, p) must release the
 * block, hooks.usable_size(owner, p) must return its usable bytes from p.
 * A pointer is recognized if it lies within the first
 * tailor_region_max_align() bytes of its region (anywhere, for regions of at
 * most that size). The hooks may run on any thread; the pool itself is
 * thread-safe. */
typedef struct tailor_region_pool tailor_region_pool;
typedef struct tailor_region_hooks {
  void (*free)(void* owner, void* p);
  size_t (*usable_size)(void* owner, const void* p);
  void* owner;
} tailor_region_hooks;
/* A new pool, or NULL if the OS refuses memory or a hook is NULL. */
TAILOR_API tailor_region_pool* tailor_region_pool_create(const tailor_region_hooks* hooks);
/* Unmaps all of the pool's memory, including regions not given back. */
TAILOR_API void tailor_region_pool_destroy(tailor_region_pool* pool);
/* bytes (rounded up to tailor_region_page_size()) at a multiple of align (a
 * power of two, at most tailor_region_max_align()); NULL if out of memory or
 * out of range. Contents unspecified. */
TAILOR_API void* tailor_region_obtain(tailor_region_pool* pool, size_t bytes, size_t align);
/* Returns a region, with the bytes it was obtained with. */
TAILOR_API void tailor_region_give_back(tailor_region_pool* pool, void* p, size_t bytes);
TAILOR_API size_t tailor_region_page_size(void);
TAILOR_API size_t tailor_region_max_align(void);

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
TAILOR_API void tailor_get_stats_sized(tailor_stats* out, size_t size);
static inline void tailor_get_stats(tailor_stats* out) { tailor_get_stats_sized(out, sizeof *out); }

/* The DMM that serves this process's malloc when TAILOR_DMM names one
 * (docs/deploy.md). "held" counts what the DMM's memory obtained from the
 * system minus what it returned, byte for byte, as the simulator counts it;
 * "os" counts the resident bytes the simulator also counts: the pages those
 * ranges touch plus the live state of the DMM's mechanisms (list heads,
 * class tables, records of released ranges), taken after every operation
 * that changed the bytes held. High-water marks start at the values when
 * the DMM was set up, or at those of the last tailor_dmm_reset_peak(). */
typedef struct tailor_dmm_stats {
  int active;                /* 1 if a DMM serves malloc, 0 otherwise (then all else is 0) */
  const char* name;          /* the DMM's name: a built-in's, or the spec's "name" */
  uint64_t held_bytes;       /* bytes held from the system now, as simulated */
  uint64_t held_high_water;  /* their high-water mark */
  uint64_t os_bytes;         /* resident: pages of the held ranges + metadata, now */
  uint64_t os_high_water;    /* their high-water mark */
  uint64_t metadata_bytes;   /* the DMM's own state now (list heads, class tables, released ranges) */
  uint64_t allocations;      /* blocks served by the DMM */
  uint64_t releases;         /* blocks it took back */
  uint64_t outside;          /* requests it could not model, served by default libtailor */
  uint64_t front_limit;      /* blocks per bin of the threads' fronts (TAILOR_DMM_FRONT; 0: none) */
  uint64_t front_hits;       /* requests the fronts served without the DMM */
  uint64_t front_kept;       /* frees the fronts kept for reuse */
  uint64_t front_blocks;     /* blocks in the fronts now (held by the DMM, free for the program) */
} tailor_dmm_stats;
TAILOR_API void tailor_dmm_get_stats_sized(tailor_dmm_stats* out, size_t size);
static inline void tailor_dmm_get_stats(tailor_dmm_stats* out) { tailor_dmm_get_stats_sized(out, sizeof *out); }

/* Call-site pools (TAILOR_POOLS=1 or TAILOR_POOLS_FILE, docs/pools.md). */
typedef struct tailor_pools_stats {
  int mode;                  /* 0 off, 1 online monitor, 2 offline profile */
  size_t sites;              /* call sites seen */
  size_t sites_pooled;       /* sites routed to pools */
  size_t sites_unpooled;     /* sites the monitor (or the profile) left to the heap */
  size_t areas;              /* pool areas (pages of the thread heaps) held now, all threads */
  size_t area_bytes;         /* their bytes */
  size_t largest_area;       /* bytes of the largest area made so far */
  size_t areas_released;     /* areas given back because all their slots were free */
  size_t sites_demoted;      /* of sites_unpooled, those pooled first and left to the heap later as temporaries */
} tailor_pools_stats;
TAILOR_API void tailor_pools_get_stats_sized(tailor_pools_stats* out, size_t size);
static inline void tailor_pools_get_stats(tailor_pools_stats* out) { tailor_pools_get_stats_sized(out, sizeof *out); }
/* The slot size of a pooled block, 0 for any other pointer (or NULL). */
TAILOR_API size_t tailor_pool_slot_size(const void* p);
/* Sets the high-water marks to the current values. */
TAILOR_API void tailor_dmm_reset_peak(void);

/* Secure mode (TAILOR_SECURE=1, docs/allocator.md "Secure mode"). */
typedef struct tailor_secure_stats {
  int active;               /* 1 if secure mode serves malloc, 0 otherwise (then all else is 0) */
  uint64_t quarantined;     /* freed blocks held back now in the threads' quarantines */
  uint64_t large_blocks;    /* blocks with a region of their own, live now */
  uint64_t unguarded;       /* of those regions, how many the kernel gave no guard page (vm.max_map_count) */
  uint64_t metadata_bytes;  /* bytes mapped for metadata (kept apart from blocks) */
} tailor_secure_stats;
TAILOR_API void tailor_secure_get_stats_sized(tailor_secure_stats* out, size_t size);
static inline void tailor_secure_get_stats(tailor_secure_stats* out) { tailor_secure_get_stats_sized(out, sizeof *out); }

/* The active configuration, one entry per TAILOR_* parameter. */
typedef enum tailor_config_source {
  TAILOR_SOURCE_DEFAULT = 0,
  TAILOR_SOURCE_ENV = 1,
  TAILOR_SOURCE_FILE = 2,    /* the config file's global lines */
  TAILOR_SOURCE_PROGRAM = 3  /* the config file's section for this program */
} tailor_config_source;
typedef struct tailor_config_entry {
  const char* name;         /* environment variable, e.g. "TAILOR_PAGE_SIZE" */
  int64_t value;            /* the value in use (bytes, milliseconds or a count) */
  const char* unit;         /* "bytes", "ms" or "count" */
  tailor_config_source source;
  const char* description;  /* one line */
} tailor_config_entry;
/* Number of parameters; fills out[0..min(n, count)-1] (entries of
   entry_size bytes: see the top of this file). */
TAILOR_API size_t tailor_config_sized(tailor_config_entry* out, size_t n, size_t entry_size);
static inline size_t tailor_config(tailor_config_entry* out, size_t n) {
  return tailor_config_sized(out, n, sizeof(tailor_config_entry));
}
/* The config file that was read, or NULL if none. */
TAILOR_API const char* tailor_config_file(void);
/* The key of the config file's [program KEY] section that applies to this
   program (its executable's path or file name), or NULL if none does. */
TAILOR_API const char* tailor_config_section(void);
/* The DMM serving malloc as configured (TAILOR_DMM or the file's `dmm`),
   or NULL if none; *source (if not NULL) says where it came from. */
TAILOR_API const char* tailor_config_dmm(tailor_config_source* source);

#ifdef __cplusplus
}
#endif

#endif /* TAILOR_TAILOR_H */
