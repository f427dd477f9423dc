// SPDX-License-Identifier: MIT
// Where the locality heap gets its memory: a region source hands out aligned
// regions of bytes and takes them back. The heap (heap.h) is written against
// this concept only, so that the same K-Bit structure and predicates run on
// libtailor's back end (libtailor_region_source.h) or on plain mmap
// (mmap_region_source.h); default_region_source.h picks one at run time.
#pragma once

#include <concepts>
#include <cstddef>

namespace tailor::locality {

/// A source of aligned regions.
///   page_size(): the granule of obtain(); a power of two.
///   obtain(bytes, align): a region of `bytes` (a multiple of page_size())
///     whose address is a multiple of `align` (a power of two, at least
///     page_size()), readable and writable, contents unspecified; nullptr if
///     none.
///   give_back(p, bytes): returns a region exactly as obtained.
///
/// A source may also have (the heap uses them when present):
///   max_align(): the largest `align` it can honour;
///   bind_owner(free, usable_size, owner): called once by the heap that owns
///     the source, before any obtain(). A source whose regions can be
///     released by the process's free() (libtailor's) calls free(owner, p)
///     and usable_size(owner, p) for blocks inside them.
template <class S>
concept region_source = requires(S& s, std::size_t bytes, std::size_t align, void* p) {
  { s.page_size() } -> std::convertible_to<std::size_t>;
  { s.obtain(bytes, align) } -> std::same_as<void*>;
  { s.give_back(p, bytes) } noexcept;
};

/// The hooks of bind_owner.
using owner_free_fn = void (*)(void* owner, void* p);
using owner_usable_fn = std::size_t (*)(void* owner, const void* p);

}  // namespace tailor::locality
