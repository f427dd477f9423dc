// SPDX-License-Identifier: MIT
// Decoding chunks ahead of the merge on worker threads (chunk_pipeline.h).
#include "trace/chunk_pipeline.h"

#include <algorithm>
#include <system_error>
#include <utility>

namespace tailor::trace {

ChunkPipeline::ChunkPipeline(const std::string& path, const std::uint8_t* data, const std::vector<ChunkRef>& chunks,
                             unsigned workers, unsigned skip)
    : path_(path),
      data_(data),
      chunks_(chunks),
      workers_(workers),
      skip_(skip),
      window_(2 + 4 * std::size_t{workers ? workers : 1}),  // helpers decode ahead without workers too
      slots_(chunks.size()) {
  // The merge needs a thread's next chunk when the merged time reaches the
  // chunk's first time, so first times (ties in file order) predict its order.
  schedule_.resize(chunks.size());
  for (std::size_t i = 0; i < chunks.size(); ++i) schedule_[i] = i;
  std::stable_sort(schedule_.begin(), schedule_.end(), [&chunks](std::size_t a, std::size_t b) {
    return chunks[a].h.first_time_ns < chunks[b].h.first_time_ns;
  });
}

ChunkPipeline::~ChunkPipeline() { stop(); }

void ChunkPipeline::start() {
  started_ = true;
  for (unsigned i = 0; i < workers_; ++i) {
    try {
      threads_.emplace_back([this] { work(); });
    } catch (const std::system_error&) {
      break;  // no more threads to be had: the caller decodes what the others do not
    }
  }
}

void ChunkPipeline::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_.notify_all();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
  stopping_ = false;
  started_ = false;
}

void ChunkPipeline::reset() {
  stop();
  for (Slot& s : slots_) {
    if (s.events.capacity() != 0) spare_.push_back(std::move(s.events));
    s = Slot{};
  }
  if (spare_.size() > window_) spare_.resize(window_);
  cursor_ = 0;
  ahead_ = 0;
}

bool ChunkPipeline::claim(std::size_t& chunk) {
  if (ahead_ >= window_) return false;
  while (cursor_ < schedule_.size() && slots_[schedule_[cursor_]].state != State::Pending) ++cursor_;
  if (cursor_ == schedule_.size()) return false;
  chunk = schedule_[cursor_++];
  slots_[chunk].state = State::Claimed;
  ++ahead_;
  return true;
}

void ChunkPipeline::decode_claimed(std::size_t chunk, std::unique_lock<std::mutex>& lock,
                                   ChunkScratch& scratch) {
  std::vector<Event> events;
  if (!spare_.empty()) {
    events = std::move(spare_.back());
    spare_.pop_back();
  }
  lock.unlock();
  std::exception_ptr error;
  try {
    decode_chunk(path_, data_, chunks_[chunk], scratch, events, skip_);
  } catch (...) {
    error = std::current_exception();
  }
  lock.lock();
  Slot& s = slots_[chunk];
  s.events = std::move(events);
  s.error = error;
  s.state = State::Ready;
  ready_.notify_all();
}

void ChunkPipeline::work() {
  ChunkScratch scratch;
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    std::size_t chunk = 0;
    if (claim(chunk))
      decode_claimed(chunk, lock, scratch);
    else
      work_.wait(lock);
  }
}

bool ChunkPipeline::help() {
  std::unique_lock lock(mutex_);
  std::size_t chunk = 0;
  if (!claim(chunk)) return false;
  ChunkScratch scratch;
  if (!spare_scratch_.empty()) {
    scratch = std::move(spare_scratch_.back());
    spare_scratch_.pop_back();
  }
  decode_claimed(chunk, lock, scratch);
  spare_scratch_.push_back(std::move(scratch));
  return true;
}

void ChunkPipeline::take(std::size_t chunk, std::vector<Event>& events) {
  std::unique_lock lock(mutex_);
  if (!started_) start();
  Slot& s = slots_[chunk];
  while (s.state != State::Ready) {
    if (s.state == State::Pending) {  // not reached by the workers yet: decode it here
      s.state = State::Taken;
      lock.unlock();
      decode_chunk(path_, data_, chunks_[chunk], scratch_, events, skip_);
      return;
    }
    // A worker is decoding it: decode another chunk meanwhile rather than idle.
    std::size_t other = 0;
    if (claim(other))
      decode_claimed(other, lock, scratch_);
    else
      ready_.wait(lock);
  }
  s.state = State::Taken;
  --ahead_;
  std::swap(events, s.events);
  if (s.events.capacity() != 0) spare_.push_back(std::move(s.events));
  s.events = {};
  std::exception_ptr error = std::exchange(s.error, nullptr);
  lock.unlock();
  work_.notify_one();
  if (error) std::rethrow_exception(error);
}

}  // namespace tailor::trace
