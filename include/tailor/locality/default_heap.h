// SPDX-License-Identifier: MIT
// The locality heap as programs use it: tailor::locality_heap (the heap of
// heap.h on default_region_source: libtailor's back end when libtailor is
// the process's malloc, mmap otherwise) and the process-wide instance behind
// tailor_malloc_near and default-constructed tailor::allocator objects.
#pragma once

#include "default_region_source.h"
#include "heap.h"

namespace tailor {

using locality_heap = locality::basic_locality_heap<locality::default_region_source>;

/// The process-wide heap: default K, synchronized (a spin lock), never
/// destroyed (so blocks may be freed from static destructors).
locality_heap& default_locality_heap() noexcept;

}  // namespace tailor
