// Shared pieces of the bundled workloads: command-line parsing, a small
// deterministic PRNG and helpers for self-checks.
//
// Everything here is header-only and allocates nothing on its own, so that
// the allocation behaviour of a workload is that of its own code
// (checked_malloc allocates where the workload calls it; free_binary_tree
// frees in the order the workloads' own release functions did).
//
// Conventions every workload follows:
//   wl_<name> [--seed S] [--size N] [--verbose] [--help]
//   stdout: a few deterministic lines ending with "result: <value>";
//           never pointers or timings, so any malloc gives the same output.
//   stderr: diagnostics (--verbose) and failure messages.
//   exit:   0 ok, 1 self-check failed, 2 bad arguments.
#ifndef TAILOR_BENCH_WORKLOADS_WORKLOAD_COMMON_H
#define TAILOR_BENCH_WORKLOADS_WORKLOAD_COMMON_H

#include <cerrno>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace wl {

// 128-bit unsigned integer (a GCC/Clang extension; __extension__ keeps
// -Wpedantic quiet).
__extension__ typedef unsigned __int128 u128;

inline constexpr int kExitCheckFailed = 1;
inline constexpr int kExitUsage = 2;

// ---------------------------------------------------------------------------
// Deterministic pseudo-random numbers.

// One step of splitmix64; also a good 64-bit mixing function.
constexpr std::uint64_t splitmix64(std::uint64_t& state) noexcept {
  state += 0x9e3779b97f4a7c15ULL;
  std::uint64_t z = state;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Stateless mix of a value (used to derive per-object seeds).
constexpr std::uint64_t mix64(std::uint64_t x) noexcept {
  std::uint64_t s = x;
  return splitmix64(s);
}

// xoshiro256** seeded through splitmix64.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) noexcept { reseed(seed); }

  void reseed(std::uint64_t seed) noexcept {
    std::uint64_t sm = seed;
    for (auto& w : s_) w = splitmix64(sm);
  }

  std::uint64_t next() noexcept {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  std::uint32_t next32() noexcept { return static_cast<std::uint32_t>(next() >> 32); }

  // Uniform in [0, n); n > 0. Lemire's multiply-shift with rejection (unbiased).
  std::uint64_t below(std::uint64_t n) noexcept {
    u128 m = static_cast<u128>(next()) * n;
    auto lo = static_cast<std::uint64_t>(m);
    if (lo < n) {
      const std::uint64_t threshold = (0 - n) % n;
      while (lo < threshold) {
        m = static_cast<u128>(next()) * n;
        lo = static_cast<std::uint64_t>(m);
      }
    }
    return static_cast<std::uint64_t>(m >> 64);
  }

  // Uniform in [lo, hi] (inclusive); lo <= hi.
  std::uint64_t range(std::uint64_t lo, std::uint64_t hi) noexcept {
    return lo + below(hi - lo + 1);
  }

  // Uniform in [0, 1) with 53 random bits.
  double uniform() noexcept {
    return static_cast<double>(next() >> 11) * 0x1.0p-53;
  }

  // Uniform in [a, b).
  double uniform(double a, double b) noexcept { return a + (b - a) * uniform(); }

  // True with probability num/den.
  bool chance(std::uint64_t num, std::uint64_t den) noexcept { return below(den) < num; }

 private:
  static constexpr std::uint64_t rotl(std::uint64_t x, int k) noexcept {
    return (x << k) | (x >> (64 - k));
  }
  std::uint64_t s_[4]{};
};

// ---------------------------------------------------------------------------
// Failure reporting.

[[noreturn]] inline void vfail_with(int code, const char* prog, const char* fmt, std::va_list ap) {
  std::fflush(stdout);
  std::fprintf(stderr, "%s: ", prog);
  std::vfprintf(stderr, fmt, ap);
  std::fputc('\n', stderr);
  std::exit(code);
}

// Self-check failure: message on stderr, exit 1.
[[noreturn]] inline void fail(const char* prog, const char* fmt, ...)
    __attribute__((format(printf, 2, 3)));
inline void fail(const char* prog, const char* fmt, ...) {
  std::va_list ap;
  va_start(ap, fmt);
  vfail_with(kExitCheckFailed, prog, fmt, ap);
}

// Allocation failure: a workload cannot do anything useful without memory.
[[noreturn]] inline void out_of_memory(const char* prog, std::size_t bytes) {
  std::fflush(stdout);
  std::fprintf(stderr, "%s: out of memory (request of %zu bytes)\n", prog, bytes);
  std::exit(kExitCheckFailed);
}

// ---------------------------------------------------------------------------
// Memory.

// std::malloc that ends the run on failure. Always inlined, so that a
// workload's xmalloc compiles exactly as when it called malloc itself: its
// malloc call sites, which libtailor's pools key on, stay where they were.
[[gnu::always_inline]] inline void* checked_malloc(const char* prog, std::size_t bytes) {
  void* p = std::malloc(bytes);
  if (p == nullptr) out_of_memory(prog, bytes);
  return p;
}

// Frees a binary tree of malloc'd nodes (members `left` and `right`): both
// subtrees, left first, then the node itself.
template <class Node>
void free_binary_tree(Node* t) {
  if (t == nullptr) return;
  free_binary_tree(t->left);
  free_binary_tree(t->right);
  std::free(t);
}

// ---------------------------------------------------------------------------
// Command line.

struct Options {
  std::uint64_t seed = 1;
  std::uint64_t size = 0;
  bool verbose = false;
};

struct ProgramInfo {
  const char* name;          // e.g. "wl_cfrac"
  const char* description;   // one line
  const char* size_meaning;  // what --size counts, e.g. "composites to factor"
  std::uint64_t default_size;
  std::uint64_t min_size;
  std::uint64_t max_size;
};

inline void print_usage(std::FILE* out, const ProgramInfo& info) {
  std::fprintf(out,
               "usage: %s [--seed S] [--size N] [--verbose] [--help]\n"
               "%s\n"
               "  --seed S    seed of the pseudo-random input (default 1)\n"
               "  --size N    %s, %llu..%llu (default %llu)\n"
               "  --verbose   print internal counters on stderr\n"
               "  --help      print this help and exit\n"
               "Prints a few deterministic lines ending with 'result: <value>'.\n",
               info.name, info.description, info.size_meaning,
               static_cast<unsigned long long>(info.min_size),
               static_cast<unsigned long long>(info.max_size),
               static_cast<unsigned long long>(info.default_size));
}

[[noreturn]] inline void usage_error(const ProgramInfo& info, const char* fmt, ...)
    __attribute__((format(printf, 2, 3)));
inline void usage_error(const ProgramInfo& info, const char* fmt, ...) {
  std::fprintf(stderr, "%s: ", info.name);
  std::va_list ap;
  va_start(ap, fmt);
  std::vfprintf(stderr, fmt, ap);
  va_end(ap);
  std::fprintf(stderr, "\n");
  print_usage(stderr, info);
  std::exit(kExitUsage);
}

// Parses a decimal (or 0x-prefixed hexadecimal) unsigned 64-bit integer.
inline bool parse_u64(const char* text, std::uint64_t& out) {
  if (text == nullptr || *text == '\0' || *text == '-' || *text == '+' || *text == ' ') return false;
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 0);
  if (errno != 0 || end == text || *end != '\0') return false;
  out = static_cast<std::uint64_t>(v);
  return true;
}

