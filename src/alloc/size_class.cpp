// SPDX-License-Identifier: MIT
// Construction of the size-class table (size_class.h) from the tunables.
#include "alloc/size_class.h"

#include "alloc/config.h"
#include "alloc/misuse.h"
#include "alloc/os.h"

namespace tailor::alloc {

SizeClasses g_classes;

namespace {
constexpr std::size_t kMinBlocks = 256;              // blocks a page holds, where it takes at most...
constexpr std::size_t kMiddlePageBytes = 256 * 1024;  // ...this much above SMALL_MAX
constexpr std::size_t kMiddleMinBlocks = 8;          // and never fewer than this many
constexpr std::size_t kExtendBytes = 4096;   // lazily carved per refill: untouched memory stays unfaulted

void add_class(std::size_t size) {
  SizeClass& c = g_classes.cls[g_classes.count++];
  const std::size_t slice = g_config.slice_size;
  std::size_t bytes = size * kMinBlocks;
  if (size > g_config.small_max) {
    if (bytes > kMiddlePageBytes) bytes = kMiddlePageBytes;
    if (bytes < size * kMiddleMinBlocks) bytes = size * kMiddleMinBlocks;
  }
  std::size_t slices = (bytes + slice - 1) / slice;
  if (slices == 0) slices = 1;
  c.size = static_cast<std::uint32_t>(size);
  c.slices = static_cast<std::uint32_t>(slices);
  c.blocks = static_cast<std::uint32_t>(slices * slice / size);
  std::size_t ext = kExtendBytes / size;
  c.extend = static_cast<std::uint32_t>(ext == 0 ? 1 : ext);
  c.magic = block_magic(size);
}
}  // namespace

std::size_t class_series(std::uint32_t class_bits, std::size_t middle_max, std::uint32_t* out, std::size_t cap,
                         std::uint16_t* octave_first, std::uint8_t* octave_shift, unsigned* last_octave) noexcept {
  std::size_t n = 0;
  // No 8-byte class: every block has a second word, where free marks it
  // (misuse.h). Sizes up to 16 share the first class.
  for (unsigned e = 3; e < 63; ++e) {
    const std::size_t lo = std::size_t{1} << e;
    std::size_t step = lo >> class_bits;
    if (step < 16) step = 16;
    if (step > lo) step = lo;
    if (octave_first != nullptr) octave_first[e] = static_cast<std::uint16_t>(n);
    if (octave_shift != nullptr) octave_shift[e] = static_cast<std::uint8_t>(__builtin_ctzll(step));
    if (last_octave != nullptr) *last_octave = e;
    for (std::size_t size = lo + step; size <= 2 * lo; size += step) {
      if (n == cap) return n;
      out[n++] = static_cast<std::uint32_t>(size);
      if (size >= middle_max) return n;
    }
  }
  return n;
}

void size_classes_init() noexcept {
  // The default series, as sizes first.
  static std::uint32_t series[kMaxClasses];
  std::uint16_t octave_first[64] = {};  // index in the series of each octave's first class
  std::uint8_t octave_shift[64] = {};
  unsigned last_octave = 3;
  const auto n = static_cast<std::uint32_t>(
      class_series(g_config.class_bits, g_config.middle_max, series, kMaxClasses, octave_first, octave_shift, &last_octave));
  // The added classes (config.h), merged in; none if they would not fit.
  const ClassList& a = g_config.classes;
  const ClassList& x = g_config.exact_classes;
  std::uint32_t added[2 * kClassListMax];
  std::uint32_t na = 0;
  for (std::uint32_t i = 0, j = 0; i < a.count || j < x.count;) {
    const std::uint32_t v = j == x.count || (i < a.count && a.size[i] < x.size[j]) ? a.size[i++] : x.size[j++];
    if (na == 0 || added[na - 1] != v) added[na++] = v;
  }
  std::uint32_t extra = 0;  // added sizes not in the series
  for (std::uint32_t i = 0, k = 0; i < na; ++i) {
    while (k < n && series[k] < added[i]) ++k;
    if (k == n || series[k] != added[i]) ++extra;
  }
  if (n + extra > kMaxClasses) {
    os::write_stderr("tailor: classes and exact_classes: more classes than libtailor holds; using the default classes\n");
    na = 0;
    extra = 0;
  }
  g_classes.count = 0;
  g_classes.exact = false;
  std::uint32_t k = 0;
  for (std::uint32_t i = 0; i <= n; ++i) {
    // Added sizes below series[i] first (all of them after the series' end).
    while (k < na && (i == n || added[k] < series[i])) {
      add_class(added[k]);
      g_classes.exact = g_classes.exact || added[k] % 16 != 0;
      ++k;
    }
    if (i == n) break;
    if (k < na && added[k] == series[i]) ++k;
    add_class(series[i]);
  }
  // The arithmetic's octaves, as indices in the merged table: it serves the
  // sizes above the added classes, whose classes are the series' shifted by
  // the added sizes not in it.
  for (unsigned e = 3; e <= last_octave; ++e) {
    g_classes.octave_base[e] = static_cast<std::uint16_t>(octave_first[e] + extra);
    g_classes.octave_shift[e] = octave_shift[e];
  }
  // The table, up to the largest added class.
  g_classes.table_max = na == 0 ? 0 : added[na - 1];
  for (std::size_t w = 0, c = 0; w * 8 <= g_classes.table_max; ++w) {
    while (g_classes.cls[c].size < (w == 0 ? 1 : w * 8)) ++c;
    g_classes.table[w] = static_cast<std::uint8_t>(c);
  }
  // middle_max becomes the largest class size (>= the requested threshold).
  g_config.middle_max = g_classes.cls[g_classes.count - 1].size;
  g_config.value[static_cast<int>(Param::kMiddleMax)] = static_cast<std::int64_t>(g_config.middle_max);
}

}  // namespace tailor::alloc
