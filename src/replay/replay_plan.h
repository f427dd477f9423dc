// SPDX-License-Identifier: MIT
// Turns a trace into a replay plan: per trace thread, the allocation calls it
// made, in its call order, as compact ops over slots (the file format and the
// slot rules are in plan_format.h), and writes it to the file
// tailor-replay-driver runs.
//
// Events become calls as the simulator turns them into operations
// (src/simulate/replay_trace.h), so that the counts agree:
//  - malloc, new -> malloc; calloc -> calloc; memalign, posix_memalign,
//    aligned_alloc, valloc, pvalloc, aligned new -> that aligned call;
//    free, delete, sized and aligned frees -> free;
//  - realloc(p, n) that returned a block -> realloc (the new block takes p's
//    slot); realloc(NULL, n) -> malloc; realloc(p, 0) that returned NULL ->
//    free; realloc of a block the trace never saw allocated -> malloc;
//  - dropped and counted: failed calls (no block returned), free(NULL),
//    frees of blocks the trace never saw allocated, thread events;
//  - an allocation at an address that is still live frees the old block
//    first (in the thread that allocates), as the trace missed its release.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "replay/plan_format.h"
#include "tailor/trace/event.h"
#include "tailor/trace/reader.h"

namespace tailor::replay {

struct PlanSummary {
  std::uint64_t events = 0;            ///< trace events read
  std::uint64_t calls[plan::kKinds]{}; ///< ops by plan::Kind; calls[0] = all
  std::uint64_t failed = 0;            ///< allocation calls that returned no block (dropped)
  std::uint64_t null_releases = 0;     ///< free(NULL), delete nullptr (dropped)
  std::uint64_t unknown_releases = 0;  ///< frees of blocks never seen allocated (dropped; a realloc becomes malloc)
  std::uint64_t reused_live = 0;       ///< allocations over a live address (old block freed first)
  std::uint64_t other_events = 0;      ///< thread start / exit (dropped)
  std::uint64_t cross_thread = 0;      ///< frees and reallocs of a block another thread allocated (they wait)
  std::uint64_t slots = 0;             ///< slot table entries
  std::uint64_t max_live = 0;          ///< most blocks live at once
  std::uint64_t live_at_end = 0;       ///< blocks never freed (the driver leaves them)
};

struct PlanThread {
  std::uint32_t trace_thread = 0;
  std::uint64_t calls = 0;
  std::vector<std::uint64_t> words;  ///< ops, plan_format.h
};

struct Plan {
  std::vector<PlanThread> threads;  ///< threads with at least one op, by trace thread index
  PlanSummary summary;
};

/// Builds a plan event by event, in the trace's merged order.
class PlanBuilder {
 public:
  /// `expected_events`: the trace's event count, to reserve room for the first thread's ops.
  explicit PlanBuilder(std::uint64_t expected_events = 0) : expected_events_(expected_events) {}
  void add(const trace::Event& event);
  Plan finish();

 private:
  struct Live {
    std::uint32_t slot;
    std::uint32_t thread;  // index in threads_ of the thread that allocated it
  };
  struct ThreadState {
    std::uint32_t index = 0;  // in threads_
    PlanThread plan;
    std::vector<std::uint32_t> free_slots;  // slots this thread freed last, reused LIFO
  };

  ThreadState& thread(std::uint32_t trace_thread);
  std::uint32_t take_slot(ThreadState& t);
  void allocate(ThreadState& t, std::uint64_t address, plan::Kind kind, std::uint64_t size,
                std::uint64_t element = 0, std::uint64_t alignment_word = 0);
  void release(ThreadState& t, std::uint64_t address);
  void realloc(ThreadState& t, std::uint64_t old_address, std::uint64_t address, std::uint64_t size);
  // Appends one op to t's stream and counts it: `extra` is calloc's element
  // size or the aligned word, `wait` the generation a kWait op waits for.
  void emit(ThreadState& t, plan::Kind kind, std::uint32_t slot, std::uint64_t size, unsigned flags,
            std::uint64_t extra, std::uint64_t wait);

  std::uint64_t expected_events_;
  std::vector<ThreadState> threads_;
  std::uint32_t last_ = 0;  // threads_ index of the last event's thread
  std::unordered_map<std::uint32_t, std::uint32_t> thread_index_;  // trace thread -> threads_ index
  std::unordered_map<std::uint64_t, Live> live_;                   // address -> block
  std::vector<std::uint64_t> generation_;                          // by slot: allocations into it so far
  PlanSummary s_;
};

/// Reads every event of `reader` (from the start) into a plan.
Plan build_plan(trace::Reader& reader);
/// Builds a plan from events in memory (merged order).
Plan build_plan(std::span<const trace::Event> events);

/// Writes the plan file. Throws std::runtime_error naming the file.
void write_plan(const Plan& plan, const std::string& path);
/// Reads a plan file back, checking its structure (every op whole, slots in
/// range). Throws std::runtime_error naming the file and what is wrong.
Plan read_plan(const std::string& path);

/// The ops of one thread, decoded.
std::vector<plan::Op> decode(const PlanThread& thread);

}  // namespace tailor::replay
