// SPDX-License-Identifier: MIT
// Filling a caller's struct of the public API by the size it was compiled
// with (include/tailor/tailor.h, top): the structs only grow at their end,
// so a caller built against an older header gets the fields it knows, and
// one built against a newer header gets zeros in those this library lacks.
#pragma once

#include <cstddef>
#include <cstring>

namespace tailor::alloc {

// out is not null (the API functions return on a null out first).
template <class T>
void copy_out(const T& full, void* out, std::size_t size) noexcept {
  const std::size_t n = size < sizeof(T) ? size : sizeof(T);
  std::memcpy(out, &full, n);
  if (size > n) std::memset(static_cast<char*>(out) + n, 0, size - n);
}

}  // namespace tailor::alloc
