// SPDX-License-Identifier: MIT
// Building, writing and reading replay plans; the rules are in replay_plan.h,
// the format in plan_format.h.
#include "replay/replay_plan.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace tailor::replay {

using trace::Event;
using trace::Op;

namespace {

plan::AlignedCall aligned_call(Op op) {
  switch (op) {
    case Op::Memalign: return plan::kMemalign;
    case Op::PosixMemalign: return plan::kPosixMemalign;
    case Op::AlignedAlloc: return plan::kAlignedAlloc;
    case Op::Valloc: return plan::kValloc;
    case Op::Pvalloc: return plan::kPvalloc;
    default: return plan::kNewAligned;
  }
}

}  // namespace

PlanBuilder::ThreadState& PlanBuilder::thread(std::uint32_t trace_thread) {
  if (!threads_.empty() && threads_[last_].plan.trace_thread == trace_thread) return threads_[last_];
  auto [it, added] = thread_index_.try_emplace(trace_thread, static_cast<std::uint32_t>(threads_.size()));
  if (added) {
    threads_.emplace_back();
    threads_.back().index = it->second;
    threads_.back().plan.trace_thread = trace_thread;
    // Most traces are mostly one thread's: room for every event in the
    // first thread, and a quarter more for extension words, saves copying
    // as its ops grow (capacity never written to is never touched).
    if (threads_.size() == 1) threads_.back().plan.words.reserve(expected_events_ + expected_events_ / 4);
  }
  last_ = it->second;
  return threads_[last_];
}

std::uint32_t PlanBuilder::take_slot(ThreadState& t) {
  if (!t.free_slots.empty()) {
    const std::uint32_t slot = t.free_slots.back();
    t.free_slots.pop_back();
    return slot;
  }
  if (generation_.size() >= plan::kMaxSlots) throw std::length_error("replay plan: more than 2^32 slots");
  generation_.push_back(0);
  return static_cast<std::uint32_t>(generation_.size() - 1);
}

void PlanBuilder::emit(ThreadState& t, plan::Kind kind, std::uint32_t slot, std::uint64_t size, unsigned flags,
                       std::uint64_t extra, std::uint64_t wait) {
  const bool big = size >= plan::kInlineSizeLimit;
  auto& w = t.plan.words;
  w.push_back(plan::head_word(kind, flags | (big ? plan::kBigSize : 0u), slot, big ? 0 : size));
  if (big) w.push_back(size);
  if (kind == plan::kCalloc || kind == plan::kAligned) w.push_back(extra);
  if (flags & plan::kWait) w.push_back(wait);
  ++t.plan.calls;
  ++s_.calls[kind];
  ++s_.calls[0];
}

void PlanBuilder::allocate(ThreadState& t, std::uint64_t address, plan::Kind kind, std::uint64_t size,
                           std::uint64_t element, std::uint64_t alignment_word) {
  if (live_.contains(address)) {
    ++s_.reused_live;
    release(t, address);
  }
  const std::uint32_t slot = take_slot(t);
  ++generation_[slot];
  live_.emplace(address, Live{slot, t.index});
  s_.max_live = std::max<std::uint64_t>(s_.max_live, live_.size());
  emit(t, kind, slot, size, 0, kind == plan::kCalloc ? element : alignment_word, 0);
}

void PlanBuilder::release(ThreadState& t, std::uint64_t address) {
  auto it = live_.find(address);
  if (it == live_.end()) {
    ++s_.unknown_releases;
    return;
  }
  const Live block = it->second;
  live_.erase(it);
  const bool other = block.thread != t.index;
  s_.cross_thread += other;
  emit(t, plan::kFree, block.slot, 0, other ? plan::kWait : 0u, 0, generation_[block.slot]);
  t.free_slots.push_back(block.slot);
}

void PlanBuilder::realloc(ThreadState& t, std::uint64_t old_address, std::uint64_t address, std::uint64_t size) {
  auto it = live_.find(old_address);
  if (it == live_.end()) {
    ++s_.unknown_releases;
    allocate(t, address, plan::kMalloc, size);
    return;
  }
  const Live block = it->second;
  live_.erase(it);
  if (live_.contains(address)) {
    ++s_.reused_live;
    release(t, address);
  }
  const bool other = block.thread != t.index;
  s_.cross_thread += other;
  const std::uint64_t wait = generation_[block.slot]++;
  live_.emplace(address, Live{block.slot, t.index});
  emit(t, plan::kRealloc, block.slot, size, other ? plan::kWait : 0u, 0, wait);
}

