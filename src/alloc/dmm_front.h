// SPDX-License-Identifier: MIT
// The DMM front end: when TAILOR_DMM names a DMM (a built-in: kng, lea,
// fib, buddy, s10, exa; or a JSON spec file, docs/dmm.md), that DMM serves
// malloc and every other entry point instead of the size-class heaps
// (docs/deploy.md). It is the dmm layer's mechanisms (src/dmm/) over
// RealMemory, one instance for the process behind one lock: the simulator
// models one heap fed by all threads' requests in trace order, and a DMM
// per thread would be a different allocator from the one the simulation
// predicted.
//
// The DMM owns one reserved range, one span of 2^36 bytes per allocator of
// the spec; free, realloc and malloc_usable_size recognize its blocks by
// that range (dmm_owns), every other pointer takes the usual path. What the
// DMM cannot serve (a request too large for its classes, or its space
// exhausted) is served by a heap of libtailor's own kept for the purpose,
// so that the program runs as the C library specifies; `outside` counts
// those requests. A DMM that cannot be set up (unknown name, a spec that
// does not load) is reported in one line on stderr and libtailor runs as
// usual.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tailor/tailor.h"

namespace tailor::alloc {

// The DMM's range: [g_dmm_base, g_dmm_base + g_dmm_size); size 0: no DMM.
extern std::uintptr_t g_dmm_base __attribute__((visibility("hidden")));
extern std::uintptr_t g_dmm_size __attribute__((visibility("hidden")));

inline bool dmm_owns(const void* p) noexcept {
  return reinterpret_cast<std::uintptr_t>(p) - g_dmm_base < g_dmm_size;
}

/// Sets the DMM up from TAILOR_DMM (process_init calls it once, after the
/// configuration is read). Does nothing if the variable is not set.
void dmm_init() noexcept;
/// True once a DMM serves malloc (process_init must have run).
inline bool dmm_active() noexcept { return g_dmm_size != 0; }

// Entry points in DMM mode (dmm_active()). malloc and the aligned forms
// serve from the DMM, else from the fallback heap; errno ENOMEM on failure.
void* dmm_malloc(std::size_t size, std::size_t align) noexcept;
void* dmm_realloc(void* p, std::size_t size) noexcept;
/// A block of the DMM (dmm_owns(p)).
void dmm_free(void* p) noexcept;
std::size_t dmm_usable(const void* p) noexcept;

void dmm_get_stats(tailor_dmm_stats* out) noexcept;
void dmm_reset_peak() noexcept;

}  // namespace tailor::alloc
