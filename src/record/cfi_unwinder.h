// SPDX-License-Identifier: MIT
// The recorder's DWARF unwinder: each return address's call-frame rule
// (where the caller's frame starts, where its return address and frame
// pointer were saved), read once from the module's .eh_frame and kept in a
// per-thread table, so that a stack costs a table look-up and two loads per
// frame. Bytehound and libunwind's own fast trace do the same; libunwind's
// entry (a whole cursor set up per call) cost more than the walk itself on
// programs whose every allocation has a short stack.
//
// Why a walker of its own rather than libunwind's unw_backtrace: on cfrac
// libunwind took 38% of a stacked recording and on gc_trees the stacks made
// the run 4x slower than the frame-pointer walk over the same frames
// (docs/BENCHMARKS.md, "Recording overhead"); the rules are the same DWARF
// rules, evaluated once per address instead of once per call.
//
// x86-64 only, and only the rules compilers emit for call frames: the frame
// start (CFA) at the stack pointer or frame pointer plus a constant, the
// return address and the frame pointer saved at constant offsets from it.
// A frame whose rule is anything else (a signal frame, a PLT entry's
// expression, a stack realigned through another register), or a stack
// pointer outside the thread's stack (a signal handler on its own stack),
// makes cfi_backtrace fail, and the recorder unwinds that call with
// libunwind instead.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tailor::record {

struct FrameRule;

// A return address's rule (cfi_unwinder.cpp): where the caller's frame
// starts and where its return address and frame pointer were saved.
struct FrameShape {
  std::int32_t cfa_offset;  // from the stack pointer, or the frame pointer (cfa_is_rbp)
  std::int16_t rbp_offset;  // where the caller's rbp was saved, from the CFA; 0: rbp unchanged
  std::int8_t ra_offset;    // where the return address was saved, from the CFA
  std::uint8_t kind : 2;    // cfi_unwinder.cpp's kStep, kOutermost, kCannot (0: none yet)
  std::uint8_t cfa_is_rbp : 1;
};

/// Frames one walk may give (the recorder's deepest stack and its own frames).
inline constexpr int kMaxWalk = 1024 + 16;

// One frame of a walk: the registers the walk had on reaching it, the rule
// of its return address, and where it read the caller's return address and
// frame pointer (0: not read).
struct WalkFrame {
  std::uint64_t address, sp, bp;
  std::uint64_t ra_at, bp_at;
  FrameShape shape;
};

// A walk: its frames' states, [0, n] (n: the state it stopped at).
struct Walk {
  int n = -1;  // -1: none
  WalkFrame frames[kMaxWalk + 1];
};

// A thread's rules, by return address (an open-addressing table in a
// mapping of its own; the recorder runs inside malloc), and its last walk.
//
// The last walk saves most of the next: once a walk reaches a frame with
// the same return address, stack pointer and frame pointer as a frame of
// the last walk, the rest of the stack is the last walk's from there on as
// long as the return addresses and frame pointers that walk read from the
// stack are still there; checking them is a load and a compare per frame,
// none depending on another, instead of a look-up and loads in a chain.
// Successive allocations of a program mostly differ in a few inner frames.
// A frame whose return address is the one the last walk had at the same
// depth (the recorder's own frames, mostly) takes its rule from there
// rather than from the table.
struct FrameRules {
  FrameRule* table = nullptr;
  std::size_t capacity = 0;  // a power of two
  std::uint64_t count = 0;
  std::uint64_t generation = 0;  // of the loaded modules (frame_rules_modules_changed)
  int last = 0;                  // walks[last] is the last walk, the other the one being made
  Walk walks[2];
};

/// The calling thread's stack, [stack_lo, stack_hi), which every frame of
/// a walk lies in (both walks: the rules' and the frame pointers').
/// thread_stack_bounds() sets them on a thread's first call, from the
/// mapping that holds its stack pointer (the main thread's: down to its
/// size limit), without allocating; false if they cannot be had (or the
/// call runs on an alternate signal stack).
extern __thread std::uintptr_t stack_lo __attribute__((tls_model("initial-exec")));
extern __thread std::uintptr_t stack_hi __attribute__((tls_model("initial-exec")));
bool thread_stack_bounds() noexcept;

/// The return addresses of the calling thread's stack, innermost first,
/// starting with cfi_backtrace's own; at most `max`. -1 when a frame needs
/// what the rules do not cover (the caller falls back to libunwind).
int cfi_backtrace(FrameRules& rules, std::uint64_t* out, int max) noexcept;

/// A module was unloaded (the recorder's dlclose): every thread's rules are
/// dropped before its next walk, since another module may come to its
/// addresses.
void frame_rules_modules_changed() noexcept;

}  // namespace tailor::record
