// SPDX-License-Identifier: MIT
// Loading a trace into a ReplayTrace; the accounting rules are in replay_trace.h.
#include "simulate/replay_trace.h"

#include <algorithm>
#include <bit>
#include <mutex>
#include <stdexcept>

namespace tailor::simulate {

using trace::Event;
using trace::Op;

std::uint64_t ReplayTrace::event_of(std::uint64_t op) const {
  auto it = std::upper_bound(event_offsets.begin(), event_offsets.end(), op,
                             [](std::uint64_t o, const auto& entry) { return o < entry.first; });
  if (it == event_offsets.begin()) return op;
  return op + std::prev(it)->second;
}

ReplayBuilder::ReplayBuilder(std::uint32_t page_size, std::uint64_t expected_events) {
  r_.summary.page_size = page_size ? page_size : 4096;
  // Room for reallocs that move (two operations for one event) without a copy
  // of the array; memory not written to is never touched.
  r_.operations.reserve(expected_events + expected_events / 4);
  small_index_.assign(kDirectSizes, 0);
}

template <class T>
[[gnu::always_inline]] inline void ReplayBuilder::append(std::vector<T>& array, const T& value, const T** published) {
  if (array.size() != array.capacity()) [[likely]]
    array.push_back(value);
  else
    grow(array, value, published);
}

template <class T>
[[gnu::noinline]] void ReplayBuilder::grow(std::vector<T>& array, const T& value, const T** published) {
  if (published != nullptr) {
    std::unique_lock moving(publisher_->growth);  // readers hold no pointer into the array while it moves
    array.push_back(value);
    *published = array.data();
  } else {
    array.push_back(value);
  }
}

// Sizes seen before: one load for the small ones.
[[gnu::always_inline]] inline std::uint32_t ReplayBuilder::size_index(std::uint64_t bytes) {
  if (bytes < kDirectSizes)
    if (const std::uint32_t known = small_index_[bytes]) return known - 1;
  return new_size_index(bytes);
}

std::uint32_t ReplayBuilder::new_size_index(std::uint64_t bytes) {
  std::uint32_t* slot;
  if (bytes < kDirectSizes) {
    slot = &small_index_[bytes];
  } else {
    auto [it, fresh] = large_index_.try_emplace(bytes, 0);
    if (!fresh) return it->second - 1;
    slot = &it->second;
  }
  if (r_.sizes.size() >= Operation::kMaxSizes)
    throw std::length_error("replay: the trace requests more than 2^25 distinct sizes (the replay form's limit)");
  append(r_.sizes, bytes, publisher_ ? &publisher_->sizes : nullptr);
  *slot = static_cast<std::uint32_t>(r_.sizes.size());
  return *slot - 1;
}

// Takes the operation's two words rather than an Operation: several callers
// inlined into one loop otherwise share one Operation on the stack, written as
// two 4-byte halves and read back as one 8-byte word, a load the CPU cannot
// forward from the two stores (it waits for them to reach the cache: about
// half of the builder's time, perf on cfrac).
[[gnu::always_inline]] inline void ReplayBuilder::push(std::uint32_t block, std::uint32_t word) {
  const std::uint64_t index = count_;
  const std::uint64_t offset = event_ - index;  // wraps around when ops outnumber events; exact modulo 2^64
  if (offset != offset_) {
    r_.event_offsets.emplace_back(index, offset);
    offset_ = offset;
  }
  if (ring_ != nullptr) {
    Operation& slot = ring_[index & ring_mask_];
    slot.block = block;
    slot.word = word;
  } else {
    append(r_.operations, Operation{block, word}, publisher_ ? &publisher_->ops : nullptr);
  }
  ++count_;
  if (publisher_ != nullptr && (count_ & (Publisher::kEvery - 1)) == 0) [[unlikely]]
    publish(true);
}

void ReplayBuilder::publish(bool more) {
  publisher_->max_live.store(live_word_.size(), std::memory_order_relaxed);
  publisher_->available.store(count_, std::memory_order_release);
  publisher_->version.fetch_add(1, std::memory_order_release);
  publisher_->version.notify_all();
  // The next kEvery operations may be written once every reader has passed
  // the ones they will take the place of.
  if (more && ring_ != nullptr && count_ + Publisher::kEvery > publisher_->window)
    wait_for_readers(count_ + Publisher::kEvery - publisher_->window);
}

void ReplayBuilder::wait_for_readers(std::uint64_t passed) {
  for (;;) {
    const std::uint32_t version = publisher_->progress_version.load(std::memory_order_acquire);
    std::uint64_t slowest = UINT64_MAX;
    for (unsigned k = 0; k < publisher_->readers; ++k)
      slowest = std::min(slowest, publisher_->progress[k].load(std::memory_order_acquire));
    if (slowest >= passed) return;
    publisher_->progress_version.wait(version, std::memory_order_acquire);
  }
}

void ReplayBuilder::publish_to(Publisher* publisher) {
  publisher_ = publisher;
  if (publisher_ == nullptr) return;
  std::unique_lock placing(publisher_->growth);
  if (publisher_->window != 0) {
    if (!std::has_single_bit(publisher_->window) || publisher_->window < 4 * Publisher::kEvery)
      throw std::invalid_argument("replay: a window must be a power of two of at least 4 x 2^16 operations");
    publisher_->ring.assign(publisher_->window, Operation{});  // instead of the whole trace's array
    std::vector<Operation>().swap(r_.operations);
    ring_ = publisher_->ring.data();
    ring_mask_ = publisher_->window - 1;
  }
  publisher_->ops = ring_ != nullptr ? ring_ : r_.operations.data();
  publisher_->sizes = r_.sizes.data();
}

[[gnu::always_inline]] inline void ReplayBuilder::release(std::uint64_t address) {
  std::uint32_t id;
  if (!live_.take(address, id)) {
    ++r_.summary.unknown_releases;
    return;
  }
  in_use_ -= r_.sizes[live_word_[id] >> 7];
  free_ids_.push_back(id);
  push(id, live_word_[id] | Operation::kRelease);
  ++r_.summary.releases;
}

void ReplayBuilder::move(std::uint64_t from, std::uint64_t to, std::uint64_t bytes) {
  std::uint32_t old;
  if (!live_.take(from, old)) {
    ++r_.summary.unknown_releases;
    allocate(to, bytes, 0);
    return;
  }
  in_use_ -= r_.sizes[live_word_[old] >> 7];  // as tailor stats counts: the old block ends first
  allocate(to, bytes, 0);                      // an allocator moving a block needs the new one before it frees the old
  push(old, live_word_[old] | Operation::kRelease);
  ++r_.summary.releases;
  free_ids_.push_back(old);
}

[[gnu::always_inline]] inline void ReplayBuilder::allocate(std::uint64_t address, std::uint64_t bytes,
                                                              std::uint64_t alignment) {
  auto [slot, fresh] = live_.try_emplace(address);
  if (!fresh) {  // the trace missed this address's release
    ++r_.summary.reused_live;
    release(address);
    slot = live_.try_emplace(address).first;
  }
  std::uint32_t id;
  if (!free_ids_.empty()) {
    id = free_ids_.back();
    free_ids_.pop_back();
  } else {
    if (live_word_.size() >= UINT32_MAX) throw std::length_error("replay: more than 2^32 blocks live at once");
    id = static_cast<std::uint32_t>(live_word_.size());
    live_word_.push_back(0);
  }
  // Alignments are powers of two; anything else (a bad call that still
  // returned a block) is rounded up to one.
  const unsigned align_log2 = alignment > 1 ? std::min(63u, static_cast<unsigned>(std::bit_width(alignment - 1))) : 0;
  const Operation op = Operation::make(Operation::kAllocate, id, size_index(bytes), align_log2);
  *slot = id;
  live_word_[id] = op.word;
  in_use_ += bytes;
  r_.summary.max_in_use_bytes = std::max(r_.summary.max_in_use_bytes, in_use_);
  push(id, op.word);
  ++r_.summary.allocations;
}

[[gnu::always_inline]] inline void ReplayBuilder::add_one(const Event& e) {
  if (e.op == Op::ThreadStart || e.op == Op::ThreadExit) {
    ++r_.summary.other_events;
  } else if (trace::is_allocation(e.op)) {
    if (e.address == 0)
      ++r_.summary.failed;
    else
      allocate(e.address, trace::requested_bytes(e), trace::is_aligned(e) ? e.aux : 0);
  } else if (trace::is_release(e.op)) {
    if (e.address == 0)
      ++r_.summary.null_releases;
    else
      release(e.address);
  } else if (e.op == Op::Realloc) {
    if (e.aux == 0) {
      if (e.address == 0) {
        ++r_.summary.failed;
      } else {
        ++r_.summary.reallocs;
        allocate(e.address, e.size, 0);
      }
    } else if (e.address == 0) {
      if (e.size == 0) {
        ++r_.summary.reallocs;
        release(e.aux);
      } else {
        ++r_.summary.failed;
      }
    } else {
      ++r_.summary.reallocs;
      move(e.aux, e.address, e.size);
    }
  } else {
    ++r_.summary.other_events;
  }
  ++event_;
  ++r_.summary.events;
}

void ReplayBuilder::add(const Event& e) { add_one(e); }

void ReplayBuilder::add_run(const Event* events, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) add_one(events[i]);
}

