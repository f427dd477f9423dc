// SPDX-License-Identifier: MIT
// ReplayTrace: a trace loaded once into the compact form every simulation
// loops over: an array of allocate(block, bytes, alignment) / release(block)
// operations, 8 bytes each, with dense block ids (0 .. most blocks live at
// once - 1) instead of addresses, so that a simulator indexes arrays and never
// hashes an address per event, and with the requested bytes as an index into
// the trace's table of distinct sizes: programs request few distinct sizes
// (tens to thousands), so the table stays in cache and the simulation loop
// pays one load from it per allocation, while a 1 G-operation trace fits in
// 8 GB. A trace with more than 2^25 distinct sizes is refused (length_error).
// A release carries its block's size and alignment too, so that the size by
// which a DMM routes it (dmm/spec.h: routing_size) is known from the
// operation alone.
//
// Accounting follows tailor stats (src/analyze/trace_stats.h), so that the
// in-use bytes the simulators are checked against are the same number:
//  - requested bytes: calloc's count x size; every other call's size;
//  - realloc(p, n) that returns a block: allocation of n, then release of p
//    (even in place): the order in which an allocator that moves a block must
//    work, and the order in which a DMM run for real does (docs/deploy.md);
//    the bytes in use count p's release first, as tailor stats does; realloc(NULL, n) is an allocation; realloc(p, 0) returning
//    NULL is a release of p; a failed realloc changes nothing;
//  - dropped (counted in ReplaySummary): failed allocations, free(NULL),
//    releases of blocks the trace never saw allocated, thread events;
//  - an allocation at an address that is still live ends the old block first
//    (the trace missed its release), as a release operation.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <shared_mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "util/flat_map.h"
#include "tailor/trace/event.h"
#include "tailor/trace/reader.h"

namespace tailor::simulate {

/// One operation of a replay. 8 bytes: the block id, and one word with the
/// kind (bit 0), log2 of the alignment asked for (bits 1-6; 0 = none) and the
/// index of the requested bytes in ReplayTrace::sizes (bits 7-31).
struct Operation {
  enum Kind : std::uint8_t { kAllocate = 0, kRelease = 1 };
  static constexpr std::uint32_t kMaxSizes = std::uint32_t{1} << 25;  ///< distinct sizes a trace may have

  std::uint32_t block = 0;  ///< dense block id
  std::uint32_t word = 0;

  static constexpr Operation make(Kind kind, std::uint32_t block, std::uint32_t size, unsigned align_log2) noexcept {
    return {block, (size << 7) | ((align_log2 & 63u) << 1) | kind};
  }
  constexpr Kind kind() const noexcept { return static_cast<Kind>(word & 1); }
  constexpr unsigned align_log2() const noexcept { return (word >> 1) & 63u; }
  /// The requested bytes' index in ReplayTrace::sizes (a release: its block's).
  constexpr std::uint32_t size() const noexcept { return word >> 7; }
  constexpr std::uint64_t alignment() const noexcept { return align_log2() ? std::uint64_t{1} << align_log2() : 0; }
  friend constexpr bool operator==(const Operation&, const Operation&) = default;
};
static_assert(sizeof(Operation) == 8);

struct ReplaySummary {
  std::uint64_t events = 0;            ///< trace events read
  std::uint64_t allocations = 0;       ///< allocate operations (= objects of tailor stats)
  std::uint64_t releases = 0;          ///< release operations, forced ones included
  std::uint64_t reallocs = 0;          ///< realloc events that became operations
  std::uint64_t failed = 0;            ///< allocation calls that returned no block (dropped)
  std::uint64_t null_releases = 0;     ///< free(NULL), delete nullptr (dropped)
  std::uint64_t unknown_releases = 0;  ///< releases of blocks never seen allocated (dropped)
  std::uint64_t reused_live = 0;       ///< allocations over a live address (old block released first)
  std::uint64_t other_events = 0;      ///< thread start / exit (dropped)
  std::uint64_t max_live_blocks = 0;   ///< = number of distinct block ids
  std::uint64_t max_in_use_bytes = 0;  ///< peak of requested bytes live (= tailor stats' max_in_use_bytes)
  std::uint64_t live_blocks_at_end = 0;
  std::uint32_t page_size = 4096;      ///< of the traced process (4096 if the trace does not say)
};

struct ReplayTrace {
  /// Every operation; empty after a build through a window (Publisher), whose
  /// operations were read as they went by.
  std::vector<Operation> operations;
  std::vector<std::uint64_t> sizes;  ///< distinct requested sizes, in order of first request
  ReplaySummary summary;

  /// The bytes an operation requested (a release: its block's request).
  std::uint64_t bytes(const Operation& op) const noexcept { return sizes[op.size()]; }

  /// Index (0-based, in merged order) of the trace event that produced operation `op`.
  std::uint64_t event_of(std::uint64_t op) const;

