// SPDX-License-Identifier: MIT
// The locality heap as programs use it: tailor::locality_heap (the heap of
// heap.h on the mmap stand-in source, until libtailor's back end lands) and
// the process-wide instance behind tailor_malloc_near and default-constructed
// tailor::allocator objects.
#pragma once

#include "heap.h"
#include "mmap_region_source.h"

namespace tailor {

using locality_heap = locality::basic_locality_heap<locality::mmap_region_source>;

/// The process-wide heap: default K, synchronized (a spin lock), never
/// destroyed (so blocks may be freed from static destructors).
locality_heap& default_locality_heap() noexcept;

}  // namespace tailor
