// SPDX-License-Identifier: MIT
// The abstract memory a DMM mechanism manages, as a C++20 concept. A
// mechanism (kingsley.h, and the ones to come) touches its metadata only
// through load/store of 64-bit words and asks the system for memory only
// through obtain/release, so that the same template runs on the simulated
// address space now (simulated_memory.h: counts every access) and on real
// pages later (issue 5), Heap Layers style, without being rewritten.
#pragma once

#include <concepts>
#include <cstdint>

namespace tailor::simulate {

/// Addresses are plain integers in the memory's address space.
using Address = std::uint64_t;

template <class M>
concept Memory = requires(M m, Address address, std::uint64_t value, std::uint64_t bytes, std::uint64_t alignment) {
  /// Reads the 8-byte-aligned metadata word at `address` (0 if never written).
  { m.load(address) } -> std::same_as<std::uint64_t>;
  /// Writes the 8-byte-aligned metadata word at `address`.
  { m.store(address, value) } -> std::same_as<void>;
  /// One system request for `bytes` bytes aligned to `alignment` (a power of
  /// two); returns the start of the new region.
  { m.obtain(bytes, alignment) } -> std::same_as<Address>;
  /// Returns a region (or its whole tail) obtained earlier to the system.
  { m.release(address, bytes) } -> std::same_as<void>;
};

}  // namespace tailor::simulate