  // Sparse map operation index -> event index: (first op, event - op) at every
  // op where the difference changes (realloc pairs, dropped events).
  std::vector<std::pair<std::uint64_t, std::uint64_t>> event_offsets;
};

/// What a builder shares with readers of the operations it has built so far
/// (replay_stream.h): the count of operations built, published every kEvery
/// operations and at the end, the most blocks live up to then, and the lock
/// under which the operation and size arrays move when they grow (readers
/// hold it shared while they use pointers into them).
///
/// With a window (a power of two, at least 4 x kEvery), the operations go
/// round a ring of that many instead of into an array of the whole trace:
/// operation i is at ops[i & (window - 1)], memory stays constant, and the
/// builder waits before it would overwrite an operation that one of the
/// `readers` readers has not passed yet (each reader's progress: the first
/// operation it may still read; UINT64_MAX once it has left).
struct Publisher {
  static constexpr std::uint64_t kEvery = std::uint64_t{1} << 16;
  std::atomic<std::uint64_t> available{0};
  std::atomic<std::uint64_t> max_live{0};
  std::atomic<std::uint32_t> version{0};  // moves at every publication (and at the end): what readers wait on
  std::shared_mutex growth;
  const Operation* ops = nullptr;       // where the arrays are now (guarded by growth)
  const std::uint64_t* sizes = nullptr;

  std::uint64_t window = 0;  // 0: the whole trace is kept
  unsigned readers = 0;
  std::unique_ptr<std::atomic<std::uint64_t>[]> progress;  // [readers]
  std::atomic<std::uint32_t> progress_version{0};           // moves when a reader's progress does: what the builder waits on
  std::vector<Operation> ring;                              // [window]
};

/// Builds a ReplayTrace event by event (for tests and for load_replay).
class ReplayBuilder {
 public:
  explicit ReplayBuilder(std::uint32_t page_size = 4096, std::uint64_t expected_events = 0);
  void add(const trace::Event& event);
  void add_run(const trace::Event* events, std::size_t n);
  /// The addresses of the blocks live now, in increasing order.
  std::vector<std::uint64_t> live_addresses() const;
  /// Publishes progress to `publisher` from now on (nullptr: to nobody).
  /// Call before the first add.
  void publish_to(Publisher* publisher);
  ReplayTrace finish();

 private:
  void publish(bool more);  // more: operations will follow
  void wait_for_readers(std::uint64_t passed);  // until every reader has passed operation `passed` - 1
  // push_back; with a publisher, a move of the array happens under its lock
  // and `published` (the publisher's pointer to it) follows.
  template <class T>
  void append(std::vector<T>& array, const T& value, const T** published);
  template <class T>
  void grow(std::vector<T>& array, const T& value, const T** published);  // append when the array is full
  // The per-event path (add_one and what it calls) is inlined into add_run's
  // loop; the rare branches (a new size, an array that must grow under a
  // publisher) are calls.
  void add_one(const trace::Event& event);
  void allocate(std::uint64_t address, std::uint64_t bytes, std::uint64_t alignment);
  void release(std::uint64_t address);
  void move(std::uint64_t from, std::uint64_t to, std::uint64_t bytes);  // realloc that returned a block
  void push(std::uint32_t block, std::uint32_t word);
  std::uint32_t size_index(std::uint64_t bytes);
  std::uint32_t new_size_index(std::uint64_t bytes);

  ReplayTrace r_;
  util::FlatMap<std::uint32_t> live_{std::size_t{1} << 16};  // address -> block id (open addressing: no node per block)
  std::vector<std::uint32_t> free_ids_;
  std::uint64_t in_use_ = 0;
  std::uint64_t event_ = 0;  // index of the event being added
  std::uint64_t offset_ = UINT64_MAX;
  std::uint64_t count_ = 0;      // operations built
  Operation* ring_ = nullptr;    // the publisher's ring, if it has a window
  std::uint64_t ring_mask_ = 0;  // its size - 1
  std::vector<std::uint32_t> live_word_;  // by block id: its allocation's Operation::word
  static constexpr std::uint64_t kDirectSizes = 1 << 16;  // sizes below are indexed by an array, the rest hashed
  std::vector<std::uint32_t> small_index_;                 // bytes -> index + 1 (0: not seen yet)
  std::unordered_map<std::uint64_t, std::uint32_t> large_index_;
  Publisher* publisher_ = nullptr;
};

/// Reads every event of `reader` (from the start) into a ReplayTrace,
/// publishing progress to `publisher` if given (replay_stream.h).
ReplayTrace load_replay(trace::Reader& reader, Publisher* publisher = nullptr);

/// Builds a ReplayTrace from events in memory.
ReplayTrace build_replay(std::span<const trace::Event> events, std::uint32_t page_size = 4096);

}  // namespace tailor::simulate
