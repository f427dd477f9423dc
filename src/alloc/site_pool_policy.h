// SPDX-License-Identifier: MIT
// The call-site pools' policy in numbers (docs/pools.md): when the monitor
// pools a site, the slot size a pool serves, how its pages grow, and when
// a pool of temporaries is demoted. libtailor applies it (site_pool.cpp);
// `tailor stats --strides` replays it on a recorded trace to tell what the
// strides would be with pools (src/analyze/strides.cpp). One header, so the
// prediction follows the allocator when the policy changes. Constants and
// pure functions only: the allocator core depends on nothing but libc.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tailor::alloc::pools_policy {

// Largest request a pool serves.
constexpr std::size_t kPoolMaxRequest = 1024;

// Requests a monitor watches before it decides; the site is pooled when at
// least 7/8 of them had the size of the request before (the pool allocation paper's "the
// last entry matches the size of the new request"). The first request has
// nothing before it: kWindow - 1 comparisons.
constexpr std::uint32_t kWindow = 64;
constexpr bool keeps_one_size(std::size_t size, std::uint32_t repeats) noexcept {
  return size <= kPoolMaxRequest && repeats * 8 >= (kWindow - 1) * 7;
}

// TAILOR_POOLS=1 pools a one-size site only where a pool changes the
// layout: when, in its window, at least kInterleaved of its requests came
// right after a request of the same slot size from another site in the
// same thread. A site that allocates its size alone already gets the
// heap's pages of that size in allocation order, as a pool would give it;
// a pool of its own would add only the routing's cost (olden_mst's edge
// entries, all allocated after its vertices of the same slot: 1.25x the
// instructions of default libtailor, no fewer misses).
constexpr std::uint32_t kInterleaved = kWindow / 8;
constexpr bool interleaves(std::uint32_t after_other) noexcept { return after_other >= kInterleaved; }

// The slot a request of `size` bytes takes in a pool: 16-byte multiples.
constexpr std::uint32_t round_slot(std::size_t size) noexcept {
  return static_cast<std::uint32_t>(size == 0 ? 16 : (size + 15) & ~std::size_t{15});
}

// A pool's first page; each next one is twice the last, up to kMaxPage (or
// a quarter of a segment, if that is less).
constexpr std::size_t kFirstPage = 64 * 1024;
constexpr std::size_t kMaxPage = std::size_t{8} << 20;

// A pool that empties while its only page has carved fewer than
// kYoungSlots slots holds the site's young objects, not a structure to
// walk; after kYoungEmpties such times the site is demoted for good.
constexpr std::uint32_t kYoungSlots = 64;
constexpr std::uint32_t kYoungEmpties = 16;

}  // namespace tailor::alloc::pools_policy
