// SPDX-License-Identifier: MIT
// What the kernel says of this process's memory, for tests of an allocator's
// promises: resident set size (/proc/self/statm) and minor page faults so
// far (getrusage), the count that tells whether freed pages were reused or
// faulted in afresh.
#pragma once

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>

namespace tailor::test {

inline long rss_kb() {
  long pages = 0, resident = 0;
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return -1;
  if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = -1;
  std::fclose(f);
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

inline long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

}  // namespace tailor::test
