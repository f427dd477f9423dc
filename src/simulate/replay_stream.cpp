// SPDX-License-Identifier: MIT
// The build of a ReplayStream on one thread and its readers on others; see
// replay_stream.h. The builder publishes a count of operations every
// Publisher::kEvery; a reader that catches up waits for the next publication
// (a futex wait on Publisher::version through std::atomic::wait), and holds the growth lock shared while it
// uses pointers into the arrays, which move only under the lock exclusive.
#include "simulate/replay_stream.h"

#include <stdexcept>

namespace tailor::simulate {

ReplayStream::ReplayStream(trace::Reader& reader, std::uint64_t window, unsigned readers)
    : reader_(reader), page_size_(reader.header().page_size), expected_(reader.event_count()) {
  if (window != 0) {
    if (readers == 0) throw std::invalid_argument("ReplayStream: a window needs its readers' count");
    publisher_.window = window;  // checked by the builder
    publisher_.readers = readers;
    publisher_.progress = std::make_unique<std::atomic<std::uint64_t>[]>(readers);
    for (unsigned k = 0; k < readers; ++k) publisher_.progress[k] = 0;
  }
}

ReplayStream::Feed::Feed(ReplayStream& stream) : stream_(stream) {
  if (stream_.publisher_.window == 0) return;
  slot_ = stream_.joined_.fetch_add(1);
  if (slot_ >= stream_.publisher_.readers) throw std::logic_error("ReplayStream: more feeds than readers");
}

ReplayStream::Feed::~Feed() {
  if (stream_.publisher_.window != 0) passed(UINT64_MAX);  // holds nothing back any more
}

void ReplayStream::Feed::passed(std::uint64_t operation) {
  Publisher& p = stream_.publisher_;
  p.progress[slot_].store(operation, std::memory_order_release);
  p.progress_version.fetch_add(1, std::memory_order_release);
  p.progress_version.notify_all();
}

ReplayStream::View ReplayStream::Feed::acquire(std::uint64_t from) {
  Publisher& p = stream_.publisher_;
  if (p.window != 0) passed(from);
  View v = stream_.acquire(from);
  if (p.window != 0) {
    v.mask = p.window - 1;
    // The builder writes up to kEvery operations ahead of a published count
    // before it waits: a batch of a quarter of the ring leaves it room.
    v.batch = p.window / 4;
  }
  return v;
}

void ReplayStream::Feed::release() { stream_.release(); }

void ReplayStream::build() {
  std::exception_ptr error;
  try {
    // The arrays' buffers move with the vectors into trace_: the pointers
    // readers hold stay valid, and they read trace_ itself only once ended_.
    trace_ = load_replay(reader_, &publisher_);
  } catch (...) {
    error = std::current_exception();
    failed_.store(true, std::memory_order_release);
  }
  {
    std::lock_guard l(end_mu_);
    ended_.store(true, std::memory_order_release);
  }
  end_cv_.notify_all();
  publisher_.version.fetch_add(1, std::memory_order_release);  // wakes readers waiting for more
  publisher_.version.notify_all();
  if (error) std::rethrow_exception(error);
}

ReplayStream::View ReplayStream::acquire(std::uint64_t from) {
  for (;;) {
    // The version first: a publication after this load changes it, so the
    // wait below returns at once instead of missing it.
    const std::uint32_t version = publisher_.version.load(std::memory_order_acquire);
    const bool ended = ended_.load(std::memory_order_acquire);
    if (ended || publisher_.available.load(std::memory_order_acquire) > from) {
      publisher_.growth.lock_shared();
      View v;
      v.ops = publisher_.ops;
      v.sizes = publisher_.sizes;
      v.available = failed() ? from : publisher_.available.load(std::memory_order_acquire);
      v.max_live = publisher_.max_live.load(std::memory_order_relaxed);
      v.done = ended;  // the end was published before ended_ was set: available is final
      return v;
    }
    // Caught up with the builder: decode a chunk for it rather than wait
    // (the builder's thread, which decodes what the reader's threads have not
    // reached, is what this reader waits for).
    if (!reader_.help_decode()) publisher_.version.wait(version, std::memory_order_acquire);
  }
}

void ReplayStream::release() { publisher_.growth.unlock_shared(); }

const ReplayTrace& ReplayStream::wait_complete() {
  std::unique_lock l(end_mu_);
  end_cv_.wait(l, [&] { return ended_.load(std::memory_order_acquire); });
  return trace_;
}

std::uint64_t ReplayStream::expected_operations() const noexcept {
  return ended_.load(std::memory_order_acquire) && !failed() ? trace_.summary.allocations + trace_.summary.releases
                                                              : expected_;
}

}  // namespace tailor::simulate
