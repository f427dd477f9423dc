// SPDX-License-Identifier: MIT
// The interface of an allocator (a mechanism over a Memory): what allocate
// returns and what its users may call, as a C++20 concept, so that the
// simulation loop and libtailor's DMM front end are templates instantiated
// per allocator (no virtual call per operation) and test doubles plug in.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>

#include "dmm/memory.h"

namespace tailor::dmm {

/// What an allocator hands out: the address the program gets and the bytes
/// of the block that serves it (its header and padding included). An
/// address of 0 means the request could not be served: no class holds it,
/// or the system refused memory; the allocator is then unchanged.
struct Block {
  Address address = 0;
  std::uint64_t bytes = 0;
};

/// The mechanism families, for what depends on how a mechanism works
/// rather than on a spec (the time model weighs a step of each apart: a
/// step of a list search is a dependent load, a step of a split is not).
enum class MechanismKind : std::uint8_t {
  kKingsley,
  kLea,
  kBinaryBuddy,
  kFibonacciBuddy,
  kSegregatedLists,
  kSegregatedFit,
  kSimpleSegregatedStorage,
  kOther,
};
inline constexpr std::size_t kMechanismKinds = 8;
inline constexpr const char* kMechanismKindNames[kMechanismKinds] = {
    "kingsley", "lea", "binary_buddy", "fibonacci_buddy", "segregated_lists", "segregated_fit",
    "simple_segregated_storage", "other"};

template <class A>
concept Allocator = requires(A a, const A ca, std::uint64_t bytes, std::uint64_t alignment, Address address) {
  /// `alignment` is 0 when the program asked for none.
  { a.allocate(bytes, alignment) } -> std::same_as<Block>;
  /// Returns the bytes of the released block.
  { a.release(address) } -> std::same_as<std::uint64_t>;
  /// Time complexity so far, in abstract steps.
  { ca.steps() } -> std::convertible_to<std::uint64_t>;
  /// Alignment every block has when the program asks for none.
  { A::kMinAlignment } -> std::convertible_to<std::uint64_t>;
};

}  // namespace tailor::dmm
