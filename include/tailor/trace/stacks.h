// SPDX-License-Identifier: MIT
// Whole call stacks in a trace (`tailor record --stacks`): a tree of frames,
// each node one return address under its caller's node, stored once in the
// trace however many events share it (heaptrack keeps its stacks the same
// way). An event's stack is its innermost node; the outermost frames hang
// from the root, node 0, which is "no stack".
//
// A recorder numbers nodes as it meets them (per thread, from one counter
// for the process) and writes each node before the first event that uses
// it (Writer::write_stacks); the reader merges nodes of equal path (threads
// that reached the same code) into one and numbers them densely from 1.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tailor::trace {

/// One node as a writer hands it over: `id` (from 1, unique in the trace),
/// its caller's node `parent` (0 for an outermost frame, else an id written
/// before), and the frame's return address.
struct StackNode {
  std::uint32_t id = 0;
  std::uint32_t parent = 0;
  std::uint64_t address = 0;
  friend bool operator==(const StackNode&, const StackNode&) = default;
};

/// The stacks of a trace as the reader hands them out (Reader::stacks()).
/// Ids are dense, 1..size(); Event::stack names one (0: the event has none).
class StackTable {
 public:
  /// Nodes, the root excluded.
  std::size_t size() const noexcept { return parent_.size() - 1; }
  bool empty() const noexcept { return size() == 0; }
  /// The caller's node (0 for an outermost frame). `id` in 1..size().
  std::uint32_t parent(std::uint32_t id) const noexcept { return parent_[id]; }
  /// The return address of node `id`'s frame (symbolize address - 1).
  std::uint64_t address(std::uint32_t id) const noexcept { return address_[id]; }
  /// Frames from `id` up to the outermost: innermost first.
  std::vector<std::uint64_t> frames(std::uint32_t id) const;
  /// Frames of `id` (its depth).
  std::size_t depth(std::uint32_t id) const noexcept;

  /// The node for `address` under `parent`, made if new (reader use).
  std::uint32_t intern(std::uint32_t parent, std::uint64_t address);

 private:
  std::vector<std::uint32_t> parent_{0};
  std::vector<std::uint64_t> address_{0};
  std::vector<std::uint32_t> slots_;  // open addressing over (parent, address) -> id; 0 empty
};

}  // namespace tailor::trace
