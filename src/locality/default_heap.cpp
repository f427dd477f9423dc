// SPDX-License-Identifier: MIT
// The process-wide locality heap and the C entry points on it
// (include/tailor/locality.h).
#include <pthread.h>

#include <new>

#include "tailor/locality.h"

namespace tailor {

namespace {

locality_heap* g_heap = nullptr;
pthread_once_t g_once = PTHREAD_ONCE_INIT;

void fork_prepare() noexcept { g_heap->fork_prepare(); }
void fork_parent() noexcept { g_heap->fork_parent(); }
void fork_child() noexcept { g_heap->fork_child(); }

void make_heap() noexcept {
  // Built on first use and never destroyed: blocks may outlive static destructors.
  alignas(locality_heap) static unsigned char storage[sizeof(locality_heap)];
  g_heap = new (storage) locality_heap(locality::heap_options{0, true});
  // After the heap, and so after its region pool (on libtailor): prepare
  // handlers run in reverse order of registration, so the heap's lock is
  // taken before the pool's, the order allocate takes them in.
  pthread_atfork(&fork_prepare, &fork_parent, &fork_child);
}

}  // namespace

locality_heap& default_locality_heap() noexcept {
  pthread_once(&g_once, &make_heap);
  return *g_heap;
}

namespace {

// Built when the program (or the library) is loaded, before its threads
// exist: a child forked while another thread was still building the heap
// would wait forever for that build (glibc's pthread_once, like a static's
// guard, does not restart it in the child). Calls made earlier, from other
// constructors, still go through the once.
[[gnu::constructor]] void build_at_load() { default_locality_heap(); }

}  // namespace

}  // namespace tailor

extern "C" void* tailor_malloc_near(size_t size, const void* hint) {
  return tailor::default_locality_heap().allocate(size, tailor::locality::Match::from_hint(hint));
}

extern "C" void tailor_free_near(void* p) { tailor::default_locality_heap().deallocate(p); }

extern "C" size_t tailor_near_usable_size(const void* p) {
  return p == nullptr ? 0 : tailor::default_locality_heap().usable_size(p);
}
