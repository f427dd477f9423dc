// SPDX-License-Identifier: MIT
// Reading and validating the TAILOR_* parameters (config.h). One table holds
// each parameter's name, bounds and default; a value is taken from the
// environment, else from the config file (TAILOR_CONFIG=path, else
// $HOME/.config/tailor/tailor.conf), else the default. A bad value is
// reported on stderr with the variable's name and replaced by the default.
#include "alloc/config.h"

#include <cstring>

#include "alloc/os.h"
#include "dmm/text.h"

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
    {{"TAILOR_SMALL_MAX", "bytes", "largest size on pages of at least 256 blocks (at most PAGE_SIZE/8)"},
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
     "remote_batch", 64, 1, 1024, false, false},
    {{"TAILOR_HUGE_CACHE", "bytes", "freed blocks above LARGE_MAX kept mapped for reuse, at most, for PURGE_DELAY; 0: none"},
     "huge_cache", 64 * kMiB, 0, 1024 * kGiB, false, true},
    {{"TAILOR_HUGE_PAGES", "count", "1: segments and huge blocks ask for transparent huge pages (fewer faults and TLB misses, more resident memory)"},
     "huge_pages", 0, 0, 1, false, false},
    {{"TAILOR_POOLS", "count", "call-site pools (docs/pools.md): 1 gives each call site that keeps one size pools of its own, except the first such site of each slot size, which keeps the heap's pages; 2 pools that one too; 0 off"},
     "pools", 0, 0, 2, false, false},
    {{"TAILOR_ON_ERROR", "mode", "heap misuse (double or invalid free, wrong size): abort, warn (one line, call skipped) or ignore (call skipped); 0/1/2"},
     "on_error", 0, 0, 2, false, false},
    {{"TAILOR_SECURE", "count", "1: hardened mode (docs/allocator.md, \"Secure mode\"): trailers and canaries on every block, zero on free, use-after-free checks, guard pages after large blocks; 0 off"},
     "secure", 0, 0, 1, false, false},
    {{"TAILOR_SECURE_QUARANTINE", "count", "secure mode: a thread's last freed blocks held back before they can be handed out again (a FIFO; a freed large block waits for 2 more large frees); 0: none, a freed block comes back at the next malloc of its class"},
     "secure_quarantine", 64, 0, 256, false, false},
    {{"TAILOR_SECURE_ZERO", "count", "secure mode: 1 zeroes a freed block whole and checks it is still zero as it leaves the quarantine (large ones cleared by a memset or a purge at free, checked at reuse); 0 clears its first 64 bytes and trailer only"},
     "secure_zero", 1, 0, 1, false, false},
    {{"TAILOR_DMM_FRONT", "count", "with TAILOR_DMM: free blocks of up to 1 KiB each thread keeps per size (8-byte steps) in front of the DMM, reused without it (docs/deploy.md); 0: none"},
     "dmm_front", 16, 0, 1024, false, false},
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

ConfigFile g_file;

int idx(Param p) { return static_cast<int>(p); }

// A number's decimal digits, for messages (no allocation).
struct Number : dmm::TextBuffer<24> {
  explicit Number(std::int64_t v) noexcept { append_int(v); }
};

// Where a value was read, for messages: the environment, or a file's line.
struct Origin {
  const char* file = nullptr;  // null: the environment
  int line = 0;
};

void write_line_number(int line) { os::write_stderr(Number(line).c_str()); }

void reject(Param p, const Origin& at, const char* value, const char* why, std::int64_t def) {
  const Number num(def);
  if (at.file != nullptr) {
    os::write_stderr("tailor: ", at.file, ":");
    write_line_number(at.line);
    os::write_stderr(": ", kSpecs[idx(p)].key, " = ", value);
  } else {
    os::write_stderr("tailor: ", kSpecs[idx(p)].info.env, "=", value);
  }
  os::write_stderr(" rejected: ", why, "; using the default ", num.c_str());
  os::write_stderr("\n");
}

void reject_value(Param p, const Origin& at, std::int64_t v, const char* why, std::int64_t def) {
  reject(p, at, Number(v).c_str(), why, def);
}

