// SPDX-License-Identifier: MIT
// One object in k of a replay (replay_sample.h).
#include "simulate/replay_sample.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "util/random.h"

namespace tailor::simulate {

namespace {

constexpr std::uint64_t mix(std::uint64_t x) noexcept { return util::splitmix64(x); }

}  // namespace

std::uint32_t sampling_rate(const ReplayTrace& trace, std::uint64_t max_operations) {
  if (max_operations == 0) throw std::invalid_argument("sampling_rate: max_operations must be positive");
  const std::uint64_t ops = trace.operations.size();
  return static_cast<std::uint32_t>(std::min<std::uint64_t>((ops + max_operations - 1) / max_operations, UINT32_MAX));
}

ReplayTrace sample_objects(const ReplayTrace& trace, std::uint32_t one_in) {
  if (one_in == 0) throw std::invalid_argument("sample_objects: one_in must be positive");
  ReplayTrace s;
  s.summary.page_size = trace.summary.page_size;
  s.sizes = trace.sizes;  // the same indices
  s.operations.reserve(trace.operations.size() / one_in + 16);
  constexpr std::uint32_t kDropped = UINT32_MAX;
  std::vector<std::uint32_t> id_of(trace.summary.max_live_blocks, kDropped);  // whole trace's id -> sample's
  std::vector<std::uint64_t> bytes_of;                                        // live bytes by sample id
  std::vector<std::uint32_t> free_ids;
  std::uint64_t ordinal = 0, in_use = 0, live = 0, offset = UINT64_MAX;
  std::size_t next_offset = 0;        // the whole trace's event_offsets, walked along (event_of without a search)
  std::uint64_t trace_offset = 0;     // event - operation in the whole trace at operation i
  for (std::uint64_t i = 0; i < trace.operations.size(); ++i) {
    while (next_offset < trace.event_offsets.size() && trace.event_offsets[next_offset].first <= i)
      trace_offset = trace.event_offsets[next_offset++].second;
    Operation op = trace.operations[i];
    if (op.block >= id_of.size()) id_of.resize(op.block + 1, kDropped);
    if (op.kind() == Operation::kAllocate) {
      if (mix(ordinal++) % one_in != 0) {
        id_of[op.block] = kDropped;
        continue;
      }
      std::uint32_t id;
      if (!free_ids.empty()) {
        id = free_ids.back();
        free_ids.pop_back();
      } else {
        id = static_cast<std::uint32_t>(bytes_of.size());
        bytes_of.push_back(0);
      }
      id_of[op.block] = id;
      bytes_of[id] = trace.bytes(op);
      in_use += trace.bytes(op);
      ++live;
      ++s.summary.allocations;
      s.summary.max_in_use_bytes = std::max(s.summary.max_in_use_bytes, in_use);
      op.block = id;
    } else {
      const std::uint32_t id = id_of[op.block];
      if (id == kDropped) continue;
      id_of[op.block] = kDropped;
      in_use -= bytes_of[id];
      --live;
      free_ids.push_back(id);
      ++s.summary.releases;
      op.block = id;
    }
    const std::uint64_t index = s.operations.size();
    const std::uint64_t event_offset = i + trace_offset - index;  // wraps like ReplayBuilder's; exact modulo 2^64
    if (event_offset != offset) {
      s.event_offsets.emplace_back(index, event_offset);
      offset = event_offset;
    }
    s.operations.push_back(op);
  }
  s.summary.events = s.operations.size();
  s.summary.max_live_blocks = bytes_of.size();
  s.summary.live_blocks_at_end = live;
  return s;
}

ReplayTrace prefix(const ReplayTrace& trace, std::uint64_t operations) {
  ReplayTrace p;
  const std::uint64_t n = std::min<std::uint64_t>(operations, trace.operations.size());
  p.operations.assign(trace.operations.begin(), trace.operations.begin() + static_cast<std::ptrdiff_t>(n));
  p.sizes = trace.sizes;
  for (const auto& entry : trace.event_offsets)
    if (entry.first < n) p.event_offsets.push_back(entry);
  p.summary.page_size = trace.summary.page_size;
  // Every release in the prefix is of a block allocated in it, and carries its size.
  std::uint64_t in_use = 0, now_live = 0;
  std::uint32_t ids = 0;
  for (const Operation& op : p.operations) {
    if (op.kind() == Operation::kAllocate) {
      in_use += p.bytes(op);
      ++now_live;
      ++p.summary.allocations;
      ids = std::max(ids, op.block + 1);
      p.summary.max_in_use_bytes = std::max(p.summary.max_in_use_bytes, in_use);
    } else {
      in_use -= p.bytes(op);
      --now_live;
      ++p.summary.releases;
    }
  }
  p.summary.events = n == 0 ? 0 : p.event_of(n - 1) + 1;
  p.summary.max_live_blocks = ids;
  p.summary.live_blocks_at_end = now_live;
  return p;
}

}  // namespace tailor::simulate
