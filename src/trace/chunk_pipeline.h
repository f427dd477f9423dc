// SPDX-License-Identifier: MIT
// Decodes a trace's Events chunks ahead of the reader's merge, on worker
// threads and on threads that help() while they would otherwise wait. Chunks
// are independent (each has its own compressed payload and starts its deltas
// afresh), so they decode in any order on any thread; the
// merge then takes them in the order it needs them. Workers decode in the
// order the merge is expected to need chunks (by first time, then file
// order), at most a window of chunks ahead, so memory stays bounded whatever
// the trace's size.
//
// Race-free by design: every change of a chunk's state and every handover
// of a buffer happens under one mutex; the decoding itself, outside it, works
// only on buffers that one thread owns at a time. A chunk that fails to
// decode keeps its exception, which take() raises when the merge reaches
// that chunk: the events before the damage are delivered exactly as by
// sequential reading, then the same Error.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "trace/chunk.h"

namespace tailor::trace {

class ChunkPipeline {
 public:
  /// `chunks` (the reader's, outlives this) in file order; `workers` decoding
  /// threads besides the caller's (0: the caller decodes every chunk as it
  /// takes it, which is sequential reading, unless other threads help());
  /// `skip`: columns left undecoded (codec::Skip).
  ChunkPipeline(const std::string& path, const std::uint8_t* data, const std::vector<ChunkRef>& chunks,
                unsigned workers, unsigned skip = 0);
  ~ChunkPipeline();
  ChunkPipeline(const ChunkPipeline&) = delete;
  ChunkPipeline& operator=(const ChunkPipeline&) = delete;

  /// Chunk `chunk`'s events into events[0..count): the buffer is swapped with
  /// the decoded one, and its old contents recycled. Each chunk is taken at
  /// most once until reset(). Throws the chunk's Error.
  void take(std::size_t chunk, std::vector<Event>& events);

  /// Decodes one chunk ahead of the merge on the calling thread, as a worker
  /// would, if one is waiting within the window: for a thread that would
  /// otherwise wait (a simulation that has caught up with the replay's
  /// builder). False if there was none. Not while reset() or the destructor
  /// runs (the Reader keeps helpers out of those).
  bool help();

  /// Every chunk can be taken again (stops the workers; they start again at
  /// the next take()).
  void reset();

 private:
  enum class State : std::uint8_t { Pending, Claimed, Ready, Taken };
  struct Slot {
    State state = State::Pending;
    std::vector<Event> events;  // when Ready
    std::exception_ptr error;   // when Ready and the decoding failed
  };

  void start();
  void stop();
  void work();
  // Under the lock: the next Pending chunk of the schedule within the window, marked Claimed; false if none.
  bool claim(std::size_t& chunk);
  // Decodes a claimed chunk into its slot (takes the lock only to hand buffers over).
  void decode_claimed(std::size_t chunk, std::unique_lock<std::mutex>& lock, ChunkScratch& scratch);

  const std::string& path_;
  const std::uint8_t* data_;
  const std::vector<ChunkRef>& chunks_;
  const unsigned workers_;
  const unsigned skip_;
  const std::size_t window_;           // most chunks decoded ahead and not yet taken
  std::vector<std::size_t> schedule_;  // chunk indices in the order workers decode them

  std::mutex mutex_;
  std::condition_variable work_;   // workers wait here for room in the window
  std::condition_variable ready_;  // take() waits here for a chunk a worker is decoding
  std::vector<Slot> slots_;
  std::vector<std::vector<Event>> spare_;  // recycled buffers
  std::size_t cursor_ = 0;                 // schedule position before which nothing is Pending
  std::size_t ahead_ = 0;                  // chunks Claimed or Ready
  bool stopping_ = false;
  bool started_ = false;  // workers started since the last reset (only the caller's thread touches it)
  std::vector<std::thread> threads_;
  ChunkScratch scratch_;                     // the caller's
  std::vector<ChunkScratch> spare_scratch_;  // helpers' (help())
};

}  // namespace tailor::trace
