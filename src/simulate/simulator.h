// SPDX-License-Identifier: MIT
// The simulator: runs a ReplayTrace through an allocator on SimulatedMemory,
// one tight loop over the operation array per run (the allocator's calls are
// inlined: the loop is a template per allocator), and fills Metrics
// (metrics.h, defined in docs/dmm.md). A checked run adds the Checker's
// verifications after every operation. simulate() picks a built-in DMM by name.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "dmm/composite.h"
#include "dmm/front.h"
#include "simulate/dmm_names.h"
#include "simulate/checker.h"
#include "simulate/dmm_spec.h"
#include "simulate/energy.h"
#include "simulate/heap_snapshot.h"
#include "simulate/metrics.h"
#include "simulate/replay_stream.h"
#include "simulate/replay_trace.h"
#include "simulate/simulated_memory.h"

namespace tailor::simulate {

struct SimulateOptions {
  /// Operations between two samples of the time series; 0: about kDefaultSamples samples.
  std::uint64_t sample_every = 0;
  static constexpr std::uint64_t kDefaultSamples = 1000;
  /// Run the Checker after every operation (slower; throws CheckError).
  bool check = false;
  /// Blocks per bin of the front of free blocks (dmm/front.h) libtailor
  /// puts in front of a DMM run for real, modelled here the same way; 0: none.
  unsigned front = dmm::Front::kDefaultLimit;
  /// Operations after which to take a heap snapshot (heap_snapshot.h) into
  /// Metrics::snapshots; not with `check`.
  std::vector<std::uint64_t> snapshots_at;
  /// Called with (operations done, total) every kProgressEvery operations.
  std::function<void(std::uint64_t, std::uint64_t)> progress;
  static constexpr std::uint64_t kProgressEvery = std::uint64_t{1} << 22;
};

/// Simulates the DMM of `spec` (dmm.h) on `trace`. Throws SpecError if the
/// spec does not cover the trace's sizes or a part cannot be built.
Metrics simulate(const ReplayTrace& trace, const DmmSpec& spec, const SimulateOptions& options = {},
                 const std::string& origin = "spec");

/// Names of the built-in DMMs simulate() knows ("kng").
const std::vector<std::string>& known_dmms();

/// Simulates the built-in DMM `name` on `trace`. Throws std::invalid_argument
/// naming the known DMMs for an unknown name, CheckError if a check fails.
Metrics simulate(const ReplayTrace& trace, std::string_view name, const SimulateOptions& options = {});

/// Whether the built-in DMM `name` can simulate a trace while it loads (it
/// needs no knowledge of the whole trace before its first operation).
bool streams(std::string_view name);

/// Simulates the built-in DMM `name` (one that streams()) on a trace as it
/// loads; the same Metrics as simulate() on the finished trace, but for the
/// time series' sampling interval (from the trace's event count).
Metrics simulate(ReplayStream& stream, std::string_view name, const SimulateOptions& options = {});

namespace detail {

/// Throws std::length_error: the allocator cannot serve a request.
[[noreturn]] void unservable(std::uint64_t bytes, std::uint64_t alignment);

/// Resident bytes of an allocator on its memory now: the pages its held
/// ranges touch, the memory's own state and the allocator's (a built-in
/// counted as libtailor runs it: one allocator of a composition).
template <class A, class Mem>
std::uint64_t resident_bytes(const A& allocator, const Mem& memory) {
  if constexpr (requires { allocator.resident_bytes(); })
    return allocator.resident_bytes();
  else if constexpr (requires { memory.page_bytes(); })
    return memory.page_bytes() + memory.state_bytes() + dmm::Composite<SimulatedMemory>::state_of(allocator);
  else
    return memory.held();
}

struct NoCheck {
  void allocated(std::uint64_t, std::uint64_t, std::uint64_t, const Block&) {}
  void released(std::uint64_t, Address, std::uint64_t, std::uint64_t) {}
  void after(std::uint64_t, std::uint64_t) {}
  void finish() {}
};

/// The operations of a finished trace, as one batch.
struct WholeTrace {
  const ReplayTrace& trace;
  ReplayStream::View acquire(std::uint64_t from) const noexcept {
    return {.ops = trace.operations.data(),
            .sizes = trace.sizes.data(),
            .available = trace.operations.size(),
            .max_live = trace.summary.max_live_blocks,
            .done = from >= trace.operations.size()};
  }
  void release() const noexcept {}
  std::uint64_t expected_operations() const noexcept { return trace.operations.size(); }
  const ReplaySummary& summary() const noexcept { return trace.summary; }
};

/// The operations of a trace still being loaded, in batches as they come
/// (replay_stream.h).
struct StreamedTrace {
  ReplayStream::Feed& feed;
  ReplayStream::View acquire(std::uint64_t from) { return feed.acquire(from); }
  void release() { feed.release(); }
  std::uint64_t expected_operations() const noexcept { return feed.stream().expected_operations(); }
  const ReplaySummary& summary() const noexcept { return feed.stream().summary(); }
};

/// The loop: every operation the feed gives, in batches of at most
/// kProgressEvery. Metrics::seconds counts the batches' work, not the waits
/// for a streamed trace's next operations.
template <Allocator A, class Mem, class Feed, class Observer>
Metrics run(A& allocator, const Mem& memory, Feed& feed, const SimulateOptions& options, Observer& observer) {
  struct Live {
    Address address;
    std::uint64_t block_bytes;
    std::uint64_t requested;
  };
  std::vector<Live> live;
  const std::uint64_t expected = feed.expected_operations();
  const std::uint64_t every = options.sample_every ? options.sample_every
                                                   : std::max<std::uint64_t>(1, expected / SimulateOptions::kDefaultSamples);

  Metrics m;
  m.series.reserve(expected / every + 2);
  std::uint64_t requested = 0, block_bytes = 0, peak = 0, next_sample = every - 1;
  // Resident bytes change only with the bytes held (a system request): taken then.
  std::uint64_t last_held = memory.held(), resident_peak = resident_bytes(allocator, memory);
  std::chrono::steady_clock::duration working{};

  std::uint64_t done = 0;
  for (bool more = true; more;) {
    const ReplayStream::View v = feed.acquire(done);
    struct Held {  // the feed's arrays stay in place until the batch is done, or left by an exception
      Feed& feed;
      ~Held() { feed.release(); }
    } held{feed};
    if (done >= v.available) {
      more = !v.done;
      continue;
    }
    const auto start = std::chrono::steady_clock::now();
    if (live.size() < v.max_live) live.resize(v.max_live);
    const Operation* ops = v.ops;
    const std::uint64_t* sizes = v.sizes;
    const std::uint64_t stop = std::min(v.available, done + std::min(v.batch, SimulateOptions::kProgressEvery));
    const std::uint64_t mask = v.mask;
    for (std::uint64_t i = done; i < stop; ++i) {
      const Operation op = ops[i & mask];
      Live& b = live[op.block];
      if (op.kind() == Operation::kAllocate) {
        const std::uint64_t bytes = sizes[op.size()];
        const Block got = allocator.allocate(bytes, op.alignment());
        if (got.address == 0) [[unlikely]]
          unservable(bytes, op.alignment());
        if constexpr (requires { allocator.touch(got.address); }) allocator.touch(got.address);
        b = {got.address, got.bytes, bytes};
        requested += bytes;
        block_bytes += got.bytes;
        observer.allocated(i, bytes, op.alignment(), got);
      } else {
        const std::uint64_t released = allocator.release(b.address);
        observer.released(i, b.address, b.block_bytes, released);
        requested -= b.requested;
        block_bytes -= b.block_bytes;
      }
      observer.after(i, requested);
      if (memory.held() != last_held) [[unlikely]] {
        last_held = memory.held();
        resident_peak = std::max(resident_peak, resident_bytes(allocator, memory));
      }
      if (memory.held() > peak) [[unlikely]] {
        peak = memory.held();
        m.peak_operation = i;
        m.requested_at_peak = requested;
        m.block_bytes_at_peak = block_bytes;
      }
      if (i == next_sample) [[unlikely]] {
        m.series.push_back({i, requested, block_bytes, memory.held()});
        next_sample += every;
      }
    }
    working += std::chrono::steady_clock::now() - start;
    done = stop;
    if (options.progress) options.progress(done, std::max(done, feed.expected_operations()));
  }
  const std::uint64_t n = done;
  m.operations = n;
  m.max_in_use = feed.summary().max_in_use_bytes;
  m.seconds = std::chrono::duration<double>(working).count();
  if (n && (m.series.empty() || m.series.back().operation != n - 1))
    m.series.push_back({n - 1, requested, block_bytes, memory.held()});
  observer.finish();

  m.steps = allocator.steps();
  if constexpr (requires { allocator.steps_by_kind(m.steps_by_kind); }) allocator.steps_by_kind(m.steps_by_kind);
  m.reads = memory.reads();
  m.writes = memory.writes();
  m.system_requests = memory.system_requests();
  if constexpr (requires { allocator.splits(); }) m.splits = allocator.splits();
  if constexpr (requires { allocator.coalesces(); }) m.coalesces = allocator.coalesces();
  m.held_usage = memory.held_high_water();
  m.memory_usage = resident_peak;
  if constexpr (requires { memory.pages_gained(); }) {
    m.pages_gained = memory.pages_gained();
    m.purges = memory.purges();
    m.zeroed_bytes = memory.zeroed_bytes();
    m.line_misses = memory.line_misses();
  }
  if constexpr (requires { allocator.counters(); }) {
    m.front_hits = allocator.counters().hits;
    m.front_misses = allocator.counters().misses;
    m.front_kept = allocator.counters().kept;
    m.front_passed = allocator.counters().passed;
  }
  m.internal_fragmentation = m.block_bytes_at_peak - m.requested_at_peak;
  m.external_fragmentation = m.held_usage - m.block_bytes_at_peak;
  m.energy_nj = EnergyModel::energy_nj(m.steps, m.reads + m.writes, m.memory_usage);
  return m;
}

}  // namespace detail

/// Runs `trace` through `allocator`, which manages `memory` (and only it).
/// Mem is a MemoryAccount; the loop calls it through its own type (a final
/// class: no virtual call per operation).
template <Allocator A, std::derived_from<MemoryAccount> Mem>
Metrics run(A& allocator, const Mem& memory, const ReplayTrace& trace, const SimulateOptions& options = {}) {
  if (options.check && !options.snapshots_at.empty())
    throw std::invalid_argument("a checked simulation takes no heap snapshots");
  if (options.check) {
    std::uint64_t min_alignment = A::kMinAlignment;
    if constexpr (requires { allocator.min_alignment(); }) min_alignment = allocator.min_alignment();
    Checker checker(trace, memory, min_alignment);
    detail::WholeTrace whole{trace};
    return detail::run(allocator, memory, whole, options, checker);
  }
  if (!options.snapshots_at.empty()) {
    SnapshotTaker taker(trace, memory, options.snapshots_at);
    detail::WholeTrace whole{trace};
    Metrics m = detail::run(allocator, memory, whole, options, taker);
    m.snapshots = std::move(taker).snapshots();
    return m;
  }
  detail::NoCheck none;
  detail::WholeTrace whole{trace};
  return detail::run(allocator, memory, whole, options, none);
}

/// Runs a trace still being loaded through `allocator` (no checks, no
/// snapshots: those need the whole trace).
template <Allocator A, std::derived_from<MemoryAccount> Mem>
Metrics run(A& allocator, const Mem& memory, ReplayStream::Feed& feed, const SimulateOptions& options = {}) {
  if (options.check || !options.snapshots_at.empty())
    throw std::invalid_argument("a simulation of a trace still loading takes no checks or snapshots");
  detail::NoCheck none;
  detail::StreamedTrace streamed{feed};
  return detail::run(allocator, memory, streamed, options, none);
}

}  // namespace tailor::simulate
