// SPDX-License-Identifier: MIT
// The statistics of one trace: the DMM simulator paper's Table 2 (objects, total bytes, peak
// bytes in use, average size, memory operations) and the breakdowns behind
// them (sizes, lifetimes, call sites, threads, realloc and aligned calls,
// anomalies). Exact: computed from every event, in time order.
//
// Accounting rules (also in docs/trace-format.md, "Statistics"):
//  - an object is a block handed out: a successful malloc, calloc, aligned
//    call, operator new, or realloc (a realloc ends the old block's life and
//    starts a new object, as an allocator sees it, even when done in place);
//  - bytes are requested bytes (calloc: count x size), never usable size;
//  - memory operations are calls into the allocation API, free(NULL) included.
//
// A sampled trace (`tailor record --sample`) gives estimates of the whole
// run instead (TraceStats::sampling, analyze/sampling.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "tailor/trace/reader.h"

namespace tailor::analyze {

struct Distribution {
  std::uint64_t count = 0;
  double mean = 0;
  std::uint64_t min = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
};

struct SizeShare {
  std::uint64_t size = 0;   ///< exact request size, or bucket upper bound
  std::uint64_t count = 0;
  std::uint64_t bytes = 0;
};

struct CallSiteStats {
  std::uint64_t address = 0;
  std::uint64_t calls = 0;     ///< allocations made from here
  std::uint64_t bytes = 0;
  std::uint64_t peak_live_bytes = 0;
  double bytes_error = 0;      ///< sampled traces: standard error of `bytes`
  std::string symbol;          ///< filled by symbolize()
  std::string function;        ///< filled by symbolize(): demangled name, or empty if unknown
  std::string module;          ///< filled by symbolize(): file name of the object, or empty if unknown
};

/// Blocks still live at the trace's end, by the call site that allocated
/// them (by the whole stack, in a trace recorded with stacks): what the
/// process never freed before it exited (or called exec, or aborted, or,
/// for a cut trace, before its last recorded event).
struct LeakSite {
  std::uint64_t address = 0;  ///< call site
  std::uint32_t stack = 0;    ///< whole stack (Reader::stacks()) of a trace recorded with them, else 0
  std::uint64_t blocks = 0;
  std::uint64_t bytes = 0;    ///< requested bytes of those blocks
  std::uint64_t largest = 0;  ///< the largest of them
  double bytes_error = 0;     ///< sampled traces: standard error of `bytes`
  std::string symbol;         ///< filled by symbolize()
  std::string function;
  std::string module;
  std::vector<std::uint64_t> frame_addresses;  ///< the stack's return addresses, innermost first
  std::vector<std::string> frames;  ///< filled by symbolize(): the same, symbolized
};

/// Allocations by whole stack (a trace recorded with stacks).
struct StackStats {
  std::uint32_t stack = 0;  ///< Reader::stacks() id
  std::uint64_t calls = 0;
  std::uint64_t bytes = 0;
  double bytes_error = 0;   ///< sampled traces: standard error of `bytes`
  std::vector<std::uint64_t> frame_addresses;  ///< innermost first
  std::vector<std::string> frames;             ///< filled by symbolize()
};

/// What a sampled trace's figures are (Header::sample_interval; sampling.h).
/// The figures of TraceStats that count blocks, calls or bytes (the Table 2
/// figures, live and peak amounts, calls by kind, and everything by size,
/// call site, stack, thread and leak) are then estimates for the whole run,
/// rounded; lifetimes, realloc and aligned counts, and the anomalies
/// (unknown releases, cross-thread releases) are those of the sampled
/// blocks. Errors are one standard error.
struct SamplingStats {
  std::uint64_t interval = 0;  ///< 0: an exact trace, the rest is 0
  std::uint64_t samples = 0;   ///< allocations in the trace
  double objects_error = 0;
  double total_bytes_error = 0;
  double max_in_use_error = 0;
  double live_bytes_at_end_error = 0;
};

/// Counts in power-of-two buckets: bucket k holds values v with
/// 2^(k-1) < v <= 2^k (bucket 0 holds 0 and 1).
struct Log2Histogram {
  std::vector<std::uint64_t> counts;
  void add(std::uint64_t value);
  void add(std::uint64_t value, std::uint64_t times);  ///< `times` >= 1
};

/// Requested bytes in use over the trace, downsampled to at most
/// StatsOptions::series_points points: the events are cut into that many
/// equal runs, and each point is one run's lowest and highest value (so no
/// spike is lost) at the time of the run's last event.
struct InUsePoint {
  std::uint64_t time_ns = 0;   ///< since the first event
  std::uint64_t event = 0;     ///< index of the run's last event
  std::uint64_t min = 0, max = 0;
};

struct ThreadStats {
  std::uint32_t thread = 0;
  std::uint64_t tid = 0;
  std::uint64_t allocations = 0;
  std::uint64_t bytes = 0;
  std::uint64_t releases = 0;
  std::uint64_t first_ns = 0, last_ns = 0;
};

struct TraceStats {
  SamplingStats sampling;