void PlanBuilder::add(const Event& e) {
  ++s_.events;
  if (e.op == Op::ThreadStart || e.op == Op::ThreadExit) {
    ++s_.other_events;
    return;
  }
  if (trace::is_allocation(e.op)) {
    const bool aligned = trace::is_aligned(e);
    if (e.address == 0 || (aligned && e.aux > plan::kMaxAlignment)) {  // no such alignment can have succeeded
      ++s_.failed;
      return;
    }
    ThreadState& t = thread(e.thread);
    if (aligned)
      allocate(t, e.address, plan::kAligned, e.size, 0, e.aux | (std::uint64_t{aligned_call(e.op)} << 56));
    else if (e.op == Op::Calloc)
      allocate(t, e.address, plan::kCalloc, e.size, e.aux);
    else
      allocate(t, e.address, plan::kMalloc, e.size);
  } else if (trace::is_release(e.op)) {
    if (e.address == 0)
      ++s_.null_releases;
    else
      release(thread(e.thread), e.address);
  } else if (e.op == Op::Realloc) {
    if (e.address == 0 && !(e.aux != 0 && e.size == 0)) {
      ++s_.failed;  // a failed realloc changes nothing
    } else if (e.aux == 0) {
      allocate(thread(e.thread), e.address, plan::kMalloc, e.size);
    } else if (e.address == 0) {
      release(thread(e.thread), e.aux);  // realloc(p, 0) that freed p
    } else {
      realloc(thread(e.thread), e.aux, e.address, e.size);
    }
  } else {
    ++s_.other_events;
  }
}

Plan PlanBuilder::finish() {
  Plan p;
  std::sort(threads_.begin(), threads_.end(),
            [](const ThreadState& a, const ThreadState& b) { return a.plan.trace_thread < b.plan.trace_thread; });
  for (auto& t : threads_)
    if (t.plan.calls) p.threads.push_back(std::move(t.plan));
  s_.slots = generation_.size();
  s_.live_at_end = live_.size();
  p.summary = s_;
  threads_.clear();
  thread_index_.clear();
  live_.clear();
  generation_.clear();
  return p;
}

Plan build_plan(trace::Reader& reader) {
  trace::require_every_call(reader, "a replay");
  PlanBuilder b(reader.event_count());
  reader.rewind();
  Event e;
  while (reader.next(e)) b.add(e);
  reader.rewind();
  return b.finish();
}

Plan build_plan(std::span<const Event> events) {
  PlanBuilder b;
  for (const Event& e : events) b.add(e);
  return b.finish();
}

// --- the file ---------------------------------------------------------------------

namespace {

class File {
 public:
  File(const std::string& path, int flags) : path_(path), fd_(::open(path.c_str(), flags | O_CLOEXEC, 0644)) {
    if (fd_ < 0) fail(flags & O_WRONLY ? "cannot create" : "cannot open");
  }
  ~File() {
    if (fd_ >= 0) ::close(fd_);
  }
  File(const File&) = delete;
  File& operator=(const File&) = delete;

  void write(const void* data, std::size_t size) {
    auto* p = static_cast<const char*>(data);
    while (size > 0) {
      const ssize_t n = ::write(fd_, p, size);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail("cannot write");
      p += n;
      size -= static_cast<std::size_t>(n);
    }
  }
  void read_at(void* data, std::size_t size, std::uint64_t offset, const char* what) {
    auto* p = static_cast<char*>(data);
    while (size > 0) {
      const ssize_t n = ::pread(fd_, p, size, static_cast<off_t>(offset));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) fail("cannot read");
      if (n == 0) bad(std::string("cut inside ") + what);
      p += n;
      size -= static_cast<std::size_t>(n);
      offset += static_cast<std::uint64_t>(n);
    }
  }
  std::uint64_t size() {
    struct stat st {};
    if (::fstat(fd_, &st) != 0) fail("cannot stat");
    return static_cast<std::uint64_t>(st.st_size);
  }
  void close() {
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) fail("cannot write");
  }
  [[noreturn]] void bad(const std::string& what) const {
    throw std::runtime_error(path_ + ": not a valid replay plan: " + what);
  }

 private:
  [[noreturn]] void fail(const char* what) const {
    throw std::runtime_error(std::string(what) + " replay plan " + path_ + ": " + std::strerror(errno));
  }
  std::string path_;
  int fd_;
};

}  // namespace

