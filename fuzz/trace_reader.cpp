// SPDX-License-Identifier: MIT
// Fuzz target: the trace reader (tailor::trace::Reader) on arbitrary bytes.
// A damaged trace must end in trace::Error or a cut trace, never a crash,
// a hang or an out-of-bounds access.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "tailor/trace/reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static int fd = memfd_create("trace", 0);
  if (fd < 0) return 0;
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) return 0;
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  try {
    tailor::trace::Reader r(path);
    r.set_decode_threads(1);
    tailor::trace::Event e;
    std::uint64_t n = 0;
    while (r.next(e) && n < 1'000'000) ++n;
    (void)r.cut();
    (void)r.modules();
  } catch (const std::exception&) {
  }
  return 0;
}
