// SPDX-License-Identifier: MIT
// Whole call stacks for `tailor record --stacks[=DEPTH]` (TAILOR_RECORD_STACKS):
// each recorded call's stack, cut to its innermost DEPTH frames, becomes a
// node of the trace's stack tree (include/tailor/trace/stacks.h). Each
// thread log keeps a trie of the nodes it has made ((parent, return address)
// -> id, ids from one counter of the process) and a queue of the new ones,
// which the writer writes before the events that name them (recorder.cpp,
// write_range). Successive calls from one loop share all but their innermost
// frames, so only those are looked up.
//
// Releases keep their call site alone (record() in recorder.h).
//
// Unwinding: each return address's DWARF call-frame rule, read once and
// kept per thread, with the last walk reused where the stack has not
// changed (cfi_unwinder.h; libunwind's unw_backtrace for a frame the rules
// do not cover), unless TAILOR_RECORD_UNWIND says libunwind (unw_backtrace
// for every call) or fp: the frame-pointer chain, right only for code built
// with -fno-omit-frame-pointer (a function without one hides its caller).
// docs/profiling.md measures the three.
#pragma once

#include <cstdint>

#include "tailor/trace/writer.h"

namespace tailor::record {

struct ThreadLog;

inline constexpr int kMaxStackDepth = 1024;
/// Frames kept per stack (TAILOR_RECORD_STACKS); 0: stacks are off.
extern int stack_depth;

/// Reads TAILOR_RECORD_STACKS and TAILOR_RECORD_UNWIND (at start-up).
void stacks_init() noexcept;

/// The stack of the call being recorded, whose return address into the
/// program is `callsite`: its innermost node's id, the new nodes queued on
/// `log`. 0 when no stack could be had (out of memory for the trie).
std::uint32_t capture_stack(ThreadLog* log, std::uint64_t callsite) noexcept;

/// Writes the nodes queued on `log` (the caller holds the writer's lock).
bool write_stack_nodes(trace::Writer& writer, ThreadLog* log) noexcept;

/// In a forked child, whose trace starts anew: every log forgets its nodes
/// and ids start from 1 again.
void stacks_after_fork(ThreadLog* logs_live, ThreadLog* logs_free) noexcept;

/// Writes `log`'s queued nodes now, taking the writer's lock (recorder.cpp):
/// its queue is full and the writer has not taken them yet.
void flush_stack_nodes(ThreadLog* log) noexcept;

}  // namespace tailor::record
