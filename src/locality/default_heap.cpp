// SPDX-License-Identifier: MIT
// The process-wide locality heap and the C entry points on it
// (include/tailor/locality.h).
#include <new>

#include "tailor/locality.h"

namespace tailor {

locality_heap& default_locality_heap() noexcept {
  // Built on first use and never destroyed: blocks may outlive static destructors.
  alignas(locality_heap) static unsigned char storage[sizeof(locality_heap)];
  static locality_heap* heap = new (storage) locality_heap(locality::heap_options{0, true});
  return *heap;
}

}  // namespace tailor

extern "C" void* tailor_malloc_near(size_t size, const void* hint) {
  return tailor::default_locality_heap().allocate(size, tailor::locality::Match::from_hint(hint));
}

extern "C" void tailor_free_near(void* p) { tailor::default_locality_heap().deallocate(p); }

extern "C" size_t tailor_near_usable_size(const void* p) {
  return p == nullptr ? 0 : tailor::default_locality_heap().usable_size(p);
}
