// SPDX-License-Identifier: MIT
// Reading and validating the TAILOR_* parameters (config.h). One table holds
// each parameter's name, bounds and default; a value is taken from the
// environment, else from the config file (TAILOR_CONFIG=path, else
// $HOME/.config/tailor/tailor.conf), else the default. A bad value is
// reported on stderr with the variable's name and replaced by the default.
#include "config.h"

#include <cstring>

#include "os.h"

namespace tailor::alloc {

Config g_config;

namespace {

constexpr std::int64_t kKiB = 1024, kMiB = 1024 * kKiB, kGiB = 1024 * kMiB;

struct Spec {
  ParamInfo info;
  const char* key;  // name in the config file (also accepted: the env name)
  std::int64_t def, min, max;
  bool pow2, sized;  // power of two required; K/M/G suffixes accepted
};

const Spec kSpecs[] = {
    {{"TAILOR_CLASS_SPACING", "count", "size classes per doubling of the size (1, 2, 4 or 8)"},
     "class_spacing", 4, 1, 8, true, false},
    {{"TAILOR_SMALL_MAX", "bytes", "largest size served from single-slice pages (at most PAGE_SIZE/8)"},
     "small_max", 1 * kKiB, 16, 64 * kKiB, false, true},
    {{"TAILOR_MIDDLE_MAX", "bytes", "largest size class (multi-slice pages); above: one block per span"},
     "middle_max", 128 * kKiB, 1 * kKiB, 4 * kMiB, false, true},
    {{"TAILOR_LARGE_MAX", "bytes", "largest block carved from a segment; above: mapped directly (at most SEGMENT_SIZE/2)"},
     "large_max", 32 * kMiB, 64 * kKiB, 1 * kGiB, false, true},
    {{"TAILOR_PAGE_SIZE", "bytes", "slice size: unit of pages and spans (power of two, 4K-1M)"},
     "page_size", 64 * kKiB, 4 * kKiB, 1 * kMiB, true, true},
    {{"TAILOR_SEGMENT_SIZE", "bytes", "segment size and alignment (power of two, 1M-256M, at least 16 slices)"},
     "segment_size", 128 * kMiB, 1 * kMiB, 256 * kMiB, true, true},
    {{"TAILOR_PURGE_DELAY", "ms", "how long a free span stays resident before it goes back to the OS; 0 at once, -1 never"},
     "purge_delay", 200, -1, 3600 * 1000, false, false},
    {{"TAILOR_HEAP_CACHE", "bytes", "resident free bytes a thread keeps at most; beyond, the oldest are purged down to half"},
     "heap_cache", 256 * kMiB, 0, 1024 * kGiB, false, true},
    {{"TAILOR_REMOTE_BATCH", "count", "frees of another thread's blocks gathered before one atomic hand-back (1: none)"},
     "remote_batch", 16, 1, 1024, false, false},
    {{"TAILOR_HUGE_CACHE", "bytes", "freed blocks above LARGE_MAX kept mapped for reuse, at most, for PURGE_DELAY; 0: none"},
     "huge_cache", 64 * kMiB, 0, 1024 * kGiB, false, true},
    {{"TAILOR_ON_ERROR", "mode", "heap misuse (double or invalid free, wrong size): abort, warn (one line, call skipped) or ignore (call skipped); 0/1/2"},
     "on_error", 0, 0, 2, false, false},
};

// Parameters whose values are words (their index is the value).
const char* const kOnErrorWords[] = {"abort", "warn", "ignore", nullptr};
const char* const* words_of(Param p) { return p == Param::kOnError ? kOnErrorWords : nullptr; }

bool parse_word(const char* const* words, const char* text, std::int64_t& v) {
  if (words == nullptr) return false;
  for (int i = 0; words[i] != nullptr; ++i)
    if (std::strcmp(words[i], text) == 0) {
      v = i;
      return true;
    }
  return false;
}
static_assert(sizeof(kSpecs) / sizeof(kSpecs[0]) == static_cast<int>(Param::kCount));

char g_file_buf[16384];
char g_file_path[512];
bool g_file_read = false;

int idx(Param p) { return static_cast<int>(p); }

void format_number(std::int64_t v, char* out) {
  char tmp[24];
  int n = 0;
  bool neg = v < 0;
  auto u = neg ? static_cast<std::uint64_t>(-(v + 1)) + 1 : static_cast<std::uint64_t>(v);
  do { tmp[n++] = static_cast<char>('0' + u % 10); u /= 10; } while (u);
  int k = 0;
  if (neg) out[k++] = '-';
  while (n) out[k++] = tmp[--n];
  out[k] = '\0';
}

void reject(Param p, const char* value, const char* why, std::int64_t def) {
  char num[24];
  format_number(def, num);
  os::write_stderr("tailor: ", kSpecs[idx(p)].info.env, "=", value);
  os::write_stderr(" rejected: ", why, "; using the default ", num);
  os::write_stderr("\n");
}

void reject_value(Param p, std::int64_t v, const char* why, std::int64_t def) {
  char num[24];
  format_number(v, num);
  reject(p, num, why, def);
}

bool is_pow2(std::int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// Finds `key` (file name or env name) in the file text; copies the value into
// out. Lines: `name = value`, `#` starts a comment.
bool file_lookup(const char* text, const Spec& s, char* out, std::size_t cap) {
  if (text == nullptr) return false;
  bool found = false;
  const char* line = text;
  while (*line) {
    const char* end = std::strchr(line, '\n');
    if (end == nullptr) end = line + std::strlen(line);
    const char* a = line;
    while (a < end && (*a == ' ' || *a == '\t')) ++a;
    const char* name = a;
    while (a < end && *a != '=' && *a != ' ' && *a != '\t' && *a != '#') ++a;
    std::size_t nlen = static_cast<std::size_t>(a - name);
    while (a < end && (*a == ' ' || *a == '\t')) ++a;
    bool match = (nlen == std::strlen(s.key) && std::strncmp(name, s.key, nlen) == 0) ||
                 (nlen == std::strlen(s.info.env) && std::strncmp(name, s.info.env, nlen) == 0);
    if (match && a < end && *a == '=') {
      ++a;
      while (a < end && (*a == ' ' || *a == '\t')) ++a;
      const char* v = a;
      while (a < end && *a != '#' && *a != '\r') ++a;
      while (a > v && (a[-1] == ' ' || a[-1] == '\t')) --a;
      std::size_t vlen = static_cast<std::size_t>(a - v);
      if (vlen >= cap) vlen = cap - 1;
      std::memcpy(out, v, vlen);
      out[vlen] = '\0';
      found = true;  // the last occurrence wins
    }
    line = *end ? end + 1 : end;
  }
  return found;
}

}  // namespace

const ParamInfo& param_info(Param p) noexcept { return kSpecs[idx(p)].info; }

bool parse_number(const char* s, bool allow_suffix, std::int64_t& out) noexcept {
  if (s == nullptr || *s == '\0') return false;
  bool neg = false;
  if (*s == '-') { neg = true; ++s; }
  if (*s < '0' || *s > '9') return false;
  std::uint64_t v = 0;
  while (*s >= '0' && *s <= '9') {
    std::uint64_t d = static_cast<std::uint64_t>(*s - '0');
    if (v > (static_cast<std::uint64_t>(INT64_MAX) - d) / 10) return false;
    v = v * 10 + d;
    ++s;
  }
  int shift = 0;
  if (allow_suffix && *s) {
    switch (*s) {
      case 'k': case 'K': shift = 10; break;
      case 'm': case 'M': shift = 20; break;
      case 'g': case 'G': shift = 30; break;
      default: return false;
    }
    ++s;
    if (*s == 'i' && s[1] == 'B') s += 2;
    else if (*s == 'B' || *s == 'b') ++s;
  }
  if (*s != '\0') return false;
  if (shift && v > (static_cast<std::uint64_t>(INT64_MAX) >> shift)) return false;
  v <<= shift;
  out = neg ? -static_cast<std::int64_t>(v) : static_cast<std::int64_t>(v);
  return true;
}

void config_parse(Config& c, EnvLookup env_lookup, const char* file_text) noexcept {
  constexpr int n = static_cast<int>(Param::kCount);
  bool user[n];
  for (int i = 0; i < n; ++i) {
    const Spec& s = kSpecs[i];
    c.value[i] = s.def;
    c.source[i] = Source::kDefault;
    user[i] = false;
    char filebuf[64];
    const char* text = env_lookup ? env_lookup(s.info.env) : nullptr;
    Source src = Source::kEnv;
    if (text == nullptr && file_lookup(file_text, s, filebuf, sizeof filebuf)) {
      text = filebuf;
      src = Source::kFile;
    }
    if (text == nullptr) continue;
    std::int64_t v = 0;
    if (!parse_word(words_of(static_cast<Param>(i)), text, v) && !parse_number(text, s.sized, v)) {
      reject(static_cast<Param>(i), text,
             words_of(static_cast<Param>(i)) ? "not abort, warn or ignore"
             : s.sized                        ? "not a size (digits, optional K/M/G)"
                                              : "not an integer",
             s.def);
    } else if (v < s.min || v > s.max) {
      reject(static_cast<Param>(i), text, "out of range", s.def);
    } else if (s.pow2 && !is_pow2(v)) {
      reject(static_cast<Param>(i), text, "not a power of two", s.def);
    } else {
      c.value[i] = v;
      c.source[i] = src;
      user[i] = true;
    }
  }
  auto& val = c.value;
  auto fallback = [&](Param p, std::int64_t def, const char* why) {
    int i = idx(p);
    if (user[i]) reject_value(p, val[i], why, def);
    val[i] = def;
    c.source[i] = Source::kDefault;
    user[i] = false;
  };
  const std::int64_t seg = val[idx(Param::kSegmentSize)];
  if (val[idx(Param::kPageSize)] * 16 > seg) fallback(Param::kPageSize, kSpecs[idx(Param::kPageSize)].def, "more than SEGMENT_SIZE/16");
  const std::int64_t page = val[idx(Param::kPageSize)];
  auto min3 = [](std::int64_t a, std::int64_t b, std::int64_t d) { return a < b ? (a < d ? a : d) : (b < d ? b : d); };
  // Derived defaults keep the thresholds ordered whatever the sizes.
  std::int64_t large_def = min3(kSpecs[idx(Param::kLargeMax)].def, seg / 2, INT64_MAX);
  if (!user[idx(Param::kLargeMax)]) val[idx(Param::kLargeMax)] = large_def;
  if (val[idx(Param::kLargeMax)] > seg / 2) fallback(Param::kLargeMax, large_def, "more than SEGMENT_SIZE/2");
  const std::int64_t large = val[idx(Param::kLargeMax)];
  std::int64_t middle_def = min3(kSpecs[idx(Param::kMiddleMax)].def, seg / 16, large);
  if (!user[idx(Param::kMiddleMax)]) val[idx(Param::kMiddleMax)] = middle_def;
  if (val[idx(Param::kMiddleMax)] > seg / 16 || val[idx(Param::kMiddleMax)] > large)
    fallback(Param::kMiddleMax, middle_def, "more than SEGMENT_SIZE/16 or LARGE_MAX");
  const std::int64_t middle = val[idx(Param::kMiddleMax)];
  std::int64_t small_def = min3(kSpecs[idx(Param::kSmallMax)].def, page / 8, middle);
  if (!user[idx(Param::kSmallMax)]) val[idx(Param::kSmallMax)] = small_def;
  if (val[idx(Param::kSmallMax)] > page / 8 || val[idx(Param::kSmallMax)] > middle)
    fallback(Param::kSmallMax, small_def, "more than PAGE_SIZE/8 or MIDDLE_MAX");

  c.slice_size = static_cast<std::size_t>(page);
  c.slice_shift = static_cast<std::size_t>(__builtin_ctzll(static_cast<unsigned long long>(page)));
  c.segment_size = static_cast<std::size_t>(seg);
  c.segment_mask = ~(c.segment_size - 1);
  c.small_max = static_cast<std::size_t>(val[idx(Param::kSmallMax)]);
  c.middle_max = static_cast<std::size_t>(middle);
  c.large_max = static_cast<std::size_t>(large);
  c.purge_delay_ms = val[idx(Param::kPurgeDelay)];
  c.heap_cache_bytes = static_cast<std::size_t>(val[idx(Param::kHeapCache)]);
  c.remote_batch = static_cast<std::uint32_t>(val[idx(Param::kRemoteBatch)]);
  c.huge_cache_bytes = static_cast<std::size_t>(val[idx(Param::kHugeCache)]);
  c.class_bits = static_cast<std::uint32_t>(__builtin_ctzll(static_cast<unsigned long long>(val[idx(Param::kClassSpacing)])));
}

void config_init() noexcept {
  const char* path = os::getenv("TAILOR_CONFIG");
  if (path != nullptr && *path != '\0') {
    if (std::strlen(path) < sizeof g_file_path) std::strcpy(g_file_path, path);
    if (os::read_file(g_file_path, g_file_buf, sizeof g_file_buf) < 0) {
      os::write_stderr("tailor: TAILOR_CONFIG=", path, " rejected: cannot read the file; using no config file\n");
      g_file_path[0] = '\0';
    } else {
      g_file_read = true;
    }
  } else if (const char* home = os::getenv("HOME"); home != nullptr) {
    const char* rel = "/.config/tailor/tailor.conf";
    if (std::strlen(home) + std::strlen(rel) < sizeof g_file_path) {
      std::strcpy(g_file_path, home);
      std::strcat(g_file_path, rel);
      g_file_read = os::read_file(g_file_path, g_file_buf, sizeof g_file_buf) >= 0;
      if (!g_file_read) g_file_path[0] = '\0';
    }
  }
  config_parse(g_config, &os::getenv, g_file_read ? g_file_buf : nullptr);
}

const char* config_file_path() noexcept { return g_file_read ? g_file_path : nullptr; }

}  // namespace tailor::alloc