  // The DMM simulator paper, Table 2.
  std::uint64_t objects = 0;
  std::uint64_t total_bytes = 0;
  std::uint64_t max_in_use = 0;
  double average_size = 0;
  std::uint64_t memory_ops = 0;

  std::uint64_t events = 0;
  std::uint64_t duration_ns = 0;
  std::uint64_t first_event_ns = 0;  ///< time of the first event (CLOCK_MONOTONIC)
  std::map<std::string, std::uint64_t> calls;  ///< by kind as `tailor dump` names it
  std::uint64_t releases = 0;          ///< free / delete of a non-null pointer
  std::uint64_t null_releases = 0;     ///< free(NULL), delete nullptr
  std::uint64_t failed = 0;            ///< allocation calls that returned no block
  std::uint64_t max_live_objects = 0;
  std::uint64_t time_of_max_in_use_ns = 0;
  std::uint64_t live_objects_at_end = 0;
  std::uint64_t live_bytes_at_end = 0;
  std::uint64_t unknown_releases = 0;  ///< of blocks the trace never saw allocated (e.g. inherited over fork)
  std::uint64_t reused_live = 0;       ///< allocations returning a block the trace still had live
  std::uint64_t cross_thread_releases = 0;

  struct {
    std::uint64_t calls = 0, in_place = 0, moved = 0, from_null = 0, to_zero = 0, failed = 0;
  } realloc;
  std::uint64_t aligned_calls = 0;
  std::map<std::uint64_t, std::uint64_t> alignments;  ///< alignment -> calls

  std::uint64_t distinct_sizes = 0;
  std::vector<SizeShare> top_sizes;        ///< by count, descending
  std::vector<SizeShare> size_buckets;     ///< power-of-two upper bounds, ascending

  Distribution lifetime_events;  ///< of released objects: events between allocation and release
  Distribution lifetime_ns;
  Log2Histogram lifetime_events_histogram;
  Log2Histogram lifetime_ns_histogram;

  std::vector<InUsePoint> in_use_series;  ///< empty unless StatsOptions::series_points
  std::uint64_t event_of_max_in_use = 0;  ///< index of the event that first reached max_in_use

  std::uint64_t distinct_callsites = 0;
  std::vector<CallSiteStats> top_sites_by_calls;
  std::vector<CallSiteStats> top_sites_by_bytes;

  std::uint64_t distinct_stacks = 0;           ///< stacks that allocated (0 without stacks)
  std::vector<StackStats> top_stacks_by_bytes;

  std::uint64_t leak_sites = 0;   ///< call sites with blocks live at the end
  std::vector<LeakSite> leaks;    ///< of those, the top by bytes

  std::vector<ThreadStats> threads;
  /// Releases by a thread other than the allocating one: (allocating thread,
  /// releasing thread) -> releases, by the recorder's thread indices.
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> cross_thread_pairs;
};

struct StatsOptions {
  std::size_t top = 10;
  /// Points of in_use_series (0: no series).
  std::size_t series_points = 0;
};

TraceStats compute_stats(trace::Reader& reader, const StatsOptions& options = {});

/// What the end of `reader`'s trace is, for the blocks live there: "at exit
/// (status 0)", "at abort", "when the process called exec", or "at the
/// trace's last event (the trace is cut)".
std::string end_description(const trace::Reader& reader);

/// Fills the symbol of every reported call site (top lists and leaks, and
/// the frames of the leaks' stacks) from the trace's modules.
void symbolize(TraceStats& stats, const std::vector<trace::Module>& modules);

nlohmann::json to_json(const TraceStats& stats);

}  // namespace tailor::analyze