inline Options parse_args(int argc, char** argv, const ProgramInfo& info) {
  Options opt;
  opt.size = info.default_size;
  for (int i = 1; i < argc; ++i) {
    const char* arg = argv[i];
    const char* value = nullptr;
    std::uint64_t* target = nullptr;
    const char* option = nullptr;
    if (std::strcmp(arg, "--help") == 0 || std::strcmp(arg, "-h") == 0) {
      print_usage(stdout, info);
      std::exit(0);
    } else if (std::strcmp(arg, "--verbose") == 0 || std::strcmp(arg, "-v") == 0) {
      opt.verbose = true;
      continue;
    } else if (std::strcmp(arg, "--seed") == 0 || std::strcmp(arg, "--size") == 0) {
      option = arg;
      if (i + 1 >= argc) usage_error(info, "option %s needs a value", arg);
      value = argv[++i];
    } else if (std::strncmp(arg, "--seed=", 7) == 0 || std::strncmp(arg, "--size=", 7) == 0) {
      option = arg[4] == 'e' ? "--seed" : "--size";
      value = arg + 7;
    } else {
      usage_error(info, "unknown argument '%s'", arg);
    }
    target = option[4] == 'e' ? &opt.seed : &opt.size;
    if (!parse_u64(value, *target)) {
      usage_error(info, "invalid value '%s' for %s (expected an unsigned integer)", value, option);
    }
  }
  if (opt.size < info.min_size || opt.size > info.max_size) {
    usage_error(info, "--size %llu out of range %llu..%llu",
                static_cast<unsigned long long>(opt.size),
                static_cast<unsigned long long>(info.min_size),
                static_cast<unsigned long long>(info.max_size));
  }
  return opt;
}

// What most workloads start from: the parsed command line and a generator
// seeded with --seed.
struct Start {
  Options opt;
  Rng rng;
};

inline Start start(int argc, char** argv, const ProgramInfo& info) {
  const Options opt = parse_args(argc, argv, info);
  return Start{opt, Rng(opt.seed)};
}

// ---------------------------------------------------------------------------
// Checksums.

// Order-dependent 64-bit hash accumulator (FNV-1a over 64-bit words, then mixed).
class Checksum {
 public:
  void add(std::uint64_t v) noexcept {
    h_ ^= mix64(v);
    h_ *= 0x100000001b3ULL;
  }
  void add_signed(std::int64_t v) noexcept { add(static_cast<std::uint64_t>(v)); }
  std::uint64_t value() const noexcept { return mix64(h_); }

 private:
  std::uint64_t h_ = 0xcbf29ce484222325ULL;
};

// Prints the final line every workload ends with.
inline void print_result_hex(std::uint64_t v) {
  std::printf("result: %016llx\n", static_cast<unsigned long long>(v));
}

}  // namespace wl

#endif  // TAILOR_BENCH_WORKLOADS_WORKLOAD_COMMON_H
