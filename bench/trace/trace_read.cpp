// SPDX-License-Identifier: MIT
// bench_trace_read TRACE [THREADS [COLUMNS]]: reads every event of a trace
// through tailor::trace::Reader, as every command does, and prints the events
// per second, so that reading can be measured apart from what a command does
// with the events. THREADS is Reader::set_decode_threads (0: one per core);
// COLUMNS is `all` (the default) or `replay`, the columns simulate and search
// read (neither times nor call sites: Reader::set_columns). With THREADS 1,
// the time is the decoding's CPU time per event.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>

#include "tailor/trace/reader.h"

int main(int argc, char** argv) {
  const std::string_view columns = argc > 3 ? argv[3] : "all";
  if (argc < 2 || argc > 4 || (columns != "all" && columns != "replay")) {
    std::fprintf(stderr, "usage: bench_trace_read TRACE [THREADS [all|replay]]\n");
    return 2;
  }
  try {
    const auto start = std::chrono::steady_clock::now();
    tailor::trace::Reader reader(argv[1]);
    if (argc >= 3) reader.set_decode_threads(static_cast<unsigned>(std::strtoul(argv[2], nullptr, 10)));
    if (columns == "replay") reader.set_columns(false, false);
    const auto opened = std::chrono::steady_clock::now();
    tailor::trace::Event e;
    std::uint64_t n = 0, check = 0;
    while (reader.next(e)) {
      ++n;
      check += e.size ^ e.address;  // uses every event, so that nothing is optimized away
    }
    const auto end = std::chrono::steady_clock::now();
    const double open_s = std::chrono::duration<double>(opened - start).count();
    const double total_s = std::chrono::duration<double>(end - start).count();
    std::printf("%llu events in %.3f s (open %.3f s): %.1f M events/s (check %llx)\n",
                static_cast<unsigned long long>(n), total_s, open_s, static_cast<double>(n) / total_s / 1e6,
                static_cast<unsigned long long>(check));
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "bench_trace_read: %s\n", ex.what());
    return 1;
  }
  return 0;
}
