// SPDX-License-Identifier: MIT
// What mallinfo2, mallinfo and malloc_stats report (mallinfo.cpp), in
// glibc's terms: arena (bytes of segments), uordblks (bytes in live blocks
// of those segments), fordblks (arena - uordblks), ordblks (free spans and
// free blocks), keepcost (free spans still resident, what malloc_trim gives
// back), hblks / hblkhd (live huge blocks, mapped on their own, and their
// mapped bytes). smblks, fsmblks and usmblks are 0, as in glibc (no
// fastbins). Other threads' heaps are read while they run: the figures are
// a racy snapshot, as glibc's are across arenas.
#pragma once

#include <cstdint>

namespace tailor::alloc {

struct MallInfo {
  std::uint64_t arena, ordblks, hblks, hblkhd, uordblks, fordblks, keepcost;
  std::uint64_t max_hblks, max_hblkhd;  // malloc_stats: "max mmap regions", "max mmap bytes"
};

// print_arenas: malloc_stats's "Arena N:" lines on stderr, one per heap.
MallInfo mallinfo_collect(bool print_arenas) noexcept;
// glibc's malloc_stats: per heap, then "Total (incl. mmap):", on stderr.
void malloc_stats_print() noexcept;

}  // namespace tailor::alloc
