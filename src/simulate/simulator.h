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

#include "dmm_names.h"
#include "checker.h"
#include "dmm_spec.h"
#include "energy.h"
#include "heap_snapshot.h"
#include "metrics.h"
#include "replay_trace.h"
#include "simulated_memory.h"

namespace tailor::simulate {

struct SimulateOptions {
  /// Operations between two samples of the time series; 0: about kDefaultSamples samples.
  std::uint64_t sample_every = 0;
  static constexpr std::uint64_t kDefaultSamples = 1000;
  /// Run the Checker after every operation (slower; throws CheckError).
  bool check = false;
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

namespace detail {

/// Throws std::length_error: the allocator cannot serve a request.
[[noreturn]] void unservable(std::uint64_t bytes, std::uint64_t alignment);

struct NoCheck {
  void allocated(std::uint64_t, std::uint64_t, std::uint64_t, const Block&) {}
  void released(std::uint64_t, Address, std::uint64_t, std::uint64_t) {}
  void after(std::uint64_t, std::uint64_t) {}
  void finish() {}
};

template <Allocator A, class Mem, class Observer>
Metrics run(A& allocator, const Mem& memory, const ReplayTrace& trace, const SimulateOptions& options,
            Observer& observer) {
  struct Live {
    Address address;
    std::uint64_t block_bytes;
    std::uint64_t requested;
  };
  std::vector<Live> live(trace.summary.max_live_blocks);
  const Operation* ops = trace.operations.data();
  const std::uint64_t* sizes = trace.sizes.data();
  const std::uint64_t n = trace.operations.size();
  const std::uint64_t every =
      options.sample_every ? options.sample_every : std::max<std::uint64_t>(1, n / SimulateOptions::kDefaultSamples);

  Metrics m;
  m.operations = n;
  m.max_in_use = trace.summary.max_in_use_bytes;
  m.series.reserve(n / every + 2);
  std::uint64_t requested = 0, block_bytes = 0, peak = 0, next_sample = every - 1;

  const auto start = std::chrono::steady_clock::now();
  for (std::uint64_t done = 0; done < n;) {
    const std::uint64_t stop = std::min(n, done + SimulateOptions::kProgressEvery);
    for (std::uint64_t i = done; i < stop; ++i) {
      const Operation op = ops[i];
      Live& b = live[op.block];
      if (op.kind() == Operation::kAllocate) {
        const std::uint64_t bytes = sizes[op.size()];
        const Block got = allocator.allocate(bytes, op.alignment());
        if (got.address == 0) [[unlikely]]
          unservable(bytes, op.alignment());
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
    done = stop;
    if (options.progress) options.progress(done, n);
  }
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (n && (m.series.empty() || m.series.back().operation != n - 1))
    m.series.push_back({n - 1, requested, block_bytes, memory.held()});
  observer.finish();

  m.steps = allocator.steps();
  m.reads = memory.reads();
  m.writes = memory.writes();
  m.system_requests = memory.system_requests();
  if constexpr (requires { allocator.splits(); }) m.splits = allocator.splits();
  if constexpr (requires { allocator.coalesces(); }) m.coalesces = allocator.coalesces();
  m.memory_usage = memory.held_high_water();
  m.internal_fragmentation = m.block_bytes_at_peak - m.requested_at_peak;
  m.external_fragmentation = m.memory_usage - m.block_bytes_at_peak;
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
    return detail::run(allocator, memory, trace, options, checker);
  }
  if (!options.snapshots_at.empty()) {
    SnapshotTaker taker(trace, memory, options.snapshots_at);
    Metrics m = detail::run(allocator, memory, trace, options, taker);
    m.snapshots = std::move(taker).snapshots();
    return m;
  }
  detail::NoCheck none;
  return detail::run(allocator, memory, trace, options, none);
}

}  // namespace tailor::simulate
