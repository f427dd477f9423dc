// SPDX-License-Identifier: MIT
// Lea (dlmalloc 2.8.6 by Doug Lea) as a mechanism over the Memory concept
// (memory.h), faithful to ../../../shared/docs/field-notes.md ("Classic
// allocators") and to the 2.8.6 source's macros (malloc, free, tmalloc_small,
// tmalloc_large, insert/unlink of small and tree chunks, sys_alloc, sys_trim,
// mmap_alloc, internal_memalign), 64-bit, no FOOTERS, no locks:
//  - chunks are 16-aligned; a chunk p of size s spans [p, p + s): p + 0 is
//    prev_foot (the previous chunk's size, meaningful only while that chunk is
//    free), p + 8 the head (s | PINUSE 1 | CINUSE 2), data from p + 16; an
//    in-use chunk also uses the next chunk's prev_foot, so the overhead is 8
//    bytes: a request of n bytes takes (n + 8 + 15) & ~15, at least 32;
//  - a free chunk has fd at p + 16, bk at p + 24 and its size as the next
//    chunk's prev_foot (boundary tag); a tree chunk also child[0] p + 32,
//    child[1] p + 40, parent p + 48 (1 for a bin's root, 0 for a chunk hanging
//    off a tree node's ring) and its bin index p + 56;
//  - 32 small bins 8 bytes apart (index = size >> 3, sizes < 256; with 16-byte
//    alignment only the even ones hold chunks): doubly linked lists, inserted
//    and taken at the front (LIFO, as 2.8.6's insert_small_chunk and
//    unlink_first_small_chunk do), with a bitmap of non-empty bins;
//  - 32 tree bins, two per power of two from 256 (bin 0 = [256, 384), bin 1 =
//    [384, 512), ..., bin 31 = [12 MiB, inf)): each a bitwise trie on the size
//    bits below the bin's two top bits (dlmalloc's), chunks of one size on a
//    circular ring hanging off their tree node (a new one goes after the node,
//    the node is taken first: FIFO among equal sizes), with a bitmap;
//  - malloc, small request (n <= 232): the exact bin → if nb > dv's size: the
//    smallest non-empty larger small bin, split, the remainder (if >= 32)
//    becoming dv (the old dv goes to its bin) → else the smallest chunk of the
//    smallest non-empty tree bin, split the same way → dv (split if the rest
//    is >= 32, else taken whole) → top (split while nb < top's size) → system;
//    large request: best fit in the tree bins if its remainder is smaller than
//    dv's (the remainder, if >= 32, goes to a bin, not to dv) → dv → top →
//    system, where nb >= 256 KiB once top exists is mmapped on its own
//    (page_align(nb + 63) bytes, a region released on free);
//  - free coalesces with both neighbours at once, into top or dv when they
//    are one of them (no fastbins in 2.8); when a free leaves top above 2 MiB,
//    top is trimmed to the last 64 KiB granule (sys_trim(0));
//  - memalign & co. (alignment > 16): malloc(nb + alignment + 24), then the
//    leading and trailing spare chunks are freed without trimming (dispose_chunk).
//
// System memory. dlmalloc on Linux extends one contiguous sbrk heap; here every
// sys_alloc is a separate segment (dlmalloc's own non-contiguous path, as with
// mmap as MORECORE): granularity_align(nb + 96) bytes in 64 KiB steps, obtained
// with alignment 16. The checker demands that every block lie inside one region
// obtained from the system, and SimulatedMemory never merges adjacent regions,
// so contiguous extension (a chunk straddling two obtains) is not possible over
// it. Each segment ends in 80 bytes (TOP_FOOT_SIZE: the segment record chunk,
// 48 bytes in use, and fenceposts), so top's size is the segment's bytes - 80
// when it is made; when a new segment is added, the old top becomes a free
// chunk in a bin (add_segment) and the new segment's start is the new top.
// Chunks never coalesce across segments; trimming releases the tail of top's
// segment (the newest); segments left wholly free are not returned
// (release_unused_segments is left out). dlmalloc maps big requests only once
// top exists, so a first request of 256 KiB or more is served from a segment.
//
// Time complexity, in abstract steps as the DMM simulator paper counts them (one per list
// operation and per loop iteration of a search; bitmaps, picking a bin and
// header arithmetic are free):
//   - 1 per taking of a chunk: a small bin pop, a tree unlink, a cut from dv or
//     from top (the split that goes with it is free);
//   - 1 per insertion of a chunk into a bin (a remainder, the old dv, a freed
//     chunk), plus 1 per tree node examined while descending to its place;
//   - 1 per unlink of a free neighbour from a bin when coalescing;
//   - tree searches: 1 per node examined (best-fit descent, leftmost walk),
//     1 per step down to the leaf that replaces an unlinked tree node;
//   - 1 per merge of a freed chunk into top or dv (which are in no bin);
//   - 1 per system request (a segment, an mmap, a munmap, a trim).
// So a small malloc from its exact bin or from top costs 1 step, and a free
// whose neighbours are in use 1 (a small bin) or 1 + depth (a tree bin).
// Memory accesses are the loads and stores made on the Memory: chunk heads,
// boundary tags, fd/bk links, tree links, fenceposts. Bin heads, the two
// bitmaps, dv, top and the segment end are the allocator's static state
// (malloc_state) and not counted, like Kingsley's list heads.
#pragma once

