// SPDX-License-Identifier: MIT
// Reads a trace file: validates the header and every chunk's checksums when it
// opens, then hands out events merged across threads in time order, decoding
// chunks on all cores. A file
// whose writer was killed is readable up to its last whole chunk, and `cut()`
// says where it stops; a damaged or foreign file raises Error with the byte
// offset of the damage.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tailor/trace/event.h"
#include "tailor/trace/metadata.h"
#include "tailor/trace/stacks.h"

namespace tailor::trace {

class Error : public std::runtime_error {
 public:
  Error(const std::string& file, std::uint64_t offset, const std::string& what);
  std::uint64_t offset() const noexcept { return offset_; }

 private:
  std::uint64_t offset_;
};

class Reader {
 public:
  /// Opens and checks `path`. Throws Error if it cannot be read, is not a
  /// tailor trace, is of a newer version, or is damaged before its end.
  explicit Reader(const std::string& path);
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  const std::string& path() const noexcept;
  const Header& header() const noexcept;
  const std::vector<Module>& modules() const noexcept;
  const std::optional<EndRecord>& end() const noexcept;
  /// Whole call stacks (`tailor record --stacks`; empty otherwise): what
  /// Event::stack names. Equal paths recorded by different threads are one.
  const StackTable& stacks() const noexcept;
  /// Empty for a trace that ends with its end record; otherwise a sentence
  /// saying at which byte the trace was cut and what was lost.
  const std::string& cut() const noexcept;
  bool complete() const noexcept { return cut().empty(); }

  std::uint64_t event_count() const noexcept;   ///< events in the readable chunks
  std::uint32_t thread_count() const noexcept;  ///< distinct threads with events
  std::uint64_t chunk_count() const noexcept;
  std::uint64_t file_size() const noexcept;

  /// Next event: threads merged by time (ties in file order), each thread's
  /// events in the order it made the calls; false at the end.
  bool next(Event& event);
  /// The next events, as next() would give them one by one: a run of
  /// [first, first + n) in the merged order (events of one chunk of one
  /// thread); 0 at the end. Runs and next() may be mixed. The events stay
  /// valid until the next call to next, next_run or rewind. For consumers of
  /// every event (stats, dump): no copy and no call per event.
  std::size_t next_run(const Event*& first);
  /// Starts the event sequence again.
  void rewind();
  /// Threads that decode chunks, the caller's included (0: one per core, the
  /// default; 1: the caller decodes each chunk when the merge reaches it),
  /// besides any that help (help_decode).
  /// The events, their order and any Error are the same for every count.
  /// Rewinds.
  void set_decode_threads(unsigned threads);
  /// What the caller reads of each event (both true by default). Without
  /// times, Event::time_ns is 0 in a trace of one thread (with more, the
  /// merge orders by them and they are decoded all the same); without call
  /// sites, Event::callsite is 0. A column not read is not decoded: the
  /// replay's load (simulate, search) reads neither. Rewinds.
  void set_columns(bool times, bool callsites);
  /// Decodes one chunk ahead of the events' consumer on the calling thread,
  /// if one is waiting: for a thread that would otherwise wait for that
  /// consumer (a simulation running beside the replay's build). False if
  /// there was nothing to decode. The only member that may be called from
  /// another thread while one reads; it waits for, and is kept out of,
  /// rewinds and column changes.
  bool help_decode();
  /// Every event, in the order next() gives them.
  std::vector<Event> read_all();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// For the tools that need every call of a run (simulate, search, replay,
/// validate, tune, pools, locality): throws std::runtime_error, in one line
/// naming the trace and `tool`, when `reader`'s trace is sampled
/// (Header::sample_interval).
void require_every_call(const Reader& reader, const std::string& tool);

}  // namespace tailor::trace
