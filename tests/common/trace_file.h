// SPDX-License-Identifier: MIT
// The steps that every test writing a trace file takes, written once: an
// event from its fields, a Writer on a new file, events cut into chunks (one
// thread's, or each thread's as its own chunks, as the recorder writes them),
// and a whole synthetic trace. The format tests (tests/trace) and those of the
// readers (record, replay, simulate, report) share them, so that a change of
// the Writer's API is made here and not in every test file.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "tailor/trace/event.h"
#include "tailor/trace/writer.h"

namespace tailor::test {

/// Event `op` of `thread` at time `time`: size, address, aux and flags as in docs/trace-format.md.
inline trace::Event event(std::uint32_t thread, std::uint64_t time, trace::Op op, std::uint64_t size,
                          std::uint64_t address, std::uint64_t aux = 0, std::uint8_t flags = 0,
                          std::uint64_t callsite = 0) {
  return {.time_ns = time, .size = size, .address = address, .aux = aux, .callsite = callsite, .thread = thread,
          .op = op, .flags = flags};
}

/// Event `op` as the simulator reads it: no time, thread or call site.
inline trace::Event untimed(trace::Op op, std::uint64_t size, std::uint64_t address, std::uint64_t aux = 0) {
  return event(0, 0, op, size, address, aux);
}

/// The header of the synthetic traces: page size 4096, pid 1, "synthetic" for executable and command line.
inline trace::HeaderFields synthetic_header() {
  trace::HeaderFields h;
  h.page_size = 4096;
  h.pid = 1;
  h.executable = "synthetic";
  h.command_line = "synthetic";
  return h;
}

/// The header of a process `pid` (parent 1, pages of 4096 bytes) started at `start_monotonic_ns`; the strings are
/// not copied. command_line holds the arguments separated by NULs.
inline trace::HeaderFields process_header(std::uint32_t pid, std::uint64_t start_monotonic_ns,
                                          std::string_view executable, std::string_view command_line) {
  return {.page_size = 4096, .pid = pid, .ppid = 1, .start_monotonic_ns = start_monotonic_ns, .executable = executable,
          .command_line = command_line};
}

/// A Writer on the file `path` (created or truncated) for chunks of up to
/// `max_events` events; the file is closed when it goes. Throws where the file
/// or the Writer cannot be made.
class TraceOut {
 public:
  explicit TraceOut(const std::string& path, std::size_t max_events = trace::Writer::kDefaultChunkEvents,
                    int zstd_level = 1) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) throw std::runtime_error("cannot create " + path);
    if (!writer_.init(max_events, zstd_level)) throw std::runtime_error("Writer::init failed");
    writer_.attach(fd_);
  }
  ~TraceOut() { close(); }
  TraceOut(const TraceOut&) = delete;
  TraceOut& operator=(const TraceOut&) = delete;

  trace::Writer& writer() { return writer_; }
  trace::Writer* operator->() { return &writer_; }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
  trace::Writer writer_;
};

/// Writes `n` events as chunks of `thread` of up to `per_chunk` events (the Writer's largest by default).
inline bool write_chunks(trace::Writer& w, std::uint32_t thread, const trace::Event* events, std::size_t n,
                         std::size_t per_chunk = 0) {
  if (per_chunk == 0) per_chunk = w.max_events();
  for (std::size_t i = 0; i < n; i += per_chunk)
    if (!w.write_events(thread, events + i, std::min(per_chunk, n - i))) return false;
  return true;
}

/// Writes the events of each thread (by their `thread` fields), in their order, as that thread's chunks; the
/// threads in ascending order. `last`, if given, receives the latest time a thread's events end with.
inline bool write_chunks_by_thread(trace::Writer& w, const std::vector<trace::Event>& events,
                                   std::uint64_t* last = nullptr) {
  std::map<std::uint32_t, std::vector<trace::Event>> by_thread;
  for (const auto& e : events) by_thread[e.thread].push_back(e);
  for (const auto& [thread, v] : by_thread) {
    if (!write_chunks(w, thread, v.data(), v.size())) return false;
    if (last) *last = std::max(*last, v.back().time_ns);
  }
  return true;
}

/// Writes `events` as a trace file with synthetic_header(), chunks of up to 4096 events and an end record (exit,
/// status 0): all in their order as chunks of thread 0 (`by_thread` false) or each thread's events as its own
/// chunks. Throws where the file cannot be written.
inline void write_synthetic_trace(const std::string& path, const std::vector<trace::Event>& events, bool by_thread) {
  TraceOut out(path, 4096);
  trace::Writer& w = out.writer();
  std::uint64_t last = 0;
  bool ok = w.write_header(synthetic_header());
  if (by_thread) {
    ok = ok && write_chunks_by_thread(w, events, &last);
  } else {
    ok = ok && write_chunks(w, 0, events.data(), events.size());
    if (!events.empty()) last = events.back().time_ns;
  }
  ok = ok && w.write_end({trace::EndReason::Exit, 0, events.size(), 0, last});
  out.close();
  if (!ok) throw std::runtime_error("cannot write " + path);
}

/// Events of one thread as a trace file (thread 0), for the simulator tests that need a file.
inline void write_trace(const std::string& path, const std::vector<trace::Event>& events) {
  write_synthetic_trace(path, events, false);
}

/// Events of several threads as a trace file, each thread's as its own chunks as the recorder writes them, so
/// that the replay tests read multithreaded traces back through the Reader's merge by time.
inline void write_thread_trace(const std::string& path, const std::vector<trace::Event>& events) {
  write_synthetic_trace(path, events, true);
}

}  // namespace tailor::test
