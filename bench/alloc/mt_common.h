// SPDX-License-Identifier: MIT
// Shared pieces of the allocator benchmarks (bench/alloc): the command line
// `--threads T --size N --seed S`, per-thread generators, and a start barrier
// so that thread creation is not what is measured. Allocation-free.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "workload_common.h"

namespace ab {

struct Args {
  std::uint64_t threads;
  std::uint64_t size;
  std::uint64_t seed;
};

inline Args parse(int argc, char** argv, std::uint64_t default_size, std::uint64_t default_threads, const char* help) {
  Args a{default_threads, default_size, 1};
  for (int i = 1; i < argc; ++i) {
    std::uint64_t* target = nullptr;
    if (std::strcmp(argv[i], "--threads") == 0) target = &a.threads;
    else if (std::strcmp(argv[i], "--size") == 0) target = &a.size;
    else if (std::strcmp(argv[i], "--seed") == 0) target = &a.seed;
    else if (std::strcmp(argv[i], "--help") == 0) {
      std::printf("%s [--threads T] [--size N] [--seed S]\n%s\n", argv[0], help);
      std::exit(0);
    }
    if (target == nullptr || i + 1 == argc || !wl::parse_u64(argv[i + 1], *target)) {
      std::fprintf(stderr, "%s: bad argument '%s'\n%s [--threads T] [--size N] [--seed S]\n", argv[0], argv[i], argv[0]);
      std::exit(2);
    }
    ++i;
  }
  if (a.threads == 0 || a.threads > 256) {
    std::fprintf(stderr, "%s: --threads must be 1-256\n", argv[0]);
    std::exit(2);
  }
  return a;
}

// All threads wait here until every one has been created.
class StartLine {
 public:
  explicit StartLine(std::uint64_t n) : n_(n) {}
  void arrive_and_wait() {
    count_.fetch_add(1);
    while (count_.load() < n_) {
    }
  }

 private:
  std::uint64_t n_;
  std::atomic<std::uint64_t> count_{0};
};

[[noreturn]] inline void oom(const char* prog) {
  std::fprintf(stderr, "%s: out of memory\n", prog);
  std::exit(1);
}

}  // namespace ab
