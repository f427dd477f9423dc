// SPDX-License-Identifier: MIT
// Finding the libtailor that is this process's malloc
// (include/tailor/locality/libtailor_region_source.h). The locality library
// does not link libtailor: a program may run on glibc, link libtailor
// (statically or not) or have it preloaded. The region functions are found
// through weak references (resolved when the program links libtailor) or
// dlsym (LD_PRELOAD), and trusted only if they come from the same object as
// the process's free(): otherwise a plain free() of a locality block would
// reach an allocator that does not know it. A program that links libtailor
// and still does not have it as its malloc (linked after the C library) is
// told so in one line when it starts.
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "tailor/locality/libtailor_region_source.h"

#pragma weak tailor_region_pool_create
#pragma weak tailor_region_pool_destroy
#pragma weak tailor_region_obtain
#pragma weak tailor_region_give_back
#pragma weak tailor_region_page_size
#pragma weak tailor_region_max_align

namespace tailor::locality {

namespace {

template <class F>
bool find(F& out, F linked, const char* name) {
  out = linked != nullptr ? linked : reinterpret_cast<F>(dlsym(RTLD_DEFAULT, name));
  return out != nullptr;
}

const void* object_of(const void* address) {
  Dl_info info{};
  return address != nullptr && dladdr(address, &info) != 0 ? info.dli_fbase : nullptr;
}

const region_api* lookup(region_api& api) {
  if (!find(api.pool_create, &tailor_region_pool_create, "tailor_region_pool_create") ||
      !find(api.pool_destroy, &tailor_region_pool_destroy, "tailor_region_pool_destroy") ||
      !find(api.obtain, &tailor_region_obtain, "tailor_region_obtain") ||
      !find(api.give_back, &tailor_region_give_back, "tailor_region_give_back") ||
      !find(api.page_size, &tailor_region_page_size, "tailor_region_page_size") ||
      !find(api.max_align, &tailor_region_max_align, "tailor_region_max_align"))
    return nullptr;
  const void* libtailor = object_of(reinterpret_cast<const void*>(api.obtain));
  const void* process_free = object_of(dlsym(RTLD_DEFAULT, "free"));
  return libtailor != nullptr && libtailor == process_free ? &api : nullptr;
}

}  // namespace

const region_api* process_region_api() noexcept {
  static region_api api{};
  static const region_api* const found = lookup(api);
  return found;
}

namespace {

// libtailor linked (the weak references resolved) but another object's free
// is the process's: hinted blocks then come from mmap, and a plain free of
// one would reach that other allocator, which aborts or corrupts its heap.
[[gnu::constructor]] void warn_if_libtailor_is_not_the_malloc() {
  if (&tailor_region_obtain == nullptr || process_region_api() != nullptr) return;
  Dl_info info{};
  const char* other = dladdr(dlsym(RTLD_DEFAULT, "free"), &info) != 0 && info.dli_fname ? info.dli_fname : "?";
  char line[512];
  const int n = std::snprintf(line, sizeof line,
                              "tailor_locality: libtailor is linked but free() comes from %s: release hinted blocks "
                              "with tailor_free_near, not free, or link libtailor before the C library\n",
                              other);
  if (n <= 0) return;
  const std::size_t length = std::min(static_cast<std::size_t>(n), sizeof line - 1);
  (void)!write(STDERR_FILENO, line, length);
}

}  // namespace

}  // namespace tailor::locality
