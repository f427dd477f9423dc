// SPDX-License-Identifier: MIT
// Trace file naming; see output_file.h.
#include "record/output_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace tailor::record {

int create_trace_file(char* path, std::size_t cap) noexcept {
  const char* base = getenv("TAILOR_RECORD_OUTPUT");
  if (!base || !*base) base = "tailor.trace";
  const char* root = getenv("TAILOR_RECORD_ROOT_PID");
  long pid = static_cast<long>(getpid());
  constexpr int kFlags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_APPEND;

  for (int attempt = 0; attempt < 1000; ++attempt) {
    int n;
    if (attempt == 0) {
      if (!root || std::atol(root) != pid) continue;
      n = std::snprintf(path, cap, "%s", base);
    } else if (attempt == 1) {
      n = std::snprintf(path, cap, "%s.%ld", base, pid);
    } else {
      n = std::snprintf(path, cap, "%s.%ld.%d", base, pid, attempt - 1);
    }
    if (n < 0 || static_cast<std::size_t>(n) >= cap) {
      errno = ENAMETOOLONG;
      return -1;
    }
    int fd = ::open(path, kFlags, 0644);
    if (fd >= 0) return fd;
    if (errno != EEXIST) return -1;
  }
  errno = EEXIST;
  return -1;
}

}  // namespace tailor::record
