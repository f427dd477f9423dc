// SPDX-License-Identifier: MIT
// mallinfo2, mallinfo and malloc_stats with glibc's meanings, from libtailor's
// own state (docs/allocator.md, "mallinfo2 and malloc_stats"): every heap's
// segments are walked (heap_totals), huge blocks come from the OS counters.
// Nothing here allocates or uses stdio: malloc_stats writes with write(2).
#include "alloc/mallinfo.h"

#include "alloc/dmm_front.h"
#include "alloc/heap.h"
#include "alloc/huge_cache.h"
#include "alloc/os.h"
#include "dmm/text.h"
#include "alloc/secure.h"
#include "tailor/tailor.h"

namespace tailor::alloc {

namespace {

struct Sum {
  HeapTotals all{};
  std::uint32_t heaps = 0;
  bool print = false;  // malloc_stats: one "Arena N:" block per heap that has memory
};

// Right-aligned in 10 columns, as glibc's "%10u".
struct Out {
  dmm::TextBuffer<128> text;
  void line(const char* label, std::uint64_t v) {
    text.clear();
    text.append(label).append_uint(v, 10).append('\n');
    os::write_stderr(text.c_str());
  }
};

void add_heap(Heap* h, void* arg) {
  auto* s = static_cast<Sum*>(arg);
  HeapTotals t{};
  heap_totals(h, t);
  if (t.arena == 0) return;  // a heap that holds no segment (all given back)
  if (s->print) {
    Out o;
    o.text.append("Arena ").append_uint(s->heaps).append(":\n");
    os::write_stderr(o.text.c_str());
    o.line("system bytes     = ", t.arena);
    o.line("in use bytes     = ", t.used);
  }
  s->heaps++;
  s->all.arena += t.arena;
  s->all.used += t.used;
  s->all.free_chunks += t.free_chunks;
  s->all.releasable += t.releasable;
}

}  // namespace

MallInfo mallinfo_collect(bool print_arenas) noexcept {
  process_init();
  Sum s;
  s.print = print_arenas;
  heaps_for_each(&add_heap, &s);
  if (secure_active()) secure_totals(s.all);  // after the heaps (malloc_stats prints them); the totals include it
  MallInfo m{};
  m.arena = s.all.arena;
  m.uordblks = s.all.used;
  m.ordblks = s.all.free_chunks;
  m.keepcost = s.all.releasable;
  if (dmm_active()) {  // the DMM's held memory: system bytes, all counted in use (the DMM does not split it)
    tailor_dmm_stats d{};
    dmm_get_stats(&d);
    m.arena += d.os_bytes;
    m.uordblks += d.os_bytes;
  }
  m.fordblks = m.arena - m.uordblks;
  m.hblks = g_os_counters.huge_blocks.load(std::memory_order_relaxed);
  m.hblkhd = g_os_counters.huge_bytes.load(std::memory_order_relaxed);
  m.max_hblks = g_os_counters.huge_blocks_max.load(std::memory_order_relaxed);
  m.max_hblkhd = g_os_counters.huge_bytes_max.load(std::memory_order_relaxed);
  return m;
}

void malloc_stats_print() noexcept {
  const MallInfo m = mallinfo_collect(true);
  Out o;
  os::write_stderr("Total (incl. mmap):\n");
  o.line("system bytes     = ", m.arena + m.hblkhd);
  o.line("in use bytes     = ", m.uordblks + m.hblkhd);
  o.line("max mmap regions = ", m.max_hblks);
  o.line("max mmap bytes   = ", m.max_hblkhd);
}

}  // namespace tailor::alloc
