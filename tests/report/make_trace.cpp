// SPDX-License-Identifier: MIT
// Writes small traces of known content through the public Writer API, for
// the report tests (tests/report/report_test.py): no program runs under
// LD_PRELOAD, so they also run in the sanitizer builds.
// Usage: make_trace OUT one|threads
//   one      a single malloc(24)
//   threads  three threads; each allocates 400 blocks (sizes 16..4096 by a
//            fixed rule) from 5 call sites; the main thread frees its own,
//            threads 1 and 2 free each other's (800 cross-thread frees);
//            small chunks, so that a cut copy keeps part of the events.
//            With whole stacks: main (0x400100) calls work_a (0x400500),
//            which holds call sites 0-2, and work_b (0x400600), sites 3-4
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <iterator>
#include <vector>

#include "common/trace_file.h"
#include "tailor/trace/writer.h"

namespace tr = tailor::trace;

namespace {

tr::Event event(std::uint64_t time, tr::Op op, std::uint64_t size, std::uint64_t address, std::uint64_t callsite) {
  return tailor::test::event(0, time, op, size, address, 0, 0, callsite);
}

bool write_threads(tr::Writer& w) {
  constexpr std::uint64_t kBlocks = 400;
  std::vector<tr::Event> per_thread[3];
  for (std::uint32_t t = 0; t < 3; ++t) {
    const std::uint64_t base = 0x10000000ull * (t + 1);
    for (std::uint64_t i = 0; i < kBlocks; ++i) {
      const std::uint64_t size = 16ull << ((i * 7 + t) % 9);  // 16 .. 4096
      per_thread[t].push_back(event(1000 + i * 30 + t, i % 3 ? tr::Op::Malloc : tr::Op::New, size,
                                    base + i * 8192, 0x401000 + (i % 5) * 0x40));
      per_thread[t].back().stack = static_cast<std::uint32_t>(4 + i % 5);  // the node of its call site
    }
  }
  // The stack tree, written once before any event names it.
  const tr::StackNode nodes[] = {{1, 0, 0x400100}, {2, 1, 0x400500}, {3, 1, 0x400600},
                                 {4, 2, 0x401000}, {5, 2, 0x401040}, {6, 2, 0x401080},
                                 {7, 3, 0x4010c0}, {8, 3, 0x401100}};
  if (!w.write_stacks(0, nodes, std::size(nodes))) return false;
  // Frees: thread 0 its own blocks, thread 1 thread 2's and thread 2 thread 1's.
  const std::uint32_t freer_of[3] = {0, 2, 1};
  std::vector<tr::Event> frees[3];
  for (std::uint32_t t = 0; t < 3; ++t)
    for (std::uint64_t i = 0; i < kBlocks; ++i)
      if (i % 4 != 3)  // a quarter stays live to the end
        frees[freer_of[t]].push_back(
            event(1000 + kBlocks * 30 + i * 30 + t, tr::Op::Free, 0, 0x10000000ull * (t + 1) + i * 8192, 0));
  for (std::uint32_t t = 0; t < 3; ++t) {
    std::vector<tr::Event> all = per_thread[t];
    all.insert(all.end(), frees[t].begin(), frees[t].end());
    if (!tailor::test::write_chunks(w, t, all.data(), all.size(), 50)) return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const bool sampled = argc == 3 && std::strcmp(argv[2], "sampled") == 0;  // threads' events, as a sampled trace
  if (argc != 3 || (std::strcmp(argv[2], "one") != 0 && std::strcmp(argv[2], "threads") != 0 && !sampled)) {
    std::fprintf(stderr, "usage: make_trace OUT one|threads|sampled\n");
    return 2;
  }
  const int fd = ::open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    std::perror(argv[1]);
    return 1;
  }
  tr::Writer w;
  if (!w.init(64, 1)) return 1;
  w.attach(fd);
  tr::HeaderFields header = tailor::test::process_header(4242, 1000, "/usr/bin/example", {"example\0--test", 14});
  if (sampled) header.sample_interval = 4096;
  bool ok = w.write_header(header);
  std::uint64_t events = 1;
  if (std::strcmp(argv[2], "one") == 0) {
    const tr::Event e = event(1000, tr::Op::Malloc, 24, 0x5000, 0x401000);
    ok = ok && w.write_events(0, &e, 1);
  } else {
    ok = ok && write_threads(w);
    events = 3 * 400 + 3 * 300;
  }
  tr::EndRecord end;
  end.events = events;
  end.time_ns = 1'000'000;
  ok = ok && w.write_end(end);
  if (!ok) std::fprintf(stderr, "make_trace: write failed (error %d)\n", w.last_error());
  ::close(fd);
  return ok ? 0 : 1;
}