#include <array>
#include <bit>
#include <cstdint>

#include "dmm/allocator.h"
#include "dmm/memory.h"

namespace tailor::dmm {

template <Memory M>
class Lea {
 public:
  static constexpr MechanismKind kKind = MechanismKind::kLea;
  static constexpr std::uint64_t kMinAlignment = 16;
  static constexpr std::uint64_t kOverhead = 8;         // CHUNK_OVERHEAD
  static constexpr std::uint64_t kMinChunk = 32;        // MIN_CHUNK_SIZE
  static constexpr std::uint64_t kMinLarge = 256;       // MIN_LARGE_SIZE
  static constexpr std::uint64_t kMaxSmallRequest = 232;  // MAX_SMALL_REQUEST
  static constexpr std::uint64_t kTopFoot = 80;         // TOP_FOOT_SIZE
  static constexpr std::uint64_t kSysPadding = kTopFoot + 16;  // SYS_ALLOC_PADDING
  static constexpr std::uint64_t kSegmentRecord = 48;   // pad_request(sizeof(malloc_segment))
  static constexpr std::uint64_t kMmapFootPad = 32;     // MMAP_FOOT_PAD
  static constexpr std::uint64_t kGranularity = std::uint64_t{64} << 10;
  static constexpr std::uint64_t kMmapThreshold = std::uint64_t{256} << 10;
  static constexpr std::uint64_t kTrimThreshold = std::uint64_t{2} << 20;
  static constexpr std::uint64_t kMaxRequest = std::uint64_t{1} << 46;
  static constexpr unsigned kSmallBins = 32;
  static constexpr unsigned kTreeBins = 32;
  static constexpr std::uint64_t kPinuse = 1, kCinuse = 2, kInuse = 3, kFencepost = 7;

  /// Why Lea cannot run with this page size, or nullptr if it can.
  static const char* check(std::uint64_t page_size) noexcept {
    return page_size < 64 || !std::has_single_bit(page_size) ? "Lea: the page size is not a power of two >= 64"
                                                             : nullptr;
  }

  /// `page_size` must pass check().
  explicit Lea(M& memory, std::uint64_t page_size = 4096) : memory_(memory), page_(page_size) {}

  /// Chunk bytes for a request of n bytes (request2size).
  static constexpr std::uint64_t request2size(std::uint64_t n) noexcept {
    return n < kMinChunk - kOverhead - 1 ? kMinChunk : (n + kOverhead + 15) & ~std::uint64_t{15};
  }

  /// Tree bin of a chunk of s >= 256 bytes (compute_tree_index).
  static constexpr unsigned tree_index(std::uint64_t s) noexcept {
    const std::uint64_t x = s >> 8;
    if (x == 0) return 0;
    if (x > 0xFFFF) return kTreeBins - 1;
    const unsigned k = static_cast<unsigned>(std::bit_width(x)) - 1;
    return (k << 1) + static_cast<unsigned>((s >> (k + 7)) & 1);
  }

