// SPDX-License-Identifier: MIT
// The live sampled blocks of `tailor record --sample` (sampler.h), so that
// a release of one is recorded and every other release goes straight to the
// real function. A sampled block stays where the program's allocator put
// it: a recorder that moved sampled blocks to a heap of its own would
// change the program it measures (measured: 10% on a tree benchmark whose
// large arrays it sampled, from the page faults of a heap that returns
// memory where the program's allocator keeps it).
//
// Every release asks the filter: one bit per 16-byte address class, 2^16
// bits (8 KiB) indexed by the address's bits 4 to 19, set while a live
// sampled block has that index. A set bit sends the release to the exact
// set (an open-addressing table under a lock); with L live sampled blocks
// about L / 65536 of the releases take that path. In an exact trace every
// bit is set, so that every release is hooked, as before sampling existed.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace tailor::record::sampled_set {

inline constexpr unsigned kFilterBits = 16;
inline constexpr std::size_t kFilterWords = (std::size_t{1} << kFilterBits) / 64;
/// All ones (in the library's data, before any code runs) until init():
/// every release is hooked, in an exact trace or before the recorder starts.
extern std::array<std::uint64_t, kFilterWords> filter;

inline bool maybe_sampled(const void* p) noexcept {
  const auto a = reinterpret_cast<std::uintptr_t>(p) >> 4;
  const std::uint64_t word = __atomic_load_n(&filter[(a >> 6) & (kFilterWords - 1)], __ATOMIC_RELAXED);
  return (word >> (a & 63)) & 1;
}

/// Makes the filter empty and the set ready (a sampled recording's start).
/// False: no memory for the set.
bool init() noexcept;

/// Adds a block the program is about to receive. False: no memory (the
/// block is then not sampled).
bool insert(const void* p) noexcept;
/// Removes `p` if it is a live sampled block; true if it was. Called before
/// the block is released, so that its address cannot be handed out, and
/// sampled, again in between.
bool remove(const void* p) noexcept;

/// In a forked child: the lock is free again (the child has one thread).
void after_fork_child() noexcept;

}  // namespace tailor::record::sampled_set
