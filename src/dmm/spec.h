// SPDX-License-Identifier: MIT
// The DMM model of the DMM simulator paper as plain data (docs/dmm.md, "The model"): a DMM
// is an ordered list of allocators, each owning a range (min, max] of
// request sizes, with a mechanism, a free-list structure, a fit, a policy,
// splitting and coalescing, a header size and alignment, its size classes,
// and how it obtains memory from the system. Freestanding (views, no
// owning containers) so that libtailor can build a DMM from it inside
// malloc; the simulator's DmmSpec (src/simulate/dmm_spec.h) owns its data
// and hands out this view.
#pragma once

#include <cstddef>
#include <cstdint>

#include "dmm/free_blocks.h"
#include "dmm/free_list.h"

namespace tailor::dmm {

enum class Mechanism : std::uint8_t {
  kSegregatedFreeLists,
  kSimpleSegregatedStorage,
  kSegregatedFit,
  kExactSegregatedFit,
  kStrictSegregatedFit,
  kBinaryBuddy,
  kFibonacciBuddy,
};

/// How an allocator's range is cut into size classes (one free list each).
enum class ClassKind : std::uint8_t {
  kSingle,      ///< one list for the whole range
  kPowersOfTwo, ///< (.., 8], (8, 16], (16, 32] ... up to the range's max
  kExact,       ///< one class per size the trace uses in the range
  kBounds,      ///< the given upper bounds
};

inline const char* to_string(Mechanism m) noexcept {
  switch (m) {
    case Mechanism::kSegregatedFreeLists: return "segregated_free_lists";
    case Mechanism::kSimpleSegregatedStorage: return "simple_segregated_storage";
    case Mechanism::kSegregatedFit: return "segregated_fit";
    case Mechanism::kExactSegregatedFit: return "exact_segregated_fit";
    case Mechanism::kStrictSegregatedFit: return "strict_segregated_fit";
    case Mechanism::kBinaryBuddy: return "binary_buddy";
    case Mechanism::kFibonacciBuddy: return "fibonacci_buddy";
  }
  return "?";
}

/// One allocator of a DMM. Pointers are views into storage the spec's owner keeps.
struct AllocatorView {
  std::uint64_t min = 0;        ///< exclusive lower bound of request sizes
  bool bounded = false;         ///< false: no upper bound
  std::uint64_t max = 0;        ///< inclusive upper bound when bounded
  Mechanism mechanism = Mechanism::kSegregatedFreeLists;
  Structure structure = Structure::kSll;
  Fit fit = Fit::kFirst;
  Policy policy = Policy::kLifo;
  bool split = false;
  bool coalesce = false;
  ClassKind classes = ClassKind::kSingle;
  const std::uint64_t* bounds = nullptr;  ///< kBounds: the upper bounds
  std::size_t bound_count = 0;
  std::uint64_t header = 8;          ///< bytes before a block's data
  std::uint64_t alignment = 16;      ///< of every block's data
  std::uint64_t granularity = 4096;  ///< system requests are multiples of it
  std::uint64_t chunk = 4096;        ///< least bytes per system request (a buddy's largest block)
  bool returns = false;              ///< whole free regions go back to the system
  bool area_lists = false;           ///< simple_segregated_storage: a free list per area ("lists": "area")
};

/// A DMM: its allocators in order of their ranges, and for `exact` classes
/// the request sizes (as segregated_size computes them, increasing) that
/// make them: the trace's, or those a spec file carries.
struct SpecView {
  const char* name = "";
  const AllocatorView* allocators = nullptr;
  std::size_t count = 0;
  const std::uint64_t* exact_sizes = nullptr;
  std::size_t exact_size_count = 0;
};

/// The size by which a request is routed to an allocator: its bytes, plus
/// for an aligned call (alignment A above 8, the least any allocator has)
/// the A - 8 bytes of slack an allocator may need to meet it, so that the
/// allocator's classes always hold the request.
constexpr std::uint64_t routing_size(std::uint64_t bytes, std::uint64_t alignment) noexcept {
  return alignment > 8 ? bytes + alignment - 8 : bytes;
}

}  // namespace tailor::dmm
