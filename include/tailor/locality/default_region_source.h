// SPDX-License-Identifier: MIT
// The region source of tailor::locality_heap: libtailor's back end when
// libtailor is the process's malloc (linked or LD_PRELOADed), so that the
// heap's blocks can be released with plain free(); the mmap source otherwise
// (glibc, mimalloc, sanitizer runs), where they must be released through the
// heap (tailor_free_near, the allocator). The choice is made once per heap,
// when it is built.
#pragma once

#include <cstddef>
#include <optional>

#include "libtailor_region_source.h"
#include "mmap_region_source.h"

namespace tailor::locality {

class default_region_source {
 public:
  /// libtailor's regions if libtailor is the process's malloc, else mmap.
  default_region_source() noexcept : default_region_source(process_region_api()) {}
  /// libtailor's regions through `api`; mmap if it is nullptr.
  explicit default_region_source(const region_api* api) noexcept {
    if (api != nullptr) tailor_.emplace(*api);
  }

  /// Whether blocks live in libtailor's memory (and plain free() releases them).
  bool on_libtailor() const noexcept { return tailor_.has_value(); }

  std::size_t page_size() const noexcept { return tailor_ ? tailor_->page_size() : mmap_.page_size(); }
  std::size_t max_align() const noexcept { return tailor_ ? tailor_->max_align() : ~std::size_t{0}; }
  void bind_owner(owner_free_fn free_fn, owner_usable_fn usable_fn, void* owner) noexcept {
    if (tailor_) tailor_->bind_owner(free_fn, usable_fn, owner);
  }
  void* obtain(std::size_t bytes, std::size_t align) noexcept {
    return tailor_ ? tailor_->obtain(bytes, align) : mmap_.obtain(bytes, align);
  }
  void give_back(void* p, std::size_t bytes) noexcept {
    if (tailor_) tailor_->give_back(p, bytes);
    else mmap_.give_back(p, bytes);
  }

 private:
  std::optional<libtailor_region_source> tailor_;
  mmap_region_source mmap_;
};

}  // namespace tailor::locality
