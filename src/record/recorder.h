// SPDX-License-Identifier: MIT
// The recording engine behind the hooks: per-thread event logs, the flush of a
// log into a trace chunk, and the process events (thread exit, fork, exec,
// exit) that decide which file a chunk goes to and when a trace ends.
//
// Hot path: a hook appends one 32-byte trace::PackedEvent to its thread's log
// (thread-local, no lock, no atomic read-modify-write). Each log is a ring of
// buffers: when the one being filled is full (or holds events older than
// kFlushIntervalNs), it is handed to a background writer thread that encodes,
// compresses and writes it while the program fills the next, compressing
// faster when it falls behind (recorder.cpp, choose_pace). If the writer falls
// a whole ring behind, the program's thread writes the oldest buffer itself,
// so memory stays bounded and the thread's chunks stay in order.
// TAILOR_RECORD_THREAD=0 writes inline.
#pragma once

#include <time.h>

#include <atomic>
#include <cerrno>
#include <cstdint>

#include "tailor/trace/event.h"
#include "tailor/trace/metadata.h"
#include "tailor/trace/writer.h"
#include "record/stack_recorder.h"

namespace tailor::record {

struct StackTrie;  // stack_recorder.cpp

inline constexpr std::uint32_t kLogSlots = 1u << 14;  // per buffer: 512 KiB of trace::PackedEvent
inline constexpr std::uint32_t kLogBuffers = 4;        // a ring: room for the writer to lag behind a burst
inline constexpr std::uint64_t kFlushIntervalNs = 250'000'000;  // an active thread's events reach disk within this

enum BufferState : int { kFree, kFull };

struct ThreadLog {
  ThreadLog* next = nullptr;               // in the registry or the free pool
  std::uint32_t thread = 0;                // dense index written in chunk headers
  std::atomic<std::uint32_t> current{0};   // buffer being filled (owner stores)
  std::atomic<std::uint32_t> count{0};     // slots filled in it (owner stores, flushers load)
  std::atomic<std::uint32_t> flushed{0};   // [0, flushed) of it already written by an exit-time flush
  std::atomic<int> state[kLogBuffers] = {};
  std::uint32_t oldest = 0;                    // the next buffer to write, in ring order (writer_mu)
  std::uint32_t full_from[kLogBuffers] = {};   // a full buffer's unwritten events: [full_from, full_count)
  std::uint32_t full_count[kLogBuffers] = {};
  // The owner's view of its current buffer, kept so that record() needs no
  // index arithmetic and no look back at the buffer's first event.
  trace::PackedEvent* fill = events[0];  // events[current]
  std::uint64_t deadline = 0;      // a time past which the buffer is handed over (kFlushIntervalNs)
  StackTrie* stacks = nullptr;     // with --stacks: the nodes this log made (stack_recorder.h)
  trace::PackedEvent events[kLogBuffers][kLogSlots];  // one slot per event, two for some (writer.h)
};

/// Per-thread state, in initial-exec TLS so that reaching it never allocates.
struct ThreadState {
  ThreadLog* log;
  int busy;             // inside a hook (or the recorder): nested calls pass through unrecorded
  int destructor_round; // pthread key destructor rounds seen at thread exit
  std::uint32_t clock_reads;  // events stamped since the thread began (now_ticks)
  std::uint64_t last_ticks;   // the last time read
  std::uint64_t sample_left;  // sampled traces: bytes to the next sample; 0 otherwise (sampler.h)
  std::uint64_t sample_rng;   // sampled traces: the thread's generator state, 0 until its first call
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

/// Event timestamps: the TSC where the kernel itself keeps time with it
/// (invariant and synchronized across cores), else CLOCK_MONOTONIC. Ticks
/// become CLOCK_MONOTONIC ns when written, by one linear map per process
/// (calibration.h), so the order of ticks across threads is kept.
///
/// Allocations read the TSC with RDTSC, which may execute early: that only
/// makes an allocation look earlier, never later than a release of the block
/// in another thread. Once the process has a second recorded thread,
/// releases use RDTSCP, which waits for the loads before it (among them the
/// load that brought the pointer from the allocating thread), so a release is
/// never stamped before the allocation it ends. A single thread needs no such
/// wait (its own order is kept by the trace), and RDTSCP's wait for the
/// program's pending work is the largest cost of recording a release.
///
/// While the process has one recorded thread, RDTSC itself (about 36 cycles
/// on Zen 3, two thirds of a hook's cost) is read only every
/// kClockEvery-th event; the events between take the last time read, so
/// times stay in the thread's order and are at most kClockEvery - 1 events
/// early. A second thread makes every event read the clock: across threads
/// the order of times is what orders the events.
///
/// `ordered_releases` is also set from the start when the clock is not the
/// TSC, so that the common case tests one flag.
extern bool use_tsc;
extern bool ordered_releases;  // every event reads the clock; releases with RDTSCP
inline constexpr std::uint32_t kClockEvery = 8;  // a power of two
/// The clock itself, for calibration.
inline std::uint64_t read_ticks() noexcept {
  if (__builtin_expect(use_tsc, 1)) return __builtin_ia32_rdtsc();
  return now_ns();
}
inline std::uint64_t now_ticks() noexcept {
  if (!__atomic_load_n(&ordered_releases, __ATOMIC_RELAXED) && (tls.clock_reads++ & (kClockEvery - 1)) != 0)
    return tls.last_ticks;
  return tls.last_ticks = read_ticks();
}
inline std::uint64_t now_ticks_ordered() noexcept {
  if (!__atomic_load_n(&ordered_releases, __ATOMIC_RELAXED)) return now_ticks();
  if (__builtin_expect(use_tsc, 1)) {
    unsigned aux;
    return tls.last_ticks = __builtin_ia32_rdtscp(&aux);
  }
  return now_ns();
}

/// Slow paths of record(): a thread's first event, and a buffer to hand over
/// (at `time`, the last event's).
ThreadLog* attach_thread(std::uint64_t time) noexcept;
void rotate(ThreadLog* log, std::uint64_t time) noexcept;
extern std::uint64_t flush_interval_ticks;

/// Appends an event that takes two slots (writer.h, PackedEvent); `stack`
/// goes in the second slot.
void record_extended(ThreadLog* log, trace::Op op, std::uint8_t flags, std::uint64_t size, std::uint64_t address,
                     std::uint64_t aux, std::uint64_t callsite, std::uint64_t time, std::uint32_t stack = 0) noexcept;
/// record() with --stacks: the call's stack captured, the event in two slots.
[[gnu::noinline]] void record_stacked(ThreadLog* log, trace::Op op, std::uint8_t flags, std::uint64_t size,
                                      std::uint64_t address, std::uint64_t aux, std::uint64_t callsite,
                                      std::uint64_t time) noexcept;

/// Appends one event to the calling thread's log. Inline: this is the whole
/// per-event cost of recording, apart from reading the clock.
inline void record(trace::Op op, std::uint8_t flags, std::uint64_t size, std::uint64_t address, std::uint64_t aux,
                   const void* callsite, std::uint64_t time) noexcept {
  if (__builtin_expect(state.load(std::memory_order_relaxed) != State::Active, 0)) return;
  ThreadLog* log = tls.log;
  if (__builtin_expect(!log, 0) && !(log = attach_thread(time))) return;
  const auto site = reinterpret_cast<std::uint64_t>(callsite);
  // Releases keep their call site alone: what the stacks are read for
  // (memory by the code path that allocated it, leaks) names allocations,
  // and unwinding a free too would double the cost of --stacks.
  if (__builtin_expect(stack_depth != 0, 0) && site != 0 && !trace::is_release(op)) {
    record_stacked(log, op, flags, size, address, aux, site, time);
    return;
  }
  if (__builtin_expect(!trace::PackedEvent::fits_one(aux, site), 0)) {
    record_extended(log, op, flags, size, address, aux, site, time);
    return;
  }
  std::uint32_t c = log->count.load(std::memory_order_relaxed);
  trace::PackedEvent& e = log->fill[c];
  e.time = time;
  e.size = size;
  e.address = address;
  e.word = site | trace::PackedEvent::tag(op, flags);
  log->count.store(c + 1, std::memory_order_release);
  if (__builtin_expect(c + 1 == kLogSlots || time > log->deadline, 0)) rotate(log, time);
}

/// Writes every thread's pending events and the end record; recording stops.
/// Does nothing in a process that is not the recorder's (a vfork child).
void finish(trace::EndReason reason, int status) noexcept;

/// Counts events the recorder could not record (EndRecord::dropped).
void note_dropped(std::uint64_t events) noexcept;

/// Writes a module chunk for objects loaded since the last scan (before
/// dlclose, so that a module loaded and unloaded between two flushes is in
/// the map).
void report_loaded_modules() noexcept;

/// exec*: finish with EndReason::Exec; if exec then fails, resume_after_exec()
/// starts a new trace file so the process stays recorded.
bool prepare_exec() noexcept;
void resume_after_exec() noexcept;

/// Keeps the program's errno across the recorder's slow paths (a thread's
/// first event, a buffer handed over, start-up), which make system calls.
/// The per-event path touches nothing that sets errno, so a hook needs no
/// save of its own: the program sees errno exactly as the real call left it.
struct ErrnoKept {
  ErrnoKept() noexcept : saved(errno) {}
  ~ErrnoKept() { errno = saved; }
  ErrnoKept(const ErrnoKept&) = delete;
  ErrnoKept& operator=(const ErrnoKept&) = delete;
  int saved;
};

/// RAII marker for "this thread is inside the recorder".
struct BusyScope {
  BusyScope() noexcept { ++tls.busy; }
  ~BusyScope() { --tls.busy; }
  BusyScope(const BusyScope&) = delete;
  BusyScope& operator=(const BusyScope&) = delete;
};

}  // namespace tailor::record
