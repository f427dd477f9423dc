// SPDX-License-Identifier: MIT
// The locality heap as a std::pmr::memory_resource, for pmr containers. The
// pmr interface carries no hint, so blocks come from the First predicate:
// what a pmr container gains is the K-Bit organization (a freed block goes
// back to its K-class, allocations keep drawing from one K-class), not
// container-directed placement; for that, use tailor::allocator.
#pragma once

#include <memory_resource>
#include <new>

#include "default_heap.h"

namespace tailor {

class locality_resource final : public std::pmr::memory_resource {
 public:
  locality_resource() noexcept : heap_(&default_locality_heap()) {}
  explicit locality_resource(locality_heap& heap) noexcept : heap_(&heap) {}
  locality_heap& heap() const noexcept { return *heap_; }

 private:
  void* do_allocate(std::size_t bytes, std::size_t align) override {
    void* p = heap_->allocate(bytes, locality::First{}, align);
    if (p == nullptr) throw std::bad_alloc();
    return p;
  }
  void do_deallocate(void* p, std::size_t, std::size_t) override { heap_->deallocate(p); }
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
    const auto* o = dynamic_cast<const locality_resource*>(&other);
    return o != nullptr && o->heap_ == heap_;
  }

  locality_heap* heap_;
};

}  // namespace tailor
