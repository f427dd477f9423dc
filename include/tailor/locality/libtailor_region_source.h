// SPDX-License-Identifier: MIT
// The locality heap on libtailor's back end (issue 5): slabs are regions of
// a libtailor region pool (tailor/tailor.h, tailor_region_*), that is, spans
// of libtailor segments. libtailor's free() recognizes a block inside them
// by its segment (O(1), the mask every free does) and calls the heap that
// bound itself to the source (bind_owner), so hinted and plain allocations
// live in one allocator and memory from the locality heap can be released
// with plain free(), realloc()'d and measured with malloc_usable_size(),
// when libtailor is the process's malloc.
//
// The source calls libtailor through a table of function pointers, so that
// a program needs no link-time dependency on libtailor: process_region_api()
// finds the table of the libtailor that is this process's malloc (linked or
// LD_PRELOADed), and linked_region_api() binds it at link time (programs
// and tests that link libtailor's core).
#pragma once

#include <cstddef>

#include "region_source.h"
#include "tailor/tailor.h"

namespace tailor::locality {

/// libtailor's region API as function pointers.
struct region_api {
  tailor_region_pool* (*pool_create)(const tailor_region_hooks*);
  void (*pool_destroy)(tailor_region_pool*);
  void* (*obtain)(tailor_region_pool*, std::size_t, std::size_t);
  void (*give_back)(tailor_region_pool*, void*, std::size_t);
  std::size_t (*page_size)();
  std::size_t (*max_align)();
};

/// The region API of the libtailor that is this process's malloc (its free()
/// and the region functions come from the same object), or nullptr when
/// malloc belongs to someone else (glibc, mimalloc, a sanitizer): only in the
/// first case does a plain free() find the locality heap's blocks.
/// Looked up once (dlsym, dladdr).
const region_api* process_region_api() noexcept;

/// The region API bound at link time (the program links libtailor or its
/// core). Whether free() is libtailor's is then the program's business.
inline const region_api& linked_region_api() noexcept {
  static constexpr region_api api{&tailor_region_pool_create, &tailor_region_pool_destroy, &tailor_region_obtain,
                                  &tailor_region_give_back,   &tailor_region_page_size,    &tailor_region_max_align};
  return api;
}

class libtailor_region_source {
 public:
  explicit libtailor_region_source(const region_api& api) noexcept : api_(&api) {}
  libtailor_region_source(libtailor_region_source&& o) noexcept : api_(o.api_), pool_(o.pool_) { o.pool_ = nullptr; }
  libtailor_region_source& operator=(libtailor_region_source&&) = delete;
  ~libtailor_region_source() {
    if (pool_ != nullptr) api_->pool_destroy(pool_);
  }

  /// The OS page: sizes are rounded up to it (libtailor takes whole slices).
  std::size_t page_size() const noexcept { return api_->page_size(); }
  /// Half of libtailor's segment (TAILOR_SEGMENT_SIZE / 2).
  std::size_t max_align() const noexcept { return api_->max_align(); }
  /// Creates the region pool whose blocks free() hands to `owner`.
  void bind_owner(owner_free_fn free_fn, owner_usable_fn usable_fn, void* owner) noexcept {
    if (pool_ != nullptr) api_->pool_destroy(pool_);
    const tailor_region_hooks hooks{free_fn, usable_fn, owner};
    pool_ = api_->pool_create(&hooks);
  }
  /// nullptr before bind_owner() (a region nobody could free() is never handed out).
  void* obtain(std::size_t bytes, std::size_t align) noexcept {
    return pool_ == nullptr ? nullptr : api_->obtain(pool_, bytes, align);
  }
  void give_back(void* p, std::size_t bytes) noexcept { api_->give_back(pool_, p, bytes); }

 private:
  const region_api* api_;
  tailor_region_pool* pool_ = nullptr;
};

}  // namespace tailor::locality
