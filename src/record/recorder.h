// SPDX-License-Identifier: MIT
// The recording engine behind the hooks: per-thread event logs, the flush of a
// log into a trace chunk, and the process events (thread exit, fork, exec,
// exit) that decide which file a chunk goes to and when a trace ends.
//
// Hot path: a hook appends one Event to its thread's log (thread-local, no lock,
// no atomic read-modify-write). Only a flush, once per kLogEvents events or
// kFlushIntervalNs of time, takes the writer's mutex.
#pragma once

#include <time.h>

#include <atomic>
#include <cstdint>

#include "tailor/trace/event.h"
#include "tailor/trace/metadata.h"

namespace tailor::record {

inline constexpr std::uint32_t kLogEvents = 1u << 14;
inline constexpr std::uint64_t kFlushIntervalNs = 250'000'000;  // a quiet thread's events reach disk within this

struct ThreadLog {
  ThreadLog* next = nullptr;               // in the registry or the free pool
  std::uint32_t thread = 0;                // dense index written in chunk headers
  std::atomic<std::uint32_t> count{0};     // events appended (owner stores, flushers load)
  std::atomic<std::uint32_t> flushed{0};   // [0, flushed) already written by an exit-time flush
  trace::Event events[kLogEvents];
};

/// Per-thread state, in initial-exec TLS so that reaching it never allocates.
struct ThreadState {
  ThreadLog* log;
  int busy;             // inside a hook (or the recorder): nested calls pass through unrecorded
  int destructor_round; // pthread key destructor rounds seen at thread exit
};
extern __thread ThreadState tls __attribute__((tls_model("initial-exec")));

enum class State : int { Uninitialized, Initializing, Active, Finished, Disabled };
extern std::atomic<State> state;

/// Brings the recorder up on first use. Returns true when events are to be
/// recorded. The calling thread must not be busy.
bool ensure_active() noexcept;

inline bool active() noexcept {
  State s = state.load(std::memory_order_acquire);
  return s == State::Active || (s == State::Uninitialized && ensure_active());
}

inline std::uint64_t now_ns() noexcept {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

/// Appends one event to the calling thread's log.
void record(trace::Op op, std::uint8_t flags, std::uint64_t size, std::uint64_t address, std::uint64_t aux,
            const void* callsite, std::uint64_t time_ns) noexcept;

/// Writes every thread's pending events and the end record; recording stops.
/// Does nothing in a process that is not the recorder's (a vfork child).
void finish(trace::EndReason reason, int status) noexcept;

/// exec*: finish with EndReason::Exec; if exec then fails, resume_after_exec()
/// starts a new trace file so the process stays recorded.
bool prepare_exec() noexcept;
void resume_after_exec() noexcept;

/// RAII marker for "this thread is inside the recorder".
struct BusyScope {
  BusyScope() noexcept { ++tls.busy; }
  ~BusyScope() { --tls.busy; }
  BusyScope(const BusyScope&) = delete;
  BusyScope& operator=(const BusyScope&) = delete;
};

}  // namespace tailor::record
