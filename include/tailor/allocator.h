// SPDX-License-Identifier: MIT
// tailor::allocator<T, Predicate>: a standard allocator on a locality heap
// that turns hints into allocation predicates. Standard containers call
// allocate(n) (the predicate built from no hint); std::allocator_traits::
// allocate(a, n, hint) reaches allocate(n, hint), so anything that passes a
// hint address gets Predicate::from_hint(hint); tailor's own trees call
// allocate_on_path(n, path, parent) with the insertion path (tree_path.h).
#pragma once

#include <cstddef>
#include <limits>
#include <new>
#include <type_traits>

#include "locality/default_heap.h"
#include "locality/predicates.h"
#include "locality/tree_path.h"

namespace tailor {

template <class T, class Predicate = locality::Match>
class allocator {
  static_assert(locality::allocation_predicate<Predicate>);
  static_assert(requires(const void* h) { Predicate::from_hint(h); },
                "an allocator predicate needs static from_hint(const void*)");

 public:
  using value_type = T;
  using predicate_type = Predicate;
  using propagate_on_container_copy_assignment = std::true_type;
  using propagate_on_container_move_assignment = std::true_type;
  using propagate_on_container_swap = std::true_type;
  using is_always_equal = std::false_type;
  template <class U>
  struct rebind {
    using other = allocator<U, Predicate>;
  };

  /// On the process-wide heap (default_locality_heap()).
  allocator() noexcept : heap_(&default_locality_heap()) {}
  explicit allocator(locality_heap& heap) noexcept : heap_(&heap) {}
  template <class U>
  allocator(const allocator<U, Predicate>& other) noexcept : heap_(&other.heap()) {}

  T* allocate(std::size_t n) { return allocate(n, static_cast<const void*>(nullptr)); }
  /// Near `hint` as the predicate understands it (Match: in hint's K-class or the nearest).
  T* allocate(std::size_t n, const void* hint) { return get(n, Predicate::from_hint(hint)); }
  /// With the insertion path of a tree node and its parent.
  T* allocate_on_path(std::size_t n, locality::tree_path path, const void* parent) {
    if constexpr (requires { Predicate::from_path(path, parent); })
      return get(n, Predicate::from_path(path, parent));
    else
      return get(n, Predicate::from_hint(parent));
  }
  void deallocate(T* p, std::size_t) noexcept { heap_->deallocate(p); }

  locality_heap& heap() const noexcept { return *heap_; }

  template <class U>
  bool operator==(const allocator<U, Predicate>& other) const noexcept {
    return heap_ == &other.heap();
  }

 private:
  template <class P>
  T* get(std::size_t n, P pred) {
    if (n > std::numeric_limits<std::size_t>::max() / sizeof(T)) throw std::bad_array_new_length();
    void* p = heap_->allocate(n * sizeof(T), pred, alignof(T) > 16 ? alignof(T) : 16);
    if (p == nullptr) throw std::bad_alloc();
    return static_cast<T*>(p);
  }

  locality_heap* heap_;
};

}  // namespace tailor
