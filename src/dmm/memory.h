// SPDX-License-Identifier: MIT
// The abstract memory a DMM mechanism manages, as a C++20 concept. A
// mechanism touches its metadata only through load/store of 64-bit words
// and asks the system for memory only through obtain/release, so that one
// template runs both on the simulator's address space
// (src/simulate/simulated_memory.h: counts every access) and on real pages
// inside libtailor (src/alloc/dmm_memory.h), Heap Layers style, without
// being rewritten: the validation of the simulator against reality
// (docs/deploy.md) compares one code path with itself on two memories.
//
// A memory also names an Arena: where a mechanism keeps its private state
// whose size is known only at run time (list heads per size class, class
// tables). That state is the allocator's own, like Kingsley's bucket heads,
// and is not counted as memory accesses; the simulator's arena is the C++
// heap, libtailor's a few pages from the OS.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>

namespace tailor::dmm {

/// Addresses are plain integers in the memory's address space.
using Address = std::uint64_t;

/// Private storage of a mechanism: allocate returns nullptr when it cannot.
template <class A>
concept Arena = requires(void* p, std::size_t bytes) {
  { A::allocate(bytes) } -> std::same_as<void*>;
  { A::release(p, bytes) } -> std::same_as<void>;
};

template <class M>
concept Memory = Arena<typename M::Arena> &&
                 requires(M m, Address address, std::uint64_t value, std::uint64_t bytes, std::uint64_t alignment) {
  /// Reads the 8-byte-aligned metadata word at `address` (0 if never written).
  { m.load(address) } -> std::same_as<std::uint64_t>;
  /// Writes the 8-byte-aligned metadata word at `address`.
  { m.store(address, value) } -> std::same_as<void>;
  /// One system request for `bytes` bytes aligned to `alignment` (a power of
  /// two); returns the start of the new region, or 0 if the system refuses.
  /// Fresh memory reads as zero.
  { m.obtain(bytes, alignment) } -> std::same_as<Address>;
  /// Returns a region (or its whole head or tail) obtained earlier to the system.
  { m.release(address, bytes) } -> std::same_as<void>;
};

}  // namespace tailor::dmm
