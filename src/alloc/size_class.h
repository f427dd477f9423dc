// SPDX-License-Identifier: MIT
// Size classes (the front end's first decision): sizes up to MIDDLE_MAX are
// rounded up to one of a geometric series with CLASS_SPACING classes per
// doubling (at least 16 bytes apart, so every class is a multiple of 16,
// which C's rule for malloc asks: any type of the requested size or
// smaller). The class of a size is found in O(1) by arithmetic on its
// highest bit; each class knows the span its pages take and how many blocks
// they hold.
//
// A program's configuration may add classes to the series (config.h):
// `classes` (multiples of 16, learned from a trace by `tailor tune`) and
// `exact_classes` (multiples of 8: blocks of exactly that size at 8-byte
// alignment, by choice only). Then the class of a size up to the largest
// added one comes from a table built here, one byte per 8-byte step, and
// above it from the arithmetic. malloc's fast path does not change: it
// indexes the heap's direct pages by 8-byte step (heap.h) whatever the classes.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tailor::alloc {

constexpr std::size_t kMaxClasses = 176;
constexpr std::size_t kDirectMax = 1024;                  // sizes with a direct page pointer
constexpr std::size_t kDirectSlots = kDirectMax / 8 + 1;  // index (size + 7) / 8

struct SizeClass {
  std::uint32_t size;        // block size
  std::uint32_t slices;      // slices per page
  std::uint32_t blocks;      // blocks per page
  std::uint32_t extend;      // blocks carved at a time (about 4 KiB, at least 1)
  std::uint32_t stash_max;   // blocks a heap's stash of the class holds at most (heap.cpp; 0: none)
  std::uint64_t magic;       // block_magic(size) (misuse.h): the block-start test without the page
};

constexpr std::size_t kClassTableMax = 64 * 1024;  // config.h's kClassListLimit

struct SizeClasses {
  SizeClass cls[kMaxClasses];
  std::uint32_t count;
  std::uint16_t octave_base[64];  // first class of sizes in (2^e, 2^(e+1)]
  std::uint8_t octave_shift[64];  // log2 of the class step in that octave
  // With added classes: the class of sizes up to table_max, by (size + 7) / 8
  // (table_max 0: none, the arithmetic serves every size).
  std::size_t table_max;
  std::uint8_t table[kClassTableMax / 8 + 1];
  bool exact;  // some class is not a multiple of 16 (aligned requests avoid it)
};

extern SizeClasses g_classes __attribute__((visibility("hidden")));

// The default series: class sizes for 2^class_bits classes per doubling up
// to the first at or above middle_max, into out[0..cap); returns how many.
// With the octave arrays (64 entries), also each octave's first class and
// step, and the last octave. Used by size_classes_init and by `tailor tune`
// (which sizes a program's classes waste).
std::size_t class_series(std::uint32_t class_bits, std::size_t middle_max, std::uint32_t* out, std::size_t cap,
                         std::uint16_t* octave_first = nullptr, std::uint8_t* octave_shift = nullptr,
                         unsigned* last_octave = nullptr) noexcept;

// Builds the table from g_config (spacing, thresholds, slice size, added
// classes). Added classes that would make more than kMaxClasses are
// reported on stderr and left out.
void size_classes_init() noexcept;

// The class of a size in 1..middle_max (0 counts as 1).
inline std::uint32_t class_of(std::size_t size) noexcept {
  if (size <= g_classes.table_max) return g_classes.table[(size + 7) >> 3];
  if (size <= 16) return 0;
  std::size_t x = size - 1;
  unsigned e = 63u - static_cast<unsigned>(__builtin_clzll(x));
  return g_classes.octave_base[e] + static_cast<std::uint32_t>((x - (std::size_t{1} << e)) >> g_classes.octave_shift[e]);
}

}  // namespace tailor::alloc
