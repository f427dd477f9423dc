// SPDX-License-Identifier: MIT
// Writes events of several threads as a trace file (each thread's events as
// its own chunks, as the recorder writes them), so that the replay tests can
// read multithreaded traces back through the Reader's merge by time.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "tailor/trace/event.h"
#include "tailor/trace/writer.h"

namespace tailor::test {

/// Event `op` of `thread` at time `time`: size, address, aux as in docs/trace-format.md.
inline trace::Event event(std::uint32_t thread, std::uint64_t time, trace::Op op, std::uint64_t size,
                          std::uint64_t address, std::uint64_t aux = 0, std::uint8_t flags = 0) {
  trace::Event e;
  e.thread = thread;
  e.time_ns = time;
  e.op = op;
  e.size = size;
  e.address = address;
  e.aux = aux;
  e.flags = flags;
  return e;
}

inline void write_thread_trace(const std::string& path, const std::vector<trace::Event>& events) {
  std::map<std::uint32_t, std::vector<trace::Event>> by_thread;
  for (const auto& e : events) by_thread[e.thread].push_back(e);
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw std::runtime_error("cannot create " + path);
  trace::Writer w;
  if (!w.init(4096)) throw std::runtime_error("Writer::init failed");
  w.attach(fd);
  trace::HeaderFields h;
  h.page_size = 4096;
  h.pid = 1;
  h.executable = "synthetic";
  h.command_line = "synthetic";
  bool ok = w.write_header(h);
  std::uint64_t last = 0;
  for (const auto& [thread, v] : by_thread) {
    for (std::size_t i = 0; ok && i < v.size(); i += w.max_events())
      ok = w.write_events(thread, v.data() + i, std::min(w.max_events(), v.size() - i));
    if (!v.empty()) last = std::max(last, v.back().time_ns);
  }
  ok = ok && w.write_end({trace::EndReason::Exit, 0, events.size(), 0, last});
  ::close(fd);
  if (!ok) throw std::runtime_error("cannot write " + path);
}

}  // namespace tailor::test