  Block allocate(std::uint64_t bytes, std::uint64_t alignment = 0) {
    if (bytes >= kMaxRequest || alignment >= kMaxRequest) [[unlikely]]
      return {};
    if (alignment > kMinAlignment) [[unlikely]]
      return memalign(bytes, alignment);
    const Chunk c = malloc_chunk(bytes);
    if (c.p == 0) [[unlikely]]
      return {};  // the system refused memory
    return {c.p + 16, c.bytes};
  }

  /// Bytes the program may use from `address` (as allocate returned it) to
  /// the end of its block: malloc_usable_size. Reads the block's metadata.
  std::uint64_t usable(Address address) {
    const Address p = address - 16;
    const std::uint64_t head = memory_.load(p + 8);
    const std::uint64_t size = head & ~std::uint64_t{7};
    // An in-use chunk also owns the next chunk's prev_foot; an mmapped one does not.
    return (head & kInuse) == 0 ? size - 16 : size - kOverhead;
  }

  /// Releases the block at `address` (as allocate returned it); returns its block bytes.
  std::uint64_t release(Address address) {
    const Address p = address - 16;
    const std::uint64_t head = memory_.load(p + 8);
    const std::uint64_t psize = head & ~std::uint64_t{7};
    if ((head & kInuse) == 0) [[unlikely]] {  // mmapped
      const std::uint64_t prevsize = memory_.load(p);
      const std::uint64_t bytes = psize + prevsize + kMmapFootPad;
      ++steps_;
      memory_.release(p - prevsize, bytes);
      return bytes;
    }
    free_chunk(p, psize, (head & kPinuse) != 0, true);
    return psize;
  }

  std::uint64_t steps() const noexcept { return steps_; }
  /// Chunks cut in two (a remainder left free, top or dv included).
  std::uint64_t splits() const noexcept { return splits_; }
  /// Merges of a freed chunk with a free neighbour (top and dv included).
  std::uint64_t coalesces() const noexcept { return coalesces_; }
  /// Lea splits, coalesces and trims.
  bool merges() const noexcept { return true; }
  M& memory() noexcept { return memory_; }
  const M& memory() const noexcept { return memory_; }

  // State, for tests.
  Address top() const noexcept { return top_; }
  std::uint64_t top_size() const noexcept { return topsize_; }
  Address dv() const noexcept { return dv_; }
  std::uint64_t dv_size() const noexcept { return dvsize_; }
  std::uint32_t small_map() const noexcept { return smallmap_; }
  std::uint32_t tree_map() const noexcept { return treemap_; }
  Address small_bin(unsigned i) const noexcept { return small_heads_[i]; }
  Address tree_bin(unsigned i) const noexcept { return tree_roots_[i]; }

 private:
  struct Chunk {
    Address p;
    std::uint64_t bytes;  // chunk bytes, or the mapped bytes of an mmapped chunk
    bool mmapped;
  };
  static constexpr Address kRoot = 1;  // parent of a tree bin's root

  std::uint64_t chunksize(Address p) { return memory_.load(p + 8) & ~std::uint64_t{7}; }
  void set_inuse_and_pinuse(Address p, std::uint64_t s) {
    memory_.store(p + 8, s | kInuse);
    memory_.store(p + s + 8, memory_.load(p + s + 8) | kPinuse);
  }
  void set_size_and_pinuse_of_inuse(Address p, std::uint64_t s) { memory_.store(p + 8, s | kInuse); }
  void set_size_and_pinuse_of_free(Address p, std::uint64_t s) {
    memory_.store(p + 8, s | kPinuse);
    memory_.store(p + s, s);
  }
  void set_free_with_pinuse(Address p, std::uint64_t s, Address n) {
    memory_.store(n + 8, memory_.load(n + 8) & ~kPinuse);
    set_size_and_pinuse_of_free(p, s);
  }
  void set_inuse(Address p, std::uint64_t s) {
    memory_.store(p + 8, (memory_.load(p + 8) & kPinuse) | s | kCinuse);
    memory_.store(p + s + 8, memory_.load(p + s + 8) | kPinuse);
  }

