// SPDX-License-Identifier: MIT
// ReplayStream: a ReplayTrace that simulations read while it is being built,
// so that `tailor simulate` runs its loops beside the load instead of after
// it: the whole command then takes about the longer of the two, not their
// sum. One thread builds (build(): reading the trace, which decodes on the
// other cores, and the address-to-block-id map); any number of simulations
// read the operations built so far through feeds (acquire / release), each
// waiting when it catches up with the builder.
//
// What can stream: a simulation that needs nothing but the operations up to
// where it is (the built-in mechanisms, unchecked). What cannot: one that
// needs the whole trace before its first operation (`exa` and specs, whose
// classes are the trace's distinct sizes; the checker) waits for the end of
// the load (wait_complete) and runs over the finished trace.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <condition_variable>
#include <mutex>

#include "simulate/replay_trace.h"
#include "tailor/trace/reader.h"

namespace tailor::simulate {

class ReplayStream {
 public:
  /// window 0: the finished trace keeps every operation (wait_complete gives
  /// them to simulations that start after the load). Otherwise the operations
  /// pass through a ring of `window` (a power of two, at least 2^18: 8 bytes
  /// each), memory does not grow with the trace, and the builder waits for
  /// the slowest of `readers` readers: exactly that many Feeds must be made,
  /// each while the build runs, and the finished trace has no operations.
  explicit ReplayStream(trace::Reader& reader, std::uint64_t window = 0, unsigned readers = 0);
  ReplayStream(const ReplayStream&) = delete;
  ReplayStream& operator=(const ReplayStream&) = delete;

  /// Reads every event of the reader into the trace, publishing as it goes;
  /// on the calling thread. Rethrows what reading or building threw, after
  /// letting every reader see the end.
  void build();

  /// Operations a reader may use: [from, available) (from: what it asked
  /// for), operation i at ops[i & mask], with the pointers valid until
  /// release(); at most `batch` of them before the next acquire (through a
  /// window, the builder waits for the reader's next acquire to reuse their
  /// place). `done` once nothing more will come.
  struct View {
    const Operation* ops = nullptr;
    const std::uint64_t* sizes = nullptr;
    std::uint64_t available = 0;
    std::uint64_t max_live = 0;
    std::uint64_t mask = ~std::uint64_t{0};
    std::uint64_t batch = ~std::uint64_t{0};
    bool done = false;
  };

  /// One reader of the stream. Through a window, it holds the builder back
  /// from the operations it has not passed until it is destroyed.
  class Feed {
   public:
    explicit Feed(ReplayStream& stream);
    ~Feed();
    Feed(const Feed&) = delete;
    Feed& operator=(const Feed&) = delete;
    /// Waits until more than `from` operations are built or the build has
    /// ended, then holds the arrays in place (shared) until release(). The
    /// reader has passed every operation before `from`.
    View acquire(std::uint64_t from);
    void release();
    ReplayStream& stream() const noexcept { return stream_; }

   private:
    void passed(std::uint64_t operation);  // tells the builder (window only)

    ReplayStream& stream_;
    unsigned slot_ = 0;  // its progress in the publisher, with a window
  };

  /// Blocks until the build has ended; the finished trace (valid only if
  /// the build succeeded: failed() says).
  const ReplayTrace& wait_complete();
  bool failed() const noexcept { return failed_.load(std::memory_order_acquire); }

  /// Before the end, the number of operations to expect (the trace's event
  /// count: each event gives about one); exact once complete.
  std::uint64_t expected_operations() const noexcept;
  std::uint32_t page_size() const noexcept { return page_size_; }
  /// The finished trace's summary (call after acquire() returned done).
  const ReplaySummary& summary() const noexcept { return trace_.summary; }

 private:
  View acquire(std::uint64_t from);  // through a Feed
  void release();

  trace::Reader& reader_;
  std::uint32_t page_size_;
  std::uint64_t expected_;
  Publisher publisher_;
  std::atomic<unsigned> joined_{0};   // Feeds made, with a window
  ReplayTrace trace_;                 // moved in when the build ends (under the growth lock)
  std::atomic<bool> ended_{false};    // trace_ is final (or the build failed)
  std::atomic<bool> failed_{false};
  std::mutex end_mu_;                 // wait_complete's wait
  std::condition_variable end_cv_;
};

}  // namespace tailor::simulate
