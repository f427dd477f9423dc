// SPDX-License-Identifier: MIT
// A tool on the installed trace library: reads a trace written by
// `tailor record` and prints its events, threads and the number of
// allocation, release and realloc calls, one "name value" pair a line.
// Usage: trace_counts TRACE
#include <tailor/trace.h>

#include <cstdint>
#include <cstdio>
#include <exception>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: trace_counts TRACE\n");
    return 2;
  }
  try {
    tailor::trace::Reader reader(argv[1]);
    std::uint64_t events = 0, allocations = 0, releases = 0, reallocs = 0;
    tailor::trace::Event e;
    while (reader.next(e)) {
      ++events;
      if (tailor::trace::is_allocation(e.op)) ++allocations;
      if (tailor::trace::is_release(e.op)) ++releases;
      if (e.op == tailor::trace::Op::Realloc) ++reallocs;
    }
    std::printf("events %llu\nthreads %u\nallocations %llu\nreleases %llu\nreallocs %llu\n",
                static_cast<unsigned long long>(events), reader.thread_count(),
                static_cast<unsigned long long>(allocations), static_cast<unsigned long long>(releases),
                static_cast<unsigned long long>(reallocs));
    return reader.complete() ? 0 : 1;
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "trace_counts: %s\n", ex.what());
    return 1;
  }
}
