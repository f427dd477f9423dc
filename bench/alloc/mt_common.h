// SPDX-License-Identifier: MIT
// Shared pieces of the allocator benchmarks (bench/alloc): the command line
// `--threads T --size N --seed S` plus a program's own parameters, per-thread generators, and a start barrier
// so that thread creation is not what is measured. Allocation-free.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <new>

#include "workload_common.h"

namespace ab {

struct Args {
  std::uint64_t threads;
  std::uint64_t size;
  std::uint64_t seed;
};

// A program's own numeric parameter (`--name V`), e.g. a block count or a
// size bound; `value` holds the default until parse() overwrites it.
struct Param {
  const char* name;  // without the dashes
  std::uint64_t* value;
  const char* help;
};

inline void usage(std::FILE* to, const char* prog, const char* help, std::initializer_list<Param> params) {
  std::fprintf(to, "%s [--threads T] [--size N] [--seed S]", prog);
  for (const Param& p : params) std::fprintf(to, " [--%s V]", p.name);
  std::fprintf(to, "\n%s\n", help);
  for (const Param& p : params)
    std::fprintf(to, "  --%-10s %s (default %llu)\n", p.name, p.help, static_cast<unsigned long long>(*p.value));
}

// When memory runs out, every program says "PROG: out of memory" and exits
// with status 1: a NULL from malloc is checked where it is called, and a
// failed operator new (the containers' and std::thread's) ends the same way
// through the new-handler rather than as an exception that no thread
// catches (bench/alloc_faults.py counts on it).
[[noreturn]] inline void oom(const char* prog) {
  std::fprintf(stderr, "%s: out of memory\n", prog);
  std::exit(1);
}
inline const char* g_prog = "bench";
inline void new_failed() { oom(g_prog); }

inline Args parse(int argc, char** argv, std::uint64_t default_size, std::uint64_t default_threads, const char* help,
                  std::initializer_list<Param> params = {}) {
  const char* slash = std::strrchr(argv[0], '/');
  g_prog = slash ? slash + 1 : argv[0];
  std::set_new_handler(new_failed);
  Args a{default_threads, default_size, 1};
  for (int i = 1; i < argc; ++i) {
    std::uint64_t* target = nullptr;
    if (std::strcmp(argv[i], "--threads") == 0) target = &a.threads;
    else if (std::strcmp(argv[i], "--size") == 0) target = &a.size;
    else if (std::strcmp(argv[i], "--seed") == 0) target = &a.seed;
    else if (std::strcmp(argv[i], "--help") == 0) {
      usage(stdout, argv[0], help, params);
      std::exit(0);
    }
    for (const Param& p : params)
      if (argv[i][0] == '-' && argv[i][1] == '-' && std::strcmp(argv[i] + 2, p.name) == 0) target = p.value;
    if (target == nullptr || i + 1 == argc || !wl::parse_u64(argv[i + 1], *target)) {
      std::fprintf(stderr, "%s: bad argument '%s'\n", argv[0], argv[i]);
      usage(stderr, argv[0], help, params);
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

// Exits with status 2 naming the parameter unless lo <= value <= hi.
inline void require_range(const char* prog, const char* name, std::uint64_t value, std::uint64_t lo, std::uint64_t hi) {
  if (value < lo || value > hi) {
    std::fprintf(stderr, "%s: --%s must be %llu-%llu\n", prog, name, static_cast<unsigned long long>(lo),
                 static_cast<unsigned long long>(hi));
    std::exit(2);
  }
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



}  // namespace ab
