// SPDX-License-Identifier: MIT
// The trace format's checksum: XXH3-64 (libxxhash, used header-only so the
// recorder gains no run-time dependency for it).
#pragma once

#include <cstddef>
#include <cstdint>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace tailor::trace {

inline std::uint64_t hash64(const void* data, std::size_t size) noexcept { return XXH3_64bits(data, size); }

}  // namespace tailor::trace
