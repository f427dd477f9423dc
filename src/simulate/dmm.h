// SPDX-License-Identifier: MIT
// Dmm: the simulator's DMM composed at run time from a DmmSpec
// (dmm_spec.h): dmm::Composite (src/dmm/composite.h, the same composition
// libtailor runs as a real malloc) over one SimulatedMemory per allocator.
// Allocator i's memory is the i-th 2^40-byte space, so the owner of an
// address is one shift away, as a real allocator finds a block's segment.
// Allocators draw on separate memory: the DMM's memory held is the sum of
// theirs, its accesses and requests too (DmmMemory).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dmm/composite.h"
#include "simulate/dmm_names.h"
#include "simulate/dmm_spec.h"
#include "simulate/memory_account.h"
#include "simulate/simulated_memory.h"
#include "simulate/trace_sizes.h"

namespace tailor::simulate {

/// Size classes on the simulator's arena.
using SizeClasses = dmm::SizeClasses<HeapArena>;

/// Classes with the given upper bounds (+ an open last class); throws
/// std::invalid_argument for bounds dmm::SizeClasses rejects.
SizeClasses make_classes(const std::vector<std::uint64_t>& bounds, bool open_last);
/// (0, 2^first], ..., (2^(last-1), 2^last] (+ (2^last, inf) if open).
SizeClasses powers_of_two_classes(unsigned first_log2, unsigned last_log2, bool open_last);
/// S10's classes (segregated_lists.h).
SizeClasses s10_classes();
/// EXA's classes for the sizes a trace requests (sizes_of).
SizeClasses exa_classes(const std::vector<std::uint64_t>& sizes);

/// The memory of a Dmm: the sum of its allocators' memories.
class DmmMemory final : public MemoryAccount {
 public:
  std::uint64_t held() const noexcept override { return held_; }
  std::uint64_t held_high_water() const noexcept override { return high_water_; }
  std::uint64_t reads() const noexcept override;
  std::uint64_t writes() const noexcept override;
  std::uint64_t system_requests() const noexcept override;
  /// Sums over the allocators' memories (simulated_memory.h).
  std::uint64_t page_bytes() const noexcept;
  std::size_t state_bytes() const noexcept;
  std::uint64_t pages_gained() const noexcept;
  std::uint64_t purges() const noexcept;
  std::uint64_t zeroed_bytes() const noexcept;
  std::uint64_t line_misses() const noexcept;
  bool holds(Address address, std::uint64_t bytes) const noexcept override;
  std::vector<Region> held_regions() const override;

 private:
  friend class Dmm;
  template <class R>
  R sum(R (SimulatedMemory::*counter)() const noexcept) const noexcept;
  std::vector<std::unique_ptr<SimulatedMemory>> parts_;
  std::uint64_t held_ = 0, high_water_ = 0;
};

class Dmm {
 public:
  static constexpr std::uint64_t kMinAlignment = 8;

  /// Builds the DMM of `spec`; `exact_sizes` (sizes_of(trace.operations),
  /// or the sizes the spec carries) gives the classes of "exact" allocators.
  /// Throws SpecError if a part cannot be built (a mechanism rejecting its
  /// configuration), naming `origin` and the allocator.
  Dmm(const DmmSpec& spec, const std::vector<std::uint64_t>& exact_sizes, const std::string& origin = "spec");

  /// Address 0 when no allocator can serve the request (the simulation loop
  /// reports it).
  Block allocate(std::uint64_t bytes, std::uint64_t alignment = 0) {
    const std::size_t i = dmm_.part_for(routing_size(bytes, alignment));
    const std::uint64_t before = memory_.parts_[i]->held();
    const Block b = dmm_.allocate(i, bytes, alignment);
    account(i, before);
    return b;
  }

  std::uint64_t release(Address address) {
    const std::size_t i = (address >> 40) - 1;
    const std::uint64_t before = memory_.parts_[i]->held();
    const std::uint64_t bytes = dmm_.release(i, address);
    account(i, before);
    return bytes;
  }

  /// The allocator of an address, and of a request of `bytes` (no alignment).
  std::size_t part_of(Address address) const noexcept { return (address >> 40) - 1; }
  std::size_t part_for(std::uint64_t bytes) const noexcept { return dmm_.part_for(bytes); }
  /// Whether allocator i may split, coalesce or give back free blocks.
  bool merges(std::size_t i) const noexcept { return dmm_.merges(i); }
  /// malloc_usable_size of a block (reads counted), and the same uncounted
  /// (the simulator's bookkeeping, which a real run does not do).
  std::uint64_t usable(Address address) { return dmm_.usable(part_of(address), address); }
  std::uint64_t usable_uncounted(Address address) {
    SimulatedMemory& m = *memory_.parts_[part_of(address)];
    const std::uint64_t before = m.reads();
    const std::uint64_t n = usable(address);
    m.discount_reads(m.reads() - before);
    return n;
  }
  /// A word of a block, through its allocator's memory (a front's links).
  std::uint64_t load(Address address) { return memory_.parts_[part_of(address)]->load(address); }
  void store(Address address, std::uint64_t value) { memory_.parts_[part_of(address)]->store(address, value); }
  /// The program's first write to a block (simulated_memory.h, touch).
  void touch(Address address) { memory_.parts_[part_of(address)]->touch(address); }

  std::uint64_t steps() const noexcept;
  /// Adds each allocator's steps to its mechanism's kind.
  void steps_by_kind(std::array<std::uint64_t, dmm::kMechanismKinds>& out) const noexcept;
  std::uint64_t splits() const noexcept;
  std::uint64_t coalesces() const noexcept;
  std::uint64_t min_alignment() const noexcept;
  const DmmMemory& memory() const noexcept { return memory_; }
  std::size_t parts() const noexcept { return dmm_.parts(); }
  /// Bytes of the mechanisms' own state (what a real DMM keeps beside its heap).
  std::size_t state_bytes() const noexcept { return dmm_.state_bytes(); }
  /// Resident bytes now: the pages the held ranges touch, the memories' and
  /// the mechanisms' own state (what libtailor's DMM counts as os_bytes).
  std::uint64_t resident_bytes() const noexcept { return memory_.page_bytes() + memory_.state_bytes() + state_bytes(); }

  /// Size classes of an allocator of `spec` over range (min, max] (tests, docs).
  static SizeClasses classes_for(const AllocatorSpec& a, const std::vector<std::uint64_t>& exact_sizes);

 private:
  void account(std::size_t i, std::uint64_t before) noexcept {
    const std::uint64_t after = memory_.parts_[i]->held();
    memory_.held_ = memory_.held_ - before + after;
    if (memory_.held_ > memory_.high_water_) memory_.high_water_ = memory_.held_;
  }

  DmmMemory memory_;
  dmm::Composite<SimulatedMemory> dmm_;
};

static_assert(Allocator<Dmm>);

}  // namespace tailor::simulate
