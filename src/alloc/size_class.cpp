// SPDX-License-Identifier: MIT
// Construction of the size-class table (size_class.h) from the tunables.
#include "size_class.h"

#include "config.h"
#include "misuse.h"

namespace tailor::alloc {

SizeClasses g_classes;

namespace {
constexpr std::size_t kMiddleMinBlocks = 8;  // a multi-slice page holds at least this many blocks
constexpr std::size_t kExtendBytes = 4096;   // lazily carved per refill: untouched memory stays unfaulted

void add_class(std::size_t size) {
  SizeClass& c = g_classes.cls[g_classes.count++];
  const std::size_t slice = g_config.slice_size;
  std::size_t slices = 1;
  if (size > g_config.small_max) slices = (size * kMiddleMinBlocks + slice - 1) / slice;
  c.size = static_cast<std::uint32_t>(size);
  c.slices = static_cast<std::uint32_t>(slices);
  c.blocks = static_cast<std::uint32_t>(slices * slice / size);
  std::size_t ext = kExtendBytes / size;
  c.extend = static_cast<std::uint32_t>(ext == 0 ? 1 : ext);
  c.magic = block_magic(size);
}
}  // namespace

void size_classes_init() noexcept {
  g_classes.count = 0;
  // No 8-byte class: every block has a second word, where free marks it
  // (misuse.h). Sizes up to 16 share the first class.
  for (unsigned e = 3; e < 63; ++e) {
    const std::size_t lo = std::size_t{1} << e;
    std::size_t step = lo >> g_config.class_bits;
    if (step < 16) step = 16;
    if (step > lo) step = lo;
    g_classes.octave_base[e] = static_cast<std::uint16_t>(g_classes.count);
    g_classes.octave_shift[e] = static_cast<std::uint8_t>(__builtin_ctzll(step));
    bool done = false;
    for (std::size_t size = lo + step; size <= 2 * lo; size += step) {
      add_class(size);
      if (size >= g_config.middle_max) { done = true; break; }
    }
    if (done) break;
  }
  // middle_max becomes the largest class size (>= the requested threshold).
  g_config.middle_max = g_classes.cls[g_classes.count - 1].size;
  g_config.value[static_cast<int>(Param::kMiddleMax)] = static_cast<std::int64_t>(g_config.middle_max);
}

}  // namespace tailor::alloc
