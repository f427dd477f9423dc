// SPDX-License-Identifier: MIT
// FixedArray: an array whose length is set once, stored in a memory's Arena
// (memory.h). The mechanisms keep their per-class state in it instead of a
// std::vector, because inside libtailor they run within malloc: no operator
// new, no exceptions. Making one can fail (the arena is out of memory):
// callers check ok() after assign(), and a mechanism that could not get its
// state says so through its own ok().
#pragma once

#include <cstddef>
#include <new>
#include <utility>

#include "dmm/memory.h"

namespace tailor::dmm {

template <class T, Arena A>
class FixedArray {
 public:
  FixedArray() = default;
  FixedArray(const FixedArray&) = delete;
  FixedArray& operator=(const FixedArray&) = delete;
  FixedArray(FixedArray&& o) noexcept : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  FixedArray& operator=(FixedArray&& o) noexcept {
    if (this != &o) {
      reset();
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  ~FixedArray() { reset(); }

  /// Replaces the contents with n copies of `value`; false (and empty) if
  /// the arena has no room.
  bool assign(std::size_t n, const T& value = T{}) {
    reset();
    if (n == 0) return true;
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) return false;
    void* p = A::allocate(n * sizeof(T));
    if (p == nullptr) return false;
    data_ = static_cast<T*>(p);
    for (std::size_t i = 0; i < n; ++i) ::new (static_cast<void*>(data_ + i)) T(value);
    size_ = n;
    return true;
  }

  /// Keeps the first min(n, size()) elements and fills the rest with `value`.
  bool resize(std::size_t n, const T& value = T{}) {
    FixedArray bigger;
    if (!bigger.assign(n, value)) return false;
    for (std::size_t i = 0; i < n && i < size_; ++i) bigger.data_[i] = std::move(data_[i]);
    *this = std::move(bigger);
    return true;
  }

  void reset() noexcept {
    if (data_ == nullptr) return;
    for (std::size_t i = 0; i < size_; ++i) data_[i].~T();
    A::release(data_, size_ * sizeof(T));
    data_ = nullptr;
    size_ = 0;
  }

  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  T* data() noexcept { return data_; }
  const T* data() const noexcept { return data_; }
  T& operator[](std::size_t i) noexcept { return data_[i]; }
  const T& operator[](std::size_t i) const noexcept { return data_[i]; }
  T& back() noexcept { return data_[size_ - 1]; }
  const T& back() const noexcept { return data_[size_ - 1]; }
  T* begin() noexcept { return data_; }
  T* end() noexcept { return data_ + size_; }
  const T* begin() const noexcept { return data_; }
  const T* end() const noexcept { return data_ + size_; }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace tailor::dmm