void write_plan(const Plan& p, const std::string& path) {
  plan::PlanHeader h{};
  std::memcpy(h.magic, plan::kMagic, sizeof h.magic);
  h.version = plan::kVersion;
  h.threads = static_cast<std::uint32_t>(p.threads.size());
  h.slots = p.summary.slots;
  std::copy(std::begin(p.summary.calls), std::end(p.summary.calls), h.calls);
  std::vector<plan::PlanThreadEntry> entries(p.threads.size());
  std::uint64_t offset = sizeof h + entries.size() * sizeof(plan::PlanThreadEntry);
  for (std::size_t i = 0; i < p.threads.size(); ++i) {
    entries[i] = {offset, p.threads[i].words.size(), p.threads[i].calls, p.threads[i].trace_thread, 0};
    offset += p.threads[i].words.size() * sizeof(std::uint64_t);
    h.words += p.threads[i].words.size();
  }
  File f(path, O_WRONLY | O_CREAT | O_TRUNC);
  f.write(&h, sizeof h);
  f.write(entries.data(), entries.size() * sizeof(plan::PlanThreadEntry));
  for (const auto& t : p.threads) f.write(t.words.data(), t.words.size() * sizeof(std::uint64_t));
  f.close();
}

Plan read_plan(const std::string& path) {
  File f(path, O_RDONLY);
  const std::uint64_t file_size = f.size();
  plan::PlanHeader h{};
  f.read_at(&h, sizeof h, 0, "its header");
  if (std::memcmp(h.magic, plan::kMagic, sizeof h.magic) != 0) f.bad("bad magic");
  if (h.version != plan::kVersion) f.bad("version " + std::to_string(h.version) + ", expected 1");
  if (h.slots > plan::kMaxSlots) f.bad("too many slots");
  if (h.threads > (file_size - sizeof h) / sizeof(plan::PlanThreadEntry)) f.bad("cut inside its thread table");
  std::vector<plan::PlanThreadEntry> entries(h.threads);
  f.read_at(entries.data(), entries.size() * sizeof(plan::PlanThreadEntry), sizeof h, "its thread table");

  Plan p;
  p.summary.slots = h.slots;
  std::uint64_t words = 0;
  for (std::uint32_t i = 0; i < h.threads; ++i) {
    const auto& e = entries[i];
    const std::string which = "thread " + std::to_string(i);
    if (e.offset % 8 != 0 || e.offset > file_size || e.words > (file_size - e.offset) / 8)
      f.bad(which + ": its ops lie outside the file");
    PlanThread t;
    t.trace_thread = e.trace_thread;
    t.words.resize(e.words);
    f.read_at(t.words.data(), t.words.size() * 8, e.offset, "the ops");
    for (std::size_t k = 0; k < t.words.size();) {
      const std::uint64_t head = t.words[k];
      const unsigned kind = plan::kind_of(head);
      if (kind == 0 || kind >= plan::kKinds) f.bad(which + ": word " + std::to_string(k) + ": unknown op");
      if (plan::slot_of(head) >= h.slots) f.bad(which + ": word " + std::to_string(k) + ": slot out of range");
      const unsigned n = plan::op_words(head);
      if (n > t.words.size() - k) f.bad(which + ": its last op is cut");
      ++t.calls;
      ++p.summary.calls[kind];
      k += n;
    }
    if (t.calls != e.calls) f.bad(which + ": " + std::to_string(t.calls) + " ops, its entry says " + std::to_string(e.calls));
    words += e.words;
    p.threads.push_back(std::move(t));
  }
  for (const auto& t : p.threads) p.summary.calls[0] += t.calls;
  if (words != h.words) f.bad("the threads hold " + std::to_string(words) + " words, the header says " + std::to_string(h.words));
  for (unsigned k = 0; k < plan::kKinds; ++k)
    if (p.summary.calls[k] != h.calls[k]) f.bad("the op counts differ from the header's");
  return p;
}

std::vector<plan::Op> decode(const PlanThread& t) {
  std::vector<plan::Op> ops;
  ops.reserve(t.calls);
  for (std::size_t k = 0; k < t.words.size(); k += plan::op_words(t.words[k])) {
    if (plan::op_words(t.words[k]) > t.words.size() - k) throw std::runtime_error("replay plan: last op cut");
    ops.push_back(plan::decode_op(t.words.data() + k));
  }
  return ops;
}

}  // namespace tailor::replay