  // ---- small bins: fd/bk lists, 0-terminated, the head in state ----
  Address pop_small(unsigned i) {
    ++steps_;
    const Address p = small_heads_[i];
    const Address f = memory_.load(p + 16);
    small_heads_[i] = f;
    if (f)
      memory_.store(f + 24, 0);
    else
      smallmap_ &= ~(std::uint32_t{1} << i);
    return p;
  }
  void insert_small(Address p, std::uint64_t s) {
    ++steps_;
    const unsigned i = static_cast<unsigned>(s >> 3);
    const Address f = small_heads_[i];
    if (f)
      memory_.store(f + 24, p);
    else
      smallmap_ |= std::uint32_t{1} << i;
    memory_.store(p + 16, f);
    memory_.store(p + 24, 0);
    small_heads_[i] = p;
  }
  void unlink_small(Address p, std::uint64_t s) {
    ++steps_;
    const unsigned i = static_cast<unsigned>(s >> 3);
    const Address f = memory_.load(p + 16);
    const Address b = memory_.load(p + 24);
    if (b)
      memory_.store(b + 16, f);
    else
      small_heads_[i] = f;
    if (f) memory_.store(f + 24, b);
    if (!small_heads_[i]) smallmap_ &= ~(std::uint32_t{1} << i);
  }

  // ---- tree bins (insert_large_chunk, unlink_large_chunk) ----
  static constexpr unsigned leftshift_for_tree_index(unsigned i) noexcept {
    return i == kTreeBins - 1 ? 0 : 63 - ((i >> 1) + 8 - 2);
  }
  Address leftmost_child(Address t) {
    const Address c0 = memory_.load(t + 32);
    return c0 ? c0 : memory_.load(t + 40);
  }
  void insert_large(Address x, std::uint64_t s) {
    ++steps_;
    const unsigned i = tree_index(s);
    memory_.store(x + 56, i);
    memory_.store(x + 32, 0);
    memory_.store(x + 40, 0);
    if (!(treemap_ & (std::uint32_t{1} << i))) {
      treemap_ |= std::uint32_t{1} << i;
      tree_roots_[i] = x;
      memory_.store(x + 48, kRoot);
      memory_.store(x + 16, x);
      memory_.store(x + 24, x);
      return;
    }
    Address t = tree_roots_[i];
    std::uint64_t k = s << leftshift_for_tree_index(i);
    for (;;) {
      ++steps_;
      if (chunksize(t) != s) {
        const Address c = t + 32 + ((k >> 63) << 3);
        k <<= 1;
        const Address child = memory_.load(c);
        if (child) {
          t = child;
        } else {
          memory_.store(c, x);
          memory_.store(x + 48, t);
          memory_.store(x + 16, x);
          memory_.store(x + 24, x);
          return;
        }
      } else {
        const Address f = memory_.load(t + 16);
        memory_.store(t + 16, x);
        memory_.store(f + 24, x);
        memory_.store(x + 16, f);
        memory_.store(x + 24, t);
        memory_.store(x + 48, 0);
        return;
      }
    }
  }
  void unlink_large(Address x) {
    ++steps_;
    const Address xp = memory_.load(x + 48);
    const Address xb = memory_.load(x + 24);
    Address r;
    if (xb != x) {
      const Address f = memory_.load(x + 16);
      r = xb;
      memory_.store(f + 24, r);
      memory_.store(r + 16, f);
    } else {
      Address rp = x + 40;
      r = memory_.load(rp);
      if (!r) r = memory_.load(rp = x + 32);
      if (r) {
        for (;;) {
          Address cp = r + 40;
          Address c = memory_.load(cp);
          if (!c) c = memory_.load(cp = r + 32);
          if (!c) break;
          ++steps_;
          rp = cp;
          r = c;
        }
        memory_.store(rp, 0);
      }
    }
    if (xp != 0) {
      const unsigned i = static_cast<unsigned>(memory_.load(x + 56));
      if (x == tree_roots_[i]) {
        tree_roots_[i] = r;
        if (!r) treemap_ &= ~(std::uint32_t{1} << i);
      } else if (memory_.load(xp + 32) == x) {
        memory_.store(xp + 32, r);
      } else {
        memory_.store(xp + 40, r);
      }
      if (r) {
        memory_.store(r + 48, xp);
        const Address c0 = memory_.load(x + 32);
        if (c0) {
          memory_.store(r + 32, c0);
          memory_.store(c0 + 48, r);
        }
        const Address c1 = memory_.load(x + 40);
        if (c1) {
          memory_.store(r + 40, c1);
          memory_.store(c1 + 48, r);
        }
      }
    }
  }
  void insert_chunk(Address p, std::uint64_t s) {
    if (s < kMinLarge)
      insert_small(p, s);
    else
      insert_large(p, s);
  }
  void unlink_chunk(Address p, std::uint64_t s) {
    if (s < kMinLarge)
      unlink_small(p, s);
    else
      unlink_large(p);
  }
  void replace_dv(Address r, std::uint64_t rsize) {
    if (dvsize_) insert_chunk(dv_, dvsize_);
    dv_ = r;
    dvsize_ = rsize;
  }

