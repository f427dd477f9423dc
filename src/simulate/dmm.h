// SPDX-License-Identifier: MIT
// Dmm: a DMM composed at run time from a DmmSpec (dmm_spec.h): an ordered
// list of allocators by size range, each a mechanism template (Heap Layers
// style) on its own SimulatedMemory. A request goes to the allocator whose
// range holds its routing size (dmm_spec.h); a release to the allocator
// whose address space holds the address (allocator i's memory is the i-th
// 2^40-byte space, so the owner is one shift away, as a real allocator finds
// a block's segment).
// Allocators draw on separate memory: the DMM's memory held is the sum of
// theirs, its accesses and requests too (DmmMemory). One virtual call per
// operation chooses the mechanism; inside, everything is inlined.
//
// How a spec becomes mechanisms (docs/dmm.md, "The model"):
//   segregated_free_lists, segregated_fit, exact_segregated_fit,
//   strict_segregated_fit  -> SegregatedFit (segregated_fit.h)
//   simple_segregated_storage -> SimpleSegregatedStorage
//   binary_buddy, fibonacci_buddy -> BinaryBuddy, FibonacciBuddy with their
//     largest block = system.chunk; with split = false they are the strict
//     segregated fit of their block sizes (no splitting means no buddies).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "allocator.h"
#include "dmm_spec.h"
#include "memory_account.h"
#include "simulated_memory.h"
#include "size_classes.h"

namespace tailor::simulate {

/// One allocator of a Dmm, type-erased.
class DmmPart {
 public:
  virtual ~DmmPart() = default;
  virtual Block allocate(std::uint64_t bytes, std::uint64_t alignment) = 0;
  virtual std::uint64_t release(Address address) = 0;
  virtual std::uint64_t steps() const noexcept = 0;
  virtual std::uint64_t splits() const noexcept = 0;
  virtual std::uint64_t coalesces() const noexcept = 0;
  virtual std::uint64_t min_alignment() const noexcept = 0;
};

class Dmm;

/// Builds the mechanism of one allocator of a spec on `memory`; `field`
/// (e.g. "allocators[2]") names it in a SpecError.
std::unique_ptr<DmmPart> make_part(const AllocatorSpec& a, SimulatedMemory& memory,
                                   const std::vector<std::uint64_t>& trace_sizes, const std::string& field);

/// The memory of a Dmm: the sum of its allocators' memories.
class DmmMemory final : public MemoryAccount {
 public:
  std::uint64_t held() const noexcept override { return held_; }
  std::uint64_t held_high_water() const noexcept override { return high_water_; }
  std::uint64_t reads() const noexcept override;
  std::uint64_t writes() const noexcept override;
  std::uint64_t system_requests() const noexcept override;
  bool holds(Address address, std::uint64_t bytes) const noexcept override;

 private:
  friend class Dmm;

/// Builds the mechanism of one allocator of a spec on `memory`; `field`
/// (e.g. "allocators[2]") names it in a SpecError.
std::unique_ptr<DmmPart> make_part(const AllocatorSpec& a, SimulatedMemory& memory,
                                   const std::vector<std::uint64_t>& trace_sizes, const std::string& field);
  std::vector<std::unique_ptr<SimulatedMemory>> parts_;
  std::uint64_t held_ = 0, high_water_ = 0;
};

class Dmm {
 public:
  static constexpr std::uint64_t kMinAlignment = 8;

  /// Builds the DMM of `spec`; `trace_sizes` (sizes_of(trace.operations))
  /// gives the classes of "exact" allocators. Throws SpecError if a part
  /// cannot be built (a mechanism rejecting its configuration).
  Dmm(const DmmSpec& spec, const std::vector<std::uint64_t>& trace_sizes, const std::string& origin = "spec");

  Block allocate(std::uint64_t bytes, std::uint64_t alignment = 0) {
    const std::size_t i = part_for(routing_size(bytes, alignment));
    const std::uint64_t before = memory_.parts_[i]->held();
    const Block b = parts_[i]->allocate(bytes, alignment);
    account(i, before);
    return b;
  }

  std::uint64_t release(Address address) {
    const std::size_t i = (address >> 40) - 1;
    const std::uint64_t before = memory_.parts_[i]->held();
    const std::uint64_t bytes = parts_[i]->release(address);
    account(i, before);
    return bytes;
  }

  std::uint64_t steps() const noexcept;
  std::uint64_t splits() const noexcept;
  std::uint64_t coalesces() const noexcept;
  std::uint64_t min_alignment() const noexcept;
  const DmmMemory& memory() const noexcept { return memory_; }
  std::size_t parts() const noexcept { return parts_.size(); }

  /// Size classes of an allocator of `spec` over range (min, max] (tests, docs).
  static SizeClasses classes_for(const AllocatorSpec& a, const std::vector<std::uint64_t>& trace_sizes);

 private:
  std::size_t part_for(std::uint64_t bytes) const noexcept {
    std::size_t i = 0;
    while (i + 1 < upper_.size() && bytes > upper_[i]) ++i;
    return i;
  }
  void account(std::size_t i, std::uint64_t before) noexcept {
    const std::uint64_t after = memory_.parts_[i]->held();
    memory_.held_ = memory_.held_ - before + after;
    if (memory_.held_ > memory_.high_water_) memory_.high_water_ = memory_.held_;
  }

  DmmMemory memory_;
  std::vector<std::unique_ptr<DmmPart>> parts_;
  std::vector<std::uint64_t> upper_;  // inclusive max of each range (UINT64_MAX: none); 0 bytes counts as 1
};

static_assert(Allocator<Dmm>);

}  // namespace tailor::simulate
