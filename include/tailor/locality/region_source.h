// SPDX-License-Identifier: MIT
// Where the locality heap gets its memory: a region source hands out aligned
// regions of bytes and takes them back. The heap (heap.h) is written against
// this concept only, so that it runs today on the mmap stand-in
// (mmap_region_source.h) and moves onto libtailor's back end (segments and
// pages, issue 5) by supplying another source, without touching the K-Bit
// structure or the predicates.
#pragma once

#include <concepts>
#include <cstddef>

namespace tailor::locality {

/// A source of aligned regions.
///   page_size(): the granule of obtain(); a power of two.
///   obtain(bytes, align): a region of `bytes` (a multiple of page_size())
///     whose address is a multiple of `align` (a power of two, at least
///     page_size()), readable and writable, zero-filled; nullptr if none.
///   give_back(p, bytes): returns a region exactly as obtained.
template <class S>
concept region_source = requires(S& s, std::size_t bytes, std::size_t align, void* p) {
  { s.page_size() } -> std::convertible_to<std::size_t>;
  { s.obtain(bytes, align) } -> std::same_as<void*>;
  { s.give_back(p, bytes) } noexcept;
};

}  // namespace tailor::locality
