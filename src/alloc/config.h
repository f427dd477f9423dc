// SPDX-License-Identifier: MIT
// Tunables of libtailor (the tunable allocator paper: parameters that change the policy per
// program). Read once, at the first allocation, from TAILOR_* environment
// variables and an optional config file, validated, and frozen. Parsing uses
// no malloc and no C++ runtime: it runs inside malloc, possibly before main.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tailor::alloc {

enum class Param : int {
  kClassSpacing,  // size classes per doubling of the size
  kSmallMax,      // largest size on pages of at least 256 blocks
  kMiddleMax,     // largest size class; above: one block per span
  kLargeMax,      // largest block in a segment; above: mapped directly
  kPageSize,      // slice size: the unit of pages and spans
  kSegmentSize,   // segment size and alignment
  kPurgeDelay,    // ms a free span stays resident before madvise; -1 never
  kHeapCache,     // bytes of resident free spans a thread keeps at most
  kRemoteBatch,   // cross-thread frees gathered before one hand-back
  kHugeCache,     // bytes of freed huge mappings kept for reuse
  kHugePages,     // 1: ask the kernel for transparent huge pages on segments
  kPools,         // call-site pools (site_pool.h): 0 off, 1 on (first one-size site of a slot size kept in the heap), 2 every one-size site
  kOnError,       // heap misuse found: 0 abort, 1 warn (skip the call), 2 ignore (misuse.h)
  kSecure,        // 1: the hardened front end (secure.h) serves every request
  kSecureQuarantine,  // secure mode: a thread's freed blocks held back before reuse; 0 none
  kSecureZero,        // secure mode: 1 freed blocks zeroed whole and checked at reuse, 0 their first 64 bytes filled
  kDmmFront,      // blocks per bin of the per-thread cache in front of a DMM (dmm/front.h); 0 none
  kCount
};

// Where a value came from: the default, the environment, the config file's
// global lines, or the file's section for this program ([program KEY]).
enum class Source : std::uint8_t { kDefault = 0, kEnv = 1, kFile = 2, kProgram = 3 };

constexpr std::size_t kConfigFileMax = 64 * 1024;  // bytes of a config file read
constexpr std::size_t kConfigPathMax = 512;

// Size classes a program's configuration adds to the default series
// (size_class.h): `classes` (TAILOR_CLASSES, multiples of 16, e.g. learned
// from a trace's size histogram by `tailor tune`) and `exact_classes`
// (TAILOR_EXACT_CLASSES, multiples of 8 from 24: blocks of exactly that size,
// 8-byte aligned, which C's rule for malloc does not allow in general: by
// choice only). Each list increasing, at most kClassListMax sizes, none
// above kClassListLimit or MIDDLE_MAX.
constexpr std::size_t kClassListMax = 48;
constexpr std::size_t kClassListLimit = 64 * 1024;
struct ClassList {
  std::uint32_t size[kClassListMax];
  std::uint32_t count;
  std::uint8_t source;  // a Source
};

struct Config {
  std::int64_t value[static_cast<int>(Param::kCount)];
  Source source[static_cast<int>(Param::kCount)];
  // Derived, for the hot paths.
  std::size_t slice_size, slice_shift;
  std::size_t segment_size, segment_mask;  // mask = ~(segment_size - 1)
  std::size_t small_max, middle_max, large_max;
  std::int64_t purge_delay_ms;
  std::size_t heap_cache_bytes;
  std::size_t huge_cache_bytes;
  std::uint32_t remote_batch;
  std::uint32_t class_bits;  // log2(class spacing)
  bool huge_pages;
  // Classes added to the default series (ClassList above).
  ClassList classes, exact_classes;
  // TAILOR_DMM or the file's `dmm =` (dmm_front.h); empty: none.
  char dmm[kConfigPathMax];
  Source dmm_source;
  // The key of the [program KEY] section in force, empty if none matched.
  char section[kConfigPathMax];
};

// A config file as read: the path (for messages) and its text.
struct ConfigFile {
  char path[kConfigPathMax];
  char text[kConfigFileMax];
  bool read;
};

extern Config g_config __attribute__((visibility("hidden")));  // hidden: loaded RIP-relative

struct ParamInfo {
  const char* env;    // TAILOR_NAME
  const char* unit;   // "bytes", "ms", "count"
  const char* description;
};
const ParamInfo& param_info(Param p) noexcept;

// Reads environment and config file into g_config. Not thread-safe: called
// under the process-init once-guard (see heap.cpp). Prints one line on stderr
// per rejected value, naming the variable.
void config_init() noexcept;

// Testable core of config_init: parse `env_lookup` values and the text of a
// config file (may be null) into `out`, for the program whose executable is
// `exe_path` (may be null: no section applies). `file_path` names the file
// in messages. Lines of the file that are not understood are reported on
// stderr with the file and line. Exposed for the unit tests and `tailor
// config --for`.
using EnvLookup = const char* (*)(const char* name);
void config_parse(Config& out, EnvLookup env_lookup, const char* file_text, const char* exe_path = nullptr,
                  const char* file_path = nullptr) noexcept;

// Finds and reads the file libtailor reads: TAILOR_CONFIG, else
// $HOME/.config/tailor/tailor.conf if it exists. Reports a TAILOR_CONFIG
// that cannot be read, and a file longer than kConfigFileMax.
void config_file_load(ConfigFile& f, EnvLookup env_lookup) noexcept;

// Whether a section key selects the executable `exe_path`: a key holding a
// '/' is compared with the whole path, any other with its file name.
// Returns 2 for a path match, 1 for a name match, 0 for none.
int config_section_match(const char* key, std::size_t key_len, const char* exe_path) noexcept;

// Parses a size ("64K", "4m", "1G", "4096") or a plain integer. Returns false
// on junk or overflow.
bool parse_number(const char* s, bool allow_suffix, std::int64_t& out) noexcept;

const char* config_file_path() noexcept;  // the file read, or nullptr

}  // namespace tailor::alloc
