// SPDX-License-Identifier: MIT
// The checker's verifications; what they are and why is in checker.h.
#include "simulate/checker.h"

#include <algorithm>
#include <fmt/format.h>

namespace tailor::simulate {

CheckError::CheckError(std::uint64_t event, std::uint64_t operation, const std::string& what)
    : std::runtime_error(fmt::format("check failed at event {} (operation {}): {}", event, operation, what)),
      event_(event),
      operation_(operation) {}

Checker::Checker(const ReplayTrace& trace, const MemoryAccount& memory, std::uint64_t min_alignment)
    : trace_(trace), memory_(memory), min_alignment_(min_alignment) {}

void Checker::fail(std::uint64_t operation, const std::string& what) const {
  throw CheckError(trace_.event_of(operation), operation, what);
}

void Checker::allocated(std::uint64_t operation, std::uint64_t requested, std::uint64_t alignment,
                        const Block& block) {
  const Address start = block.address;
  const std::uint64_t length = std::max<std::uint64_t>(requested, 1);
  const Address end = start + length;
  if (block.bytes < requested)
    fail(operation, fmt::format("a block of {} bytes serves a request of {} bytes", block.bytes, requested));
  std::uint64_t align = std::max(alignment, min_alignment_);
  if (requested != 0 && requested % 16 == 0) align = std::max<std::uint64_t>(align, 16);  // may hold a 16-aligned type
  if (start % align != 0)
    fail(operation, fmt::format("block at {:#x} is not aligned to {} bytes", start, align));
  if (end < start || !memory_.holds(start, length))
    fail(operation, fmt::format("block [{:#x}, {:#x}) is not inside memory obtained from the system", start, end));
  auto next = live_.lower_bound(start);
  if (next != live_.end() && next->first < end)
    fail(operation, fmt::format("block [{:#x}, {:#x}) overlaps the live block [{:#x}, {:#x})", start, end, next->first,
                                next->second));
  if (next != live_.begin()) {
    auto prev = std::prev(next);
    if (prev->second > start)
      fail(operation, fmt::format("block [{:#x}, {:#x}) overlaps the live block [{:#x}, {:#x})", start, end,
                                  prev->first, prev->second));
  }
  live_.emplace_hint(next, start, end);
}

void Checker::released(std::uint64_t operation, Address address, std::uint64_t block_bytes,
                       std::uint64_t released_bytes) {
  auto it = live_.find(address);
  if (it == live_.end()) fail(operation, fmt::format("release of {:#x}, which is not a live block", address));
  live_.erase(it);
  if (block_bytes != released_bytes)
    fail(operation, fmt::format("the block at {:#x} was allocated with {} bytes but released {} bytes", address,
                                block_bytes, released_bytes));
}

void Checker::after(std::uint64_t operation, std::uint64_t requested_in_use) {
  if (memory_.held() < requested_in_use)
    fail(operation, fmt::format("{} bytes held from the system, below the {} bytes in use", memory_.held(),
                                requested_in_use));
}

void Checker::finish() {
  if (memory_.held_high_water() < trace_.summary.max_in_use_bytes)
    throw CheckError(trace_.summary.events, trace_.operations.size(),
                     fmt::format("high-water mark {} bytes is below the trace's max in use {} bytes",
                                 memory_.held_high_water(), trace_.summary.max_in_use_bytes));
}

}  // namespace tailor::simulate
