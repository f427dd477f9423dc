// SPDX-License-Identifier: MIT
// AddressSpace: which addresses a Memory's system requests get, shared by
// the simulator's memory and libtailor's real one so that a DMM sees the
// same addresses (relative to its base) in both: the treap's priorities,
// the farthest fit and every alignment depend on them, and the validation
// of the simulator (docs/deploy.md) compares like with like.
//
// Like sbrk, a request is served at the break (bump pointer) aligned up,
// so consecutive requests with small alignments are contiguous (Kingsley
// relies on that); unlike sbrk, ranges given back are kept as holes,
// ordered and merged, and a later request takes the lowest hole it fits
// (first fit by address) before moving the break, so that a program that
// maps and unmaps large blocks for ever stays in a bounded range. A range
// given back at the break lowers it. The gap an alignment skips becomes a
// hole. Fresh addresses and holes read as zero (the owner of the memory
// sees to it: released() tells which pages went back).
//
// Page accounting: the bytes of the pages (of `page` bytes) that some held
// range touches, which is what the machine really gives (os_bytes()).
// Holes live in the arena (memory.h); obtain fails (returns 0) when the
// space is exhausted or the arena is full.
#pragma once

#include <cstddef>
#include <cstdint>

#include "dmm/memory.h"
#include "dmm/region_table.h"

namespace tailor::dmm {

/// Whole pages [start, end) that a release gave back (start == end: none).
struct PageRange {
  Address start = 0, end = 0;
};

template <Arena A>
class AddressSpace {
 public:
  AddressSpace(Address base, std::uint64_t span, std::uint64_t page)
      : base_(base), limit_(base + span), page_(page), bump_(base) {}

  Address base() const noexcept { return base_; }
  /// The break: every address at or above it is free.
  Address bump() const noexcept { return bump_; }

  /// `bytes` (> 0) at a multiple of `alignment` (a power of two); 0 if the
  /// space is exhausted (or the arena cannot record a hole).
  Address obtain(std::uint64_t bytes, std::uint64_t alignment) {
    for (std::size_t i = 0; i < holes_.size(); ++i) {
      const Hole h = hole(i);
      const Address start = align_up(h.start, alignment);
      if (start < h.start || start > h.end || h.end - start < bytes) continue;
      const Address end = start + bytes;
      // Carve [start, end) out of the hole: up to two pieces stay.
      hole_page_bytes_ -= full_pages(h.start, h.end);
      if (start > h.start && end < h.end) {
        if (!holes_.insert_at(i + 1, {end, h.end - end})) {
          hole_page_bytes_ += full_pages(h.start, h.end);
          return 0;
        }
        set(i, h.start, start);
      } else if (start > h.start) {
        set(i, h.start, start);
      } else if (end < h.end) {
        set(i, end, h.end);
      } else {
        holes_.erase(i);
        return start;
      }
      hole_page_bytes_ += full_pages(hole(i).start, hole(i).end);
      if (start > h.start && end < h.end) hole_page_bytes_ += full_pages(end, h.end);
      return start;
    }
    const Address start = align_up(bump_, alignment);
    if (start < bump_ || start > limit_ || limit_ - start < bytes) return 0;
    if (start > bump_ && !add_hole(bump_, start)) return 0;
    bump_ = start + bytes;
    return start;
  }

  /// Gives [address, address + bytes) back (it was obtained). Returns the
  /// whole pages no held range touches any more, which the owner may give
  /// back to the machine; the owner must make the rest of the range read as
  /// zero (its pages stay, shared with a neighbour).
  PageRange release(Address address, std::uint64_t bytes) {
    const Address end = address + bytes;
    if (end == bump_) {
      // Lower the break, through a hole that ends where the range starts.
      Address low = address;
      if (holes_.size() > 0 && hole(holes_.size() - 1).end == address) {
        low = hole(holes_.size() - 1).start;
        hole_page_bytes_ -= full_pages(low, address);
        holes_.erase(holes_.size() - 1);
      }
      const Address old_top = round_up(bump_);
      bump_ = low;
      const Address first = round_up(bump_);  // the page holding bump_ - 1 stays when bump_ is not on a page
      return {first < old_top ? first : old_top, old_top};
    }
    // Merge with the holes on either side.
    const std::size_t i = holes_.lower(address);  // first hole at or after address
    Address hs = address, he = end;
    const bool left = i > 0 && hole(i - 1).end == address;
    const bool right = i < holes_.size() && hole(i).start == end;
    Address old_left_end = address, old_right_start = end;
    if (left) {
      hs = hole(i - 1).start;
      hole_page_bytes_ -= full_pages(hs, address);
      old_left_end = address;
    }
    if (right) {
      he = hole(i).end;
      hole_page_bytes_ -= full_pages(end, he);
      old_right_start = end;
    }
    if (left && right) {
      set(i - 1, hs, he);
      holes_.erase(i);
    } else if (left) {
      set(i - 1, hs, he);
    } else if (right) {
      set(i, hs, he);
    } else if (!holes_.insert_at(i, {hs, he - hs})) {
      return {};  // the hole is lost to reuse (never to correctness): the arena is full
    }
    hole_page_bytes_ += full_pages(hs, he);
    // Pages newly whole inside the merged hole.
    Address from = round_up(hs), to = round_down(he);
    const Address lo = left ? round_down(old_left_end) : from;
    const Address hi = right ? round_up(old_right_start) : to;
    if (lo > from) from = lo;
    if (hi < to) to = hi;
    return from < to ? PageRange{from, to} : PageRange{};
  }

  /// Bytes of the pages some held range touches.
  std::uint64_t os_bytes() const noexcept { return round_up(bump_) - base_ - hole_page_bytes_; }
  /// Bytes of private state (the hole table).
  std::size_t state_bytes() const noexcept { return holes_.state_bytes(); }
  std::size_t holes() const noexcept { return holes_.size(); }

 private:
  struct Hole {
    Address start = 0, end = 0;
  };

  static Address align_up(Address a, std::uint64_t alignment) noexcept { return (a + alignment - 1) & ~(alignment - 1); }
  Address round_up(Address a) const noexcept { return (a + page_ - 1) & ~(page_ - 1); }
  Address round_down(Address a) const noexcept { return a & ~(page_ - 1); }
  std::uint64_t full_pages(Address s, Address e) const noexcept {
    const Address a = round_up(s), b = round_down(e);
    return a < b ? b - a : 0;
  }

  bool add_hole(Address s, Address e) {
    if (!holes_.insert_at(holes_.size(), {s, e - s})) return false;
    hole_page_bytes_ += full_pages(s, e);
    return true;
  }

  Hole hole(std::size_t i) const noexcept { return {holes_[i].start, holes_[i].start + holes_[i].bytes}; }
  void set(std::size_t i, Address s, Address e) noexcept { holes_.at(i) = {s, e - s}; }

  Address base_, limit_;
  std::uint64_t page_;
  Address bump_;
  RegionTable<A> holes_;  // merged, ordered
  std::uint64_t hole_page_bytes_ = 0;
};

}  // namespace tailor::dmm
