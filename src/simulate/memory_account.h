// SPDX-License-Identifier: MIT
// MemoryAccount: what the simulation loop (simulator.h) and the checker
// (checker.h) read of the memory a DMM manages: bytes held from the system
// and their high-water mark, metadata accesses, system requests, and whether
// a range lies inside held memory. SimulatedMemory is one; a composed DMM
// (dmm.h) sums its allocators' memories into another.
#pragma once

#include <cstdint>
#include <vector>

#include "simulate/dmm_names.h"

namespace tailor::simulate {

/// A region obtained from the system: [start, start + bytes).
struct Region {
  Address start = 0;
  std::uint64_t bytes = 0;
};

class MemoryAccount {
 public:
  virtual std::uint64_t held() const noexcept = 0;
  virtual std::uint64_t held_high_water() const noexcept = 0;
  virtual std::uint64_t reads() const noexcept = 0;
  virtual std::uint64_t writes() const noexcept = 0;
  virtual std::uint64_t system_requests() const noexcept = 0;
  /// True if [address, address + bytes) lies inside one held region.
  virtual bool holds(Address address, std::uint64_t bytes) const noexcept = 0;
  /// The regions held now, in increasing address order (for heap snapshots:
  /// a copy, not for the simulation loop).
  virtual std::vector<Region> held_regions() const = 0;

 protected:
  ~MemoryAccount() = default;
};

}  // namespace tailor::simulate