  // Smallest chunk of the smallest non-empty tree bin, for a small request.
  Chunk tmalloc_small(std::uint64_t nb) {
    const unsigned i = static_cast<unsigned>(std::countr_zero(treemap_));
    Address t = tree_roots_[i], v = t;
    ++steps_;
    std::uint64_t rsize = chunksize(t) - nb;
    while ((t = leftmost_child(t)) != 0) {
      ++steps_;
      const std::uint64_t trem = chunksize(t) - nb;
      if (trem < rsize) rsize = trem, v = t;
    }
    return take_tree_chunk(v, nb, rsize, true);
  }

  // Tree chunk v (rsize bytes more than nb) serves the request: whole if
  // the rest would be smaller than a chunk, else split, its rest becoming
  // the designated victim (dv) or going to its bin.
  Chunk take_tree_chunk(Address v, std::uint64_t nb, std::uint64_t rsize, bool rest_is_dv) {
    unlink_large(v);
    if (rsize < kMinChunk) {
      set_inuse_and_pinuse(v, rsize + nb);
      return {v, rsize + nb, false};
    }
    set_size_and_pinuse_of_inuse(v, nb);
    ++splits_;
    set_size_and_pinuse_of_free(v + nb, rsize);
    if (rest_is_dv)
      replace_dv(v + nb, rsize);
    else
      insert_chunk(v + nb, rsize);
    return {v, nb, false};
  }

  // Best fit for a large request, if better than dv; p = 0 if none.
  Chunk tmalloc_large(std::uint64_t nb) {
    Address v = 0;
    std::uint64_t rsize = -nb;
    const unsigned idx = tree_index(nb);
    Address t = tree_roots_[idx];
    if (t) {
      std::uint64_t sizebits = nb << leftshift_for_tree_index(idx);
      Address rst = 0;  // the deepest untaken right subtree
      for (;;) {
        ++steps_;
        const std::uint64_t trem = chunksize(t) - nb;
        if (trem < rsize) {
          v = t;
          if ((rsize = trem) == 0) break;
        }
        const Address rt = memory_.load(t + 40);
        t = memory_.load(t + 32 + ((sizebits >> 63) << 3));
        if (rt != 0 && rt != t) rst = rt;
        if (t == 0) {
          t = rst;
          break;
        }
        sizebits <<= 1;
      }
    }
    if (t == 0 && v == 0) {
      const std::uint32_t bit = std::uint32_t{1} << idx;
      const std::uint32_t leftbits = ((bit << 1) | (0u - (bit << 1))) & treemap_;
      if (leftbits) t = tree_roots_[std::countr_zero(leftbits)];
    }
    while (t != 0) {
      ++steps_;
      const std::uint64_t trem = chunksize(t) - nb;
      if (trem < rsize) rsize = trem, v = t;
      t = leftmost_child(t);
    }
    if (v != 0 && rsize < dvsize_ - nb) return take_tree_chunk(v, nb, rsize, false);
    return {0, 0, false};
  }

