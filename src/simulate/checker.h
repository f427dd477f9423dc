// SPDX-License-Identifier: MIT
// The checker: during a checked simulation it verifies, after every
// operation, the guarantees any allocator owes the program:
//  - no two live blocks overlap (a block is [address, address + max(requested, 1)):
//    a 0-byte request still gets a unique pointer);
//  - every block lies inside one region obtained from the system and not returned;
//  - the block serving a request has at least the requested bytes;
//  - every block is aligned to the alignment the call asked for, and at least
//    to the allocator's minimum alignment (16 for KNG, what glibc guarantees on
//    x86-64), and to 16 when the size is a multiple of 16 (it may hold a
//    16-aligned type: sizeof is a multiple of alignof);
//  - a release returns the bytes the allocation said the block had;
//  - bytes held from the system are never below the requested bytes in use,
//    so the high-water mark is never below the trace's max in-use bytes.
// A failed check throws CheckError naming the trace event (and operation).
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>

#include "simulate/dmm_names.h"
#include "simulate/replay_trace.h"
#include "simulate/memory_account.h"

namespace tailor::simulate {

class CheckError : public std::runtime_error {
 public:
  CheckError(std::uint64_t event, std::uint64_t operation, const std::string& what);
  std::uint64_t event() const noexcept { return event_; }
  std::uint64_t operation() const noexcept { return operation_; }

 private:
  std::uint64_t event_, operation_;
};

class Checker {
 public:
  Checker(const ReplayTrace& trace, const MemoryAccount& memory, std::uint64_t min_alignment);

  void allocated(std::uint64_t operation, std::uint64_t requested, std::uint64_t alignment, const Block& block);
  void released(std::uint64_t operation, Address address, std::uint64_t block_bytes, std::uint64_t released_bytes);
  void after(std::uint64_t operation, std::uint64_t requested_in_use);
  /// At the end of the run: the high-water mark against the trace's max in use.
  void finish();

 private:
  [[noreturn]] void fail(std::uint64_t operation, const std::string& what) const;

  const ReplayTrace& trace_;
  const MemoryAccount& memory_;
  std::uint64_t min_alignment_;
  std::map<Address, Address> live_;  // start -> end of each live block
};

}  // namespace tailor::simulate
