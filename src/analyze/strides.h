// SPDX-License-Identifier: MIT
// Call sites as the pool allocation paper's pools see them, from a trace: per allocation call
// site, how consistent its request sizes are, how many objects it makes and
// how long they live, whether libtailor's monitor would pool it, and how
// regular the address stride between its successive allocations is, as
// recorded and as it would be with pools (docs/pools.md).
//
// The pool column replays the site's requests through the same policy as
// libtailor's pools (src/alloc/site_pool.cpp): the first kWindow requests of
// a site are watched and go to the heap; a site is pooled when at least 7/8
// of them had the size of the request before, unless it is the first such
// site of its slot size (TAILOR_POOLS=1; 2 pools it too), until its pool
// shows it makes temporaries (then it is demoted); then every request of its
// slot size (rounded up to 16 bytes) takes a slot of that thread's pool for
// the site: a freed slot of the current area (last freed first) or the bump
// pointer, a new area twice the size of the last when full, an emptied
// area given back. Areas of one pool are laid out one after the other.
//
// Strides are counted exactly: a first pass finds candidate strides per site
// (Misra-Gries, 32 counters), a second pass counts those candidates.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "tailor/trace/reader.h"

namespace tailor::analyze {

struct SiteProfile {
  std::uint64_t address = 0;       ///< return address
  std::uint64_t allocations = 0;   ///< malloc, calloc, operator new (not aligned, not realloc)
  std::uint64_t bytes = 0;
  std::uint64_t top_size = 0;      ///< most frequent request size
  double top_size_share = 0;       ///< its share of the allocations
  std::uint64_t distinct_sizes = 0;  ///< up to 64 counted
  double mean_lifetime_events = 0; ///< of the objects freed (events between allocation and release)
  std::uint64_t freed = 0;
  std::uint64_t peak_live = 0;     ///< objects
  bool pooled = false;             ///< libtailor's monitor would pool it
  /// Its requests keep one size, but it was the first such site of its slot
  /// size: with TAILOR_POOLS=1 the monitor leaves it the heap's pages.
  bool keeps_heap = false;
  /// Its requests keep one size, but in its first requests none of another
  /// site of its slot size came between them: alone, the heap's pages are
  /// its pool already, and the monitor leaves it there.
  bool alone = false;
  /// Pooled, then left to the heap: its pool emptied 16 times while its one
  /// area had carved fewer than 64 slots (temporaries; site_pool.cpp).
  bool demoted = false;
  std::uint64_t slot = 0;          ///< its slot size if pooled
  std::uint64_t pooled_allocations = 0;  ///< allocations a pool would serve
  // Strides between successive allocations of the site (all threads, trace order).
  std::int64_t stride = 0;         ///< most common, recorded
  double stride_share = 0;         ///< its share of the strides
  std::int64_t pool_stride = 0;    ///< most common among the pooled allocations, with pools
  double pool_stride_share = 0;
  std::string symbol, module;      ///< filled by symbolize_sites
  std::uint64_t module_offset = 0; ///< address minus the module's load address
};

struct SiteProfileOptions {
  std::size_t top = 10;             ///< sites reported, by allocations
  std::uint64_t min_allocations = 1;
  /// The policy of TAILOR_POOLS=2: the first site of each slot size is
  /// pooled too (keeps_heap is then never set).
  bool every_site = false;
};

/// Reads the trace at `path` twice. Sites sorted by allocations, at most `top`.
std::vector<SiteProfile> profile_sites(const std::string& path, const SiteProfileOptions& o);
void symbolize_sites(std::vector<SiteProfile>& sites, const std::vector<trace::Module>& modules);
nlohmann::json to_json(const std::vector<SiteProfile>& sites);

}  // namespace tailor::analyze