  Chunk malloc_chunk(std::uint64_t bytes) {
    std::uint64_t nb;
    if (bytes <= kMaxSmallRequest) {
      nb = request2size(bytes);
      unsigned idx = static_cast<unsigned>(nb >> 3);
      const std::uint32_t smallbits = smallmap_ >> idx;
      if (smallbits & 3u) {  // exact (or next, never filled with 16-byte alignment) bin
        idx += ~smallbits & 1u;
        const Address p = pop_small(idx);
        const std::uint64_t size = std::uint64_t{idx} << 3;
        set_inuse_and_pinuse(p, size);
        return {p, size, false};
      }
      if (nb > dvsize_) {
        if (smallbits) {  // the smallest non-empty larger bin, split
          const std::uint32_t bit = std::uint32_t{1} << idx;
          const std::uint32_t leftbits = (smallbits << idx) & ((bit << 1) | (0u - (bit << 1)));
          const unsigned i = static_cast<unsigned>(std::countr_zero(leftbits));
          const Address p = pop_small(i);
          const std::uint64_t size = std::uint64_t{i} << 3, rsize = size - nb;
          if (rsize < kMinChunk) {
            set_inuse_and_pinuse(p, size);
            return {p, size, false};
          }
          set_size_and_pinuse_of_inuse(p, nb);
          ++splits_;
          set_size_and_pinuse_of_free(p + nb, rsize);
          replace_dv(p + nb, rsize);
          return {p, nb, false};
        }
        if (treemap_) return tmalloc_small(nb);
      }
    } else {
      nb = request2size(bytes);
      if (treemap_) {
        const Chunk c = tmalloc_large(nb);
        if (c.p) return c;
      }
    }
    if (nb <= dvsize_) {
      ++steps_;
      const Address p = dv_;
      const std::uint64_t rsize = dvsize_ - nb;
      if (rsize >= kMinChunk) {
        ++splits_;
        dv_ = p + nb;
        dvsize_ = rsize;
        set_size_and_pinuse_of_free(dv_, rsize);
        set_size_and_pinuse_of_inuse(p, nb);
        return {p, nb, false};
      }
      const std::uint64_t dvs = dvsize_;
      dv_ = 0;
      dvsize_ = 0;
      set_inuse_and_pinuse(p, dvs);
      return {p, dvs, false};
    }
    if (nb < topsize_) return split_top(nb);
    return sys_alloc(nb);
  }

  Chunk split_top(std::uint64_t nb) {
    ++steps_;
    ++splits_;
    const Address p = top_;
    topsize_ -= nb;
    top_ = p + nb;
    memory_.store(top_ + 8, topsize_ | kPinuse);
    set_size_and_pinuse_of_inuse(p, nb);
    return {p, nb, false};
  }

  void init_top(Address p, std::uint64_t psize) {
    top_ = p;
    topsize_ = psize;
    memory_.store(p + 8, psize | kPinuse);
    memory_.store(p + psize + 8, kTopFoot);  // the fencepost head after top
  }

  Chunk sys_alloc(std::uint64_t nb) {
    if (nb >= kMmapThreshold && topsize_ != 0) {  // mmap_alloc
      const std::uint64_t mmsize = (nb + 6 * 8 + 15 + page_ - 1) & ~(page_ - 1);
      ++steps_;
      const Address p = memory_.obtain(mmsize, page_);
      if (p == 0) return {0, 0, false};
      const std::uint64_t psize = mmsize - kMmapFootPad;
      memory_.store(p, 0);                     // prev_foot = offset to the mapping's start
      memory_.store(p + 8, psize);             // no in-use bits: mmapped
      memory_.store(p + psize + 8, kFencepost);
      memory_.store(p + psize + 16, 0);
      return {p, mmsize, true};
    }
    const std::uint64_t asize = (nb + kSysPadding + kGranularity - 1) & ~(kGranularity - 1);
    ++steps_;
    const Address tbase = memory_.obtain(asize, 16);
    if (tbase == 0) return {0, 0, false};
    if (top_ == 0) {
      init_top(tbase, asize - kTopFoot);
      seg_end_ = tbase + asize;
    } else {
      add_segment(tbase, asize);
    }
    return split_top(nb);
  }

  // The old top becomes a free chunk in a bin, ended by the segment record
  // (an in-use chunk; its fenceposts are not written: nothing walks past it).
  void add_segment(Address tbase, std::uint64_t tsize) {
    const Address old_top = top_;
    const std::uint64_t ots = topsize_;
    const Address csp = ots < kMinChunk ? old_top : seg_end_ - kTopFoot;  // seg_end_ - kTopFoot == old_top + ots
    init_top(tbase, tsize - kTopFoot);
    seg_end_ = tbase + tsize;
    set_size_and_pinuse_of_inuse(csp, kSegmentRecord);
    if (csp != old_top) {
      set_free_with_pinuse(old_top, ots, csp);
      insert_chunk(old_top, ots);
    }
  }