bool is_pow2(std::int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// The config file, line by line. Lines before the first section header are
// global; `[program KEY]` starts the section of the programs KEY selects
// (config_section_match). `name = value` lines, `#` comments.
struct Line {
  const char* begin;
  const char* end;  // excluding the newline
  int number;
};

const char* skip_blanks(const char* a, const char* end) {
  while (a < end && (*a == ' ' || *a == '\t' || *a == '\r')) ++a;
  return a;
}

template <typename F>
void for_each_line(const char* text, F&& f) {
  int number = 0;
  for (const char* line = text; *line;) {
    const char* end = std::strchr(line, '\n');
    if (end == nullptr) end = line + std::strlen(line);
    f(Line{line, end, ++number});
    line = *end ? end + 1 : end;
  }
}

// A line without its comment and surrounding blanks: [a, b).
void trim(const Line& l, const char*& a, const char*& b) {
  a = skip_blanks(l.begin, l.end);
  b = a;
  while (b < l.end && *b != '#') ++b;
  while (b > a && (b[-1] == ' ' || b[-1] == '\t' || b[-1] == '\r')) --b;
}

// `[program KEY]`: sets key and returns true. Other headers: returns true
// with key_len 0 (an unknown section, reported by the caller).
bool parse_header(const char* a, const char* b, const char*& key, std::size_t& key_len) {
  if (a == b || *a != '[') return false;
  key = nullptr;
  key_len = 0;
  if (b[-1] != ']') return true;
  const char* p = skip_blanks(a + 1, b - 1);
  constexpr char kWord[] = "program";
  if (static_cast<std::size_t>(b - 1 - p) > sizeof kWord - 1 && std::strncmp(p, kWord, sizeof kWord - 1) == 0 &&
      (p[sizeof kWord - 1] == ' ' || p[sizeof kWord - 1] == '\t')) {
    const char* k = skip_blanks(p + sizeof kWord - 1, b - 1);
    const char* e = b - 1;
    while (e > k && (e[-1] == ' ' || e[-1] == '\t')) --e;
    if (e > k && *k == '"' && e[-1] == '"' && e - k >= 2) { ++k; --e; }
    key = k;
    key_len = static_cast<std::size_t>(e - k);
  }
  return true;
}

// The file's name of a setting: a parameter's key or env name, or the DMM.
bool name_is(const char* name, std::size_t len, const char* want) {
  return len == std::strlen(want) && std::strncmp(name, want, len) == 0;
}
bool known_name(const char* name, std::size_t len) {
  if (name_is(name, len, "dmm") || name_is(name, len, "TAILOR_DMM")) return true;
  if (name_is(name, len, "classes") || name_is(name, len, "TAILOR_CLASSES")) return true;
  if (name_is(name, len, "exact_classes") || name_is(name, len, "TAILOR_EXACT_CLASSES")) return true;
  for (const Spec& s : kSpecs)
    if (name_is(name, len, s.key) || name_is(name, len, s.info.env)) return true;
  return false;
}

// Splits `name = value`; false if the line is not of that form.
bool split_setting(const char* a, const char* b, const char*& name, std::size_t& nlen, const char*& value,
                   std::size_t& vlen) {
  name = a;
  while (a < b && *a != '=' && *a != ' ' && *a != '\t') ++a;
  nlen = static_cast<std::size_t>(a - name);
  a = skip_blanks(a, b);
  if (nlen == 0 || a == b || *a != '=') return false;
  value = skip_blanks(a + 1, b);
  vlen = static_cast<std::size_t>(b - value);
  return true;
}

// The ranges of the file that apply to a program: the global lines, and the
// body of the section selected for it (the most specific match, a path
// before a name; the last of equals).
struct FilePlan {
  const char* global_end = nullptr;  // global lines: [text, global_end)
  const char* section_begin = nullptr;
  const char* section_end = nullptr;
};

void report_line(const char* file, int line, const char* what, const char* a, const char* b) {
  char text[160];
  std::size_t n = static_cast<std::size_t>(b - a);
  if (n >= sizeof text) n = sizeof text - 1;
  std::memcpy(text, a, n);
  text[n] = '\0';
  os::write_stderr("tailor: ", file ? file : "config file", ":");
  write_line_number(line);
  os::write_stderr(": ", what, " '", text);
  os::write_stderr("'; ignored\n");
}

FilePlan plan_file(const char* text, const char* exe_path, const char* file, Config& c) {
  FilePlan plan;
  c.section[0] = '\0';
  if (text == nullptr) return plan;
  plan.global_end = text + std::strlen(text);
  int best = 0;
  bool in_selected = false, in_section = false;
  for_each_line(text, [&](const Line& l) {
    const char *a, *b;
    trim(l, a, b);
    if (a == b) return;
    const char* key;
    std::size_t key_len;
    if (parse_header(a, b, key, key_len)) {
      if (!in_section) plan.global_end = l.begin;
      in_section = true;
      if (in_selected) plan.section_end = l.begin;
      in_selected = false;
      if (key == nullptr || key_len == 0) {
        report_line(file, l.number, "unknown section (known: [program PATH-OR-NAME])", a, b);
        return;
      }
      const int m = config_section_match(key, key_len, exe_path);
      if (m > 0 && m >= best) {
        best = m;
        in_selected = true;
        plan.section_begin = l.end;
        plan.section_end = text + std::strlen(text);
        std::size_t n = key_len < kConfigPathMax - 1 ? key_len : kConfigPathMax - 1;
        std::memcpy(c.section, key, n);
        c.section[n] = '\0';
      }
      return;
    }
    const char *name, *value;
    std::size_t nlen, vlen;
    if (!split_setting(a, b, name, nlen, value, vlen))
      report_line(file, l.number, "not a setting (name = value)", a, b);
    else if (!known_name(name, nlen))
      report_line(file, l.number, "unknown parameter", name, name + nlen);
  });
  return plan;
}

// The value of `key` (or `env`) in [begin, end) of the file: the last
// occurrence wins. Copies it into out and sets the line number.
bool file_lookup(const char* begin, const char* end, const char* key, const char* env, char* out, std::size_t cap,
                 int& line_number, const char* text) {
  if (begin == nullptr || begin >= end) return false;
  bool found = false;
  // Line numbers count from the file's start.
  int number = 1;
  for (const char* p = text; p < begin; ++p) number += *p == '\n';
  for (const char* line = begin; line < end;) {
    const char* eol = static_cast<const char*>(std::memchr(line, '\n', static_cast<std::size_t>(end - line)));
    if (eol == nullptr) eol = end;
    const char *a, *b;
    trim(Line{line, eol, number}, a, b);
    const char *name, *value;
    std::size_t nlen, vlen;
    if (split_setting(a, b, name, nlen, value, vlen) && (name_is(name, nlen, key) || name_is(name, nlen, env))) {
      if (vlen >= cap) vlen = cap - 1;
      std::memcpy(out, value, vlen);
      out[vlen] = '\0';
      line_number = number;
      found = true;
    }
    line = eol < end ? eol + 1 : end;
    ++number;
  }
  return found;
}

// A value from the program's section, else the global lines.
bool lookup(const FilePlan& plan, const char* text, const char* key, const char* env, char* out, std::size_t cap,
            Source& src, int& line) {
  if (file_lookup(plan.section_begin, plan.section_end, key, env, out, cap, line, text)) {
    src = Source::kProgram;
    return true;
  }
  if (file_lookup(text, plan.global_end, key, env, out, cap, line, text)) {
    src = Source::kFile;
    return true;
  }
  return false;
}

// A class list (config.h, ClassList): comma-separated sizes, increasing,
// each a multiple of `step` in [lo, hi]. Returns nullptr, or why not.
const char* parse_class_list(const char* text, std::uint32_t step, std::uint64_t lo, std::uint64_t hi, ClassList& out) {
  out.count = 0;
  const char* p = text;
  for (;;) {
    while (*p == ' ' || *p == '\t') ++p;
    if (*p < '0' || *p > '9') return "not a list of sizes separated by commas";
    std::uint64_t v = 0;
    while (*p >= '0' && *p <= '9') {
      v = v * 10 + static_cast<std::uint64_t>(*p - '0');
      if (v > kClassListLimit * 16) return "a size above the limit";
      ++p;
    }
    if (v == 0) return "a size of 0";
    if (v % step != 0) return step == 16 ? "a size that is not a multiple of 16" : "a size that is not a multiple of 8";
    if (v < lo) return step == 16 ? "a size of 16 or less (the first class)" : "a size below 24 (a block holds two words)";
    if (v > hi) return "a size above MIDDLE_MAX or 64K";
    if (out.count > 0 && v <= out.size[out.count - 1]) return "not in increasing order";
    if (out.count == kClassListMax) return "more than 48 sizes";
    out.size[out.count++] = static_cast<std::uint32_t>(v);
    while (*p == ' ' || *p == '\t') ++p;
    if (*p == '\0') return nullptr;
    if (*p != ',') return "not a list of sizes separated by commas";
    ++p;
  }
}

// `classes` / `exact_classes` from the environment, else the file; a bad
// list is one line on stderr and no list.
void read_class_list(const FilePlan& plan, const char* file_text, const char* file_path, EnvLookup env_lookup,
                     const char* key, const char* env, std::uint32_t step, std::uint64_t lo, std::uint64_t hi,
                     ClassList& out) {
  out.count = 0;
  out.source = static_cast<std::uint8_t>(Source::kDefault);
  char buf[512];
  const char* text = env_lookup ? env_lookup(env) : nullptr;
  Origin at;
  Source src = Source::kEnv;
  if (text == nullptr && lookup(plan, file_text, key, env, buf, sizeof buf, src, at.line)) {
    text = buf;
    at.file = file_path ? file_path : "config file";
  }
  if (text == nullptr || *text == '\0') return;
  if (const char* why = parse_class_list(text, step, lo, hi, out)) {
    out.count = 0;
    if (at.file != nullptr) {
      os::write_stderr("tailor: ", at.file, ":");
      write_line_number(at.line);
      os::write_stderr(": ", key, " = ", text);
    } else {
      os::write_stderr("tailor: ", env, "=", text);
    }
    os::write_stderr(" rejected: ", why, "; using the default classes\n");
    return;
  }
  out.source = static_cast<std::uint8_t>(src);
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

int config_section_match(const char* key, std::size_t key_len, const char* exe_path) noexcept {
  if (exe_path == nullptr || *exe_path == '\0' || key_len == 0) return 0;
  if (std::memchr(key, '/', key_len) != nullptr)
    return std::strlen(exe_path) == key_len && std::strncmp(exe_path, key, key_len) == 0 ? 2 : 0;
  const char* slash = std::strrchr(exe_path, '/');
  const char* name = slash ? slash + 1 : exe_path;
  return std::strlen(name) == key_len && std::strncmp(name, key, key_len) == 0 ? 1 : 0;
}

void config_parse(Config& c, EnvLookup env_lookup, const char* file_text, const char* exe_path,
                  const char* file_path) noexcept {
  constexpr int n = static_cast<int>(Param::kCount);
  const FilePlan plan = plan_file(file_text, exe_path, file_path, c);
  bool user[n];
  Origin origin[n];
  for (int i = 0; i < n; ++i) {
    const Spec& s = kSpecs[i];
    c.value[i] = s.def;
    c.source[i] = Source::kDefault;
    user[i] = false;
    char filebuf[64];
    const char* text = env_lookup ? env_lookup(s.info.env) : nullptr;
    Source src = Source::kEnv;
    origin[i] = Origin{};
    if (text == nullptr && lookup(plan, file_text, s.key, s.info.env, filebuf, sizeof filebuf, src, origin[i].line)) {
      text = filebuf;
      origin[i].file = file_path ? file_path : "config file";
    }
    if (text == nullptr) continue;
    std::int64_t v = 0;
    if (!parse_word(words_of(static_cast<Param>(i)), text, v) && !parse_number(text, s.sized, v)) {
      reject(static_cast<Param>(i), origin[i], text,
             words_of(static_cast<Param>(i)) ? "not abort, warn or ignore"
             : s.sized                        ? "not a size (digits, optional K/M/G)"
                                              : "not an integer",
             s.def);
    } else if (v < s.min || v > s.max) {
      reject(static_cast<Param>(i), origin[i], text, "out of range", s.def);
    } else if (s.pow2 && !is_pow2(v)) {
      reject(static_cast<Param>(i), origin[i], text, "not a power of two", s.def);
    } else {
      c.value[i] = v;
      c.source[i] = src;
      user[i] = true;
    }
  }
  // The DMM (dmm_front.h): TAILOR_DMM, else the file's `dmm`.
  c.dmm[0] = '\0';
  c.dmm_source = Source::kDefault;
  if (const char* d = env_lookup ? env_lookup("TAILOR_DMM") : nullptr; d != nullptr && *d != '\0') {
    if (std::strlen(d) < sizeof c.dmm) {
      std::strcpy(c.dmm, d);
      c.dmm_source = Source::kEnv;
    }
  } else {
    int line = 0;
    Source src = Source::kFile;
    if (lookup(plan, file_text, "dmm", "TAILOR_DMM", c.dmm, sizeof c.dmm, src, line) && c.dmm[0] != '\0')
      c.dmm_source = src;
    else
      c.dmm[0] = '\0';
  }
  auto& val = c.value;
  auto fallback = [&](Param p, std::int64_t def, const char* why) {
    int i = idx(p);
    if (user[i]) reject_value(p, origin[i], val[i], why, def);
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
  c.huge_pages = val[idx(Param::kHugePages)] != 0;
  c.class_bits = static_cast<std::uint32_t>(__builtin_ctzll(static_cast<unsigned long long>(val[idx(Param::kClassSpacing)])));
  const std::uint64_t class_hi = middle < static_cast<std::int64_t>(kClassListLimit) ? static_cast<std::uint64_t>(middle)
                                                                                    : kClassListLimit;
  read_class_list(plan, file_text, file_path, env_lookup, "classes", "TAILOR_CLASSES", 16, 32, class_hi, c.classes);
  read_class_list(plan, file_text, file_path, env_lookup, "exact_classes", "TAILOR_EXACT_CLASSES", 8, 24, class_hi,
                  c.exact_classes);
}

void config_file_load(ConfigFile& f, EnvLookup env_lookup) noexcept {
  f.read = false;
  f.path[0] = '\0';
  f.text[0] = '\0';
  const char* path = env_lookup ? env_lookup("TAILOR_CONFIG") : nullptr;
  const bool asked = path != nullptr && *path != '\0';
  if (asked) {
    if (std::strlen(path) >= sizeof f.path) {
      os::write_stderr("tailor: TAILOR_CONFIG=", path, " rejected: path too long; using no config file\n");
      return;
    }
    std::strcpy(f.path, path);
  } else if (const char* home = env_lookup ? env_lookup("HOME") : nullptr; home != nullptr) {
    const char* rel = "/.config/tailor/tailor.conf";
    if (std::strlen(home) + std::strlen(rel) >= sizeof f.path) return;
    std::strcpy(f.path, home);
    std::strcat(f.path, rel);
  } else {
    return;
  }
  const long len = os::read_file(f.path, f.text, sizeof f.text);
  if (len < 0) {
    if (asked) os::write_stderr("tailor: TAILOR_CONFIG=", path, " rejected: cannot read the file; using no config file\n");
    f.path[0] = '\0';
    return;
  }
  if (static_cast<std::size_t>(len) + 1 >= sizeof f.text) {
    // Cut at the last whole line, so that no setting is read half.
    char* last = std::strrchr(f.text, '\n');
    if (last != nullptr) last[1] = '\0';
    os::write_stderr("tailor: ", f.path, ": longer than 64 KiB; the rest is ignored\n");
  }
  f.read = true;
}

void config_init() noexcept {
  config_file_load(g_file, &os::getenv);
  char exe[kConfigPathMax];
  const bool have_exe = os::executable_path(exe, sizeof exe);
  config_parse(g_config, &os::getenv, g_file.read ? g_file.text : nullptr, have_exe ? exe : nullptr,
               g_file.read ? g_file.path : nullptr);
}

const char* config_file_path() noexcept { return g_file.read ? g_file.path : nullptr; }

}  // namespace tailor::alloc
