// SPDX-License-Identifier: MIT
// Writes events of one thread as a trace file with the Writer, for the
// simulator tests that need a file (load_replay, tailor stats, the CLI).
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "tailor/trace/event.h"
#include "tailor/trace/writer.h"

namespace tailor::test {

inline void write_trace(const std::string& path, const std::vector<trace::Event>& events) {
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
  for (std::size_t i = 0; ok && i < events.size(); i += w.max_events())
    ok = w.write_events(0, events.data() + i, std::min(w.max_events(), events.size() - i));
  const std::uint64_t last = events.empty() ? 0 : events.back().time_ns;
  ok = ok && w.write_end({trace::EndReason::Exit, 0, events.size(), 0, last});
  ::close(fd);
  if (!ok) throw std::runtime_error("cannot write " + path);
}

}  // namespace tailor::test
