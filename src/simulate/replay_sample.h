// SPDX-License-Identifier: MIT
// Sampling a replay by object: keep one object in k (its allocation and its
// release), chosen by a hash of the allocation's ordinal, and drop the rest;
// or keep its first n operations.
// The sample keeps the program's phases, its size distribution and its
// lifetimes (each in expectation), with about 1/k of the operations and of the
// live heap. A search ranks candidate DMMs on a sample when the whole trace
// would take too long, then measures its finalists on the whole trace
// (docs/search.md): a cheaper, approximate fitness, never a reported one.
#pragma once

#include <cstdint>

#include "simulate/replay_trace.h"

namespace tailor::simulate {

/// The objects of `trace` whose allocation ordinal hashes to 0 modulo
/// `one_in` (1: a copy), with dense block ids, its own summary (allocations,
/// releases, max live blocks, max in-use bytes, live blocks at the end; events
/// = operations kept) and event_of() still naming the whole trace's events.
ReplayTrace sample_objects(const ReplayTrace& trace, std::uint32_t one_in);

/// The first `operations` operations of `trace` (all of them if it has
/// fewer), as a trace of its own: the heap exactly as the program built it up
/// to there, which an object sample thins out (a DMM whose memory grows with
/// the number of frees into a dense heap can look good on a sample and not
/// on the trace). Block ids and event_of() are the whole trace's; the
/// summary is the prefix's.
ReplayTrace prefix(const ReplayTrace& trace, std::uint64_t operations);

/// The least k for which a 1-in-k sample of `trace` is expected to hold at
/// most `max_operations` operations (1 when the whole trace does; max_operations > 0).
std::uint32_t sampling_rate(const ReplayTrace& trace, std::uint64_t max_operations);

}  // namespace tailor::simulate
