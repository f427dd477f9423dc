// SPDX-License-Identifier: MIT
// One allocator on its share of a trace, and DMM metrics assembled from
// such runs (part_simulation.h).
#include "simulate/part_simulation.h"

#include <algorithm>
#include <queue>
#include <stdexcept>
#include <string>

#include "simulate/dmm.h"
#include "simulate/front_model.h"
#include "simulate/energy.h"
#include "simulate/simulated_memory.h"

namespace tailor::simulate {

namespace {

// One allocator of a DMM, alone on its memory, as the front model sees it
// (front_model.h).
struct OnePart {
  static constexpr std::uint64_t kMinAlignment = 8;
  dmm::Composite<SimulatedMemory>& d;
  SimulatedMemory& memory;
  Block allocate(std::uint64_t bytes, std::uint64_t alignment) { return d.allocate(0, bytes, alignment); }
  std::uint64_t release(Address address) { return d.release(0, address); }
  std::uint64_t usable(Address address) { return d.usable(0, address); }
  std::uint64_t usable_uncounted(Address) { return 0; }  // a block's bytes: not needed here
  std::uint64_t load(Address address) { return memory.load(address); }
  void store(Address address, std::uint64_t value) { memory.store(address, value); }
  void touch(Address address) { memory.touch(address); }
  std::size_t part_of(Address) const noexcept { return 0; }
  std::uint64_t steps() const { return d.steps(0); }
  std::uint64_t splits() const { return d.splits(0); }
  std::uint64_t coalesces() const { return d.coalesces(0); }
  std::uint64_t resident_bytes() const { return 0; }  // the loop below takes it
};

}  // namespace

std::optional<PartResult> simulate_part(const ReplayTrace& trace, const AllocatorSpec& a, const std::vector<std::uint64_t>& trace_sizes,
                                        PartLimits limits, unsigned front) {
  // An address space like the DMM's (a multiple of 2^40): the same addresses
  // modulo 2^40, so the same choices (treap priorities, alignment).
  SimulatedMemory memory(Address{1} << 40, SimulatedMemory::kSpan);
  const DmmSpec one{"", {a}, {}};
  const SpecViewHolder view(one, trace_sizes);
  dmm::Composite<SimulatedMemory> dmm;
  SimulatedMemory* memories[] = {&memory};
  std::size_t failed = 0;
  if (const char* why = dmm.build(view.view(), memories, failed)) throw SpecError("spec", "allocator", why);
  OnePart one_part{dmm, memory};
  const std::uint64_t lo = a.min, hi = a.max ? *a.max : UINT64_MAX;
  // The whole DMM's front as this allocator sees it: the bins whose every
  // request size is routed here (dmm/front.h).
  FrontSettings settings;
  settings.limit = front;
  dmm::Front::owners(settings.owner, [&](std::uint64_t bytes) { return std::size_t{bytes > lo && bytes <= hi ? 0u : 1u}; });
  dmm::Front::limits(settings.limits, settings.owner, front, [&](std::size_t) { return dmm.merges(0); });
  Fronted<OnePart> fronted(one_part, settings);

  std::vector<Address> live(trace.summary.max_live_blocks);
  // As the whole DMM counts it (dmm.h): pages, the memory's and the allocator's state.
  auto resident = [&] { return memory.page_bytes() + memory.state_bytes() + dmm.state_bytes(0); };
  const Operation* ops = trace.operations.data();
  const std::uint64_t* sizes = trace.sizes.data();
  // Whether each distinct size without alignment is this allocator's: one
  // byte per size instead of a routing size per operation.
  std::vector<std::uint8_t> mine(trace.sizes.size());
  auto in_range = [&](std::uint64_t bytes, std::uint64_t alignment) {
    const std::uint64_t size = std::max<std::uint64_t>(dmm::routing_size(bytes, alignment), 1);
    return size > lo && size <= hi;
  };
  for (std::size_t k = 0; k < mine.size(); ++k) mine[k] = in_range(sizes[k], 0);

  auto loop = [&](auto& part) -> std::optional<PartResult> {
    PartResult r;
    r.base_resident = resident();
    std::uint64_t held = 0, simulated = 0;
    for (std::size_t i = 0; i < trace.operations.size(); ++i) {
      const Operation op = ops[i];
      if (op.align_log2() == 0 ? !mine[op.size()] : !in_range(sizes[op.size()], op.alignment())) continue;
      if (op.kind() == Operation::kAllocate) {
        const std::uint64_t bytes = sizes[op.size()];
        live[op.block] = part.allocate(bytes, op.alignment()).address;
        if (live[op.block] == 0) [[unlikely]]
          throw std::length_error("allocator " + std::string(to_string(a.mechanism)) + " cannot serve a request of " +
                                  std::to_string(bytes) + " bytes");
        part.touch(live[op.block]);
      } else
        part.release(live[op.block]);
      if (memory.held() != held) [[unlikely]] {
        held = memory.held();
        r.changes.push_back({i, held, resident()});
        if (r.changes.back().resident > limits.resident) return std::nullopt;
      }
      // Checked every 64 operations of this allocator: one operation can cost as
      // many steps as a free list is long.
      if ((++simulated & 63) == 0 && part.steps() > limits.steps) [[unlikely]]
        return std::nullopt;
    }
    if (part.steps() > limits.steps || r.base_resident > limits.resident) return std::nullopt;
    r.steps = part.steps();
    r.kind = static_cast<std::uint8_t>(dmm.kind(0));
    r.splits = part.splits();
    r.coalesces = part.coalesces();
    if constexpr (requires { part.counters(); }) {
      r.front_hits = part.counters().hits;
      r.front_misses = part.counters().misses;
      r.front_kept = part.counters().kept;
      r.front_passed = part.counters().passed;
    }
    r.reads = memory.reads();
    r.writes = memory.writes();
    r.system_requests = memory.system_requests();
    r.pages_gained = memory.pages_gained();
    r.purges = memory.purges();
    r.zeroed_bytes = memory.zeroed_bytes();
    r.line_misses = memory.line_misses();
    return r;
  };
  return front > 0 ? loop(fronted) : loop(one_part);
}

Metrics combine_parts(const std::vector<const PartResult*>& parts, const ReplayTrace& trace) {
  Metrics m;
  m.operations = trace.operations.size();
  m.max_in_use = trace.summary.max_in_use_bytes;
  for (const PartResult* p : parts) {
    m.steps += p->steps;
    m.steps_by_kind[p->kind < dmm::kMechanismKinds ? p->kind : dmm::kMechanismKinds - 1] += p->steps;
    m.reads += p->reads;
    m.writes += p->writes;
    m.splits += p->splits;
    m.coalesces += p->coalesces;
    m.system_requests += p->system_requests;
    m.pages_gained += p->pages_gained;
    m.purges += p->purges;
    m.zeroed_bytes += p->zeroed_bytes;
    m.line_misses += p->line_misses;
    m.front_hits += p->front_hits;
    m.front_misses += p->front_misses;
    m.front_kept += p->front_kept;
    m.front_passed += p->front_passed;
  }
  // The peaks of the summed held and resident bytes: merge the parts'
  // changes by operation; the sums are taken after all the changes of one
  // operation (one part each).
  std::vector<PartResult::Change> current(parts.size());
  std::vector<std::size_t> next(parts.size(), 0);
  using Item = std::pair<std::uint64_t, std::size_t>;  // (operation, part)
  std::priority_queue<Item, std::vector<Item>, std::greater<>> queue;
  std::uint64_t held = 0, resident = 0;
  for (std::size_t k = 0; k < parts.size(); ++k) {
    current[k].resident = parts[k]->base_resident;
    resident += parts[k]->base_resident;
    if (!parts[k]->changes.empty()) queue.emplace(parts[k]->changes[0].operation, k);
  }
  m.memory_usage = resident;
  while (!queue.empty()) {
    const auto [op, k] = queue.top();
    queue.pop();
    const PartResult::Change& change = parts[k]->changes[next[k]++];
    held = held - current[k].held + change.held;
    resident = resident - current[k].resident + change.resident;
    current[k] = change;
    if (held > m.held_usage) m.held_usage = held, m.peak_operation = op;
    if (resident > m.memory_usage) m.memory_usage = resident;
    if (next[k] < parts[k]->changes.size()) queue.emplace(parts[k]->changes[next[k]].operation, k);
  }
  m.energy_nj = EnergyModel::energy_nj(m.steps, m.reads + m.writes, m.memory_usage);
  return m;
}

}  // namespace tailor::simulate