  void sys_trim() {
    if (topsize_ <= kTopFoot) return;
    const std::uint64_t extra = ((topsize_ - kTopFoot + kGranularity - 1) / kGranularity - 1) * kGranularity;
    if (extra == 0) return;
    ++steps_;
    memory_.release(seg_end_ - extra, extra);
    seg_end_ -= extra;
    init_top(top_, topsize_ - extra);
  }

  // dlfree / dispose_chunk of the chunk p of psize bytes; pinuse: its head's PINUSE bit.
  void free_chunk(Address p, std::uint64_t psize, bool pinuse, bool may_trim) {
    const Address next = p + psize;
    if (!pinuse) {  // coalesce backward
      ++coalesces_;
      const std::uint64_t prevsize = memory_.load(p);
      p -= prevsize;
      psize += prevsize;
      if (p != dv_) {
        unlink_chunk(p, prevsize);
      } else if ((memory_.load(next + 8) & kInuse) == kInuse) {
        ++steps_;
        dvsize_ = psize;
        set_free_with_pinuse(p, psize, next);
        return;
      }
    }
    const std::uint64_t nhead = memory_.load(next + 8);
    if (!(nhead & kCinuse)) {  // coalesce forward
      ++coalesces_;
      if (next == top_) {
        ++steps_;
        topsize_ += psize;
        top_ = p;
        memory_.store(p + 8, topsize_ | kPinuse);
        if (p == dv_) dv_ = 0, dvsize_ = 0;
        if (may_trim && topsize_ > kTrimThreshold) sys_trim();
        return;
      }
      if (next == dv_) {
        ++steps_;
        dvsize_ += psize;
        dv_ = p;
        set_size_and_pinuse_of_free(p, dvsize_);
        return;
      }
      const std::uint64_t nsize = nhead & ~std::uint64_t{7};
      psize += nsize;
      unlink_chunk(next, nsize);
      set_size_and_pinuse_of_free(p, psize);
      if (p == dv_) {
        ++steps_;
        dvsize_ = psize;
        return;
      }
    } else {
      set_free_with_pinuse(p, psize, next);
    }
    insert_chunk(p, psize);
  }

  // internal_memalign: over-allocate, free the leading and trailing spare chunks.
  Block memalign(std::uint64_t bytes, std::uint64_t alignment) {
    if (alignment < kMinChunk) alignment = kMinChunk;
    if (!std::has_single_bit(alignment)) alignment = std::bit_ceil(alignment);
    const std::uint64_t nb = request2size(bytes);
    const Chunk c = malloc_chunk(nb + alignment + kMinChunk - kOverhead);
    if (c.p == 0) return {};
    Address p = c.p;
    if ((p + 16) & (alignment - 1)) {
      const Address br = ((p + 16 + alignment - 1) & ~(alignment - 1)) - 16;
      const Address pos = br - p >= kMinChunk ? br : br + alignment;
      const std::uint64_t leadsize = pos - p;
      const std::uint64_t newsize = chunksize(p) - leadsize;
      if (c.mmapped) {
        memory_.store(pos, memory_.load(p) + leadsize);
        memory_.store(pos + 8, newsize);
      } else {
        set_inuse(pos, newsize);
        set_inuse(p, leadsize);
        free_chunk(p, leadsize, (memory_.load(p + 8) & kPinuse) != 0, false);
      }
      p = pos;
    }
    if (c.mmapped) return {p + 16, c.bytes};
    std::uint64_t size = chunksize(p);
    if (size > nb + kMinChunk) {
      set_inuse(p, nb);
      set_inuse(p + nb, size - nb);
      free_chunk(p + nb, size - nb, true, false);
      size = nb;
    }
    return {p + 16, size};
  }

  M& memory_;
  std::uint64_t page_;
  std::uint64_t steps_ = 0, splits_ = 0, coalesces_ = 0;
  std::uint32_t smallmap_ = 0, treemap_ = 0;
  Address dv_ = 0, top_ = 0, seg_end_ = 0;
  std::uint64_t dvsize_ = 0, topsize_ = 0;
  std::array<Address, kSmallBins> small_heads_{};
  std::array<Address, kTreeBins> tree_roots_{};
};

}  // namespace tailor::dmm