std::vector<std::uint64_t> ReplayBuilder::live_addresses() const {
  std::vector<std::uint64_t> out;
  out.reserve(live_.size());
  live_.for_each([&](std::uint64_t address, std::uint32_t) { out.push_back(address); });
  std::sort(out.begin(), out.end());
  return out;
}

ReplayTrace ReplayBuilder::finish() {
  if (publisher_ != nullptr) publish(false);
  r_.summary.max_live_blocks = live_word_.size();
  r_.summary.live_blocks_at_end = live_.size();
  return std::move(r_);
}

ReplayTrace load_replay(trace::Reader& reader, Publisher* publisher) {
  trace::require_every_call(reader, "a simulation or search");
  ReplayBuilder builder(reader.header().page_size, reader.event_count());
  builder.publish_to(publisher);
  // A replay reads neither times nor call sites: their columns are not
  // decoded (about a tenth of simulate's CPU), and the reader reads them
  // again afterwards, whatever happens here.
  struct AllColumnsAfter {
    trace::Reader& r;
    ~AllColumnsAfter() { r.set_columns(true, true); }
  } restore{reader};
  reader.set_columns(false, false);
  const Event* run;
  while (const std::size_t n = reader.next_run(run)) builder.add_run(run, n);
  return builder.finish();
}

ReplayTrace build_replay(std::span<const Event> events, std::uint32_t page_size) {
  ReplayBuilder builder(page_size, events.size());
  for (const Event& e : events) builder.add(e);
  return builder.finish();
}

}  // namespace tailor::simulate
