// SPDX-License-Identifier: MIT
// Fronted: the dmm layer's Front (src/dmm/front.h), the cache of free
// blocks libtailor puts in front of a DMM run for real, in front of a
// simulated DMM, with the same rules in the same order: a request of a bin
// this allocator owns pops the bin, else goes to the allocator; a release
// asks the allocator for the block's usable bytes, then keeps the block in
// its bin or passes it on. The links are written and read through the
// simulated memory, so the accesses a real front makes are counted as the
// DMM's.
//
// D is the allocator behind the front with its memory: allocate, release,
// usable (counted: a real front reads the header too), usable_uncounted
// (the bytes of a block for the simulator's own bookkeeping: a real front
// does not read them), load, store, part_of (the allocator owning an
// address), steps; optionally splits, coalesces, min_alignment and
// resident_bytes.
//
// A block's bytes, as the simulation loop and the checker see them, are
// its usable bytes (a bin's blocks have no one header size).
#pragma once

#include <array>
#include <cstdint>
#include <utility>

#include "dmm/allocator.h"
#include "dmm/front.h"

namespace tailor::simulate {

struct FrontSettings {
  unsigned limit = dmm::Front::kDefaultLimit;  ///< blocks per bin; 0: no front
  std::uint8_t owner[dmm::Front::kBins + 1] = {};  ///< allocator owning each bin (dmm::Front::owners)
  std::uint32_t limits[dmm::Front::kBins + 1] = {};  ///< blocks each bin keeps (dmm::Front::limits)
};

template <class D>
class Fronted {
 public:
  static constexpr std::uint64_t kMinAlignment = D::kMinAlignment;

  Fronted(D& d, const FrontSettings& settings) : d_(d), settings_(settings) {}

  dmm::Block allocate(std::uint64_t bytes, std::uint64_t alignment) {
    unsigned b = dmm::Front::bin_of_request(bytes, alignment);
    if (b != 0 && settings_.owner[b] == dmm::Front::kNoOwner) b = 0;
    if (b != 0) {
      if (const dmm::Address a = front_.take(b, bytes, [&](dmm::Address x) { return d_.load(x); }); a != 0) {
        ++counters_.hits;
        return {a, d_.usable_uncounted(a)};
      }
    }
    ++counters_.misses;
    dmm::Block got = d_.allocate(bytes, alignment);
    if (got.address == 0) return got;
    if (b != 0 && !front_.learned(b)) {  // where such blocks come back to (a real front reads the header too)
      got.bytes = d_.usable(got.address);
      const unsigned t = dmm::Front::bin_of_block(got.address, got.bytes);
      front_.learn(b, t != 0 && settings_.owner[t] == settings_.owner[b] ? t : b);
    } else {
      got.bytes = d_.usable_uncounted(got.address);
    }
    return got;
  }

  std::uint64_t release(dmm::Address a) {
    const std::uint64_t usable = d_.usable(a);
    const unsigned b = dmm::Front::bin_of_block(a, usable);
    if (b != 0 && settings_.owner[b] == d_.part_of(a) &&
        front_.push(b, a, settings_.limits[b], [&](dmm::Address x, std::uint64_t v) { d_.store(x, v); })) {
      ++counters_.kept;
      return usable;
    }
    ++counters_.passed;
    d_.release(a);
    return usable;
  }

  std::uint64_t steps() const noexcept { return d_.steps(); }
  void steps_by_kind(std::array<std::uint64_t, dmm::kMechanismKinds>& out) const noexcept { d_.steps_by_kind(out); }
  std::uint64_t splits() const noexcept {
    if constexpr (requires { d_.splits(); }) return d_.splits();
    return 0;
  }
  std::uint64_t coalesces() const noexcept {
    if constexpr (requires { d_.coalesces(); }) return d_.coalesces();
    return 0;
  }
  std::uint64_t min_alignment() const noexcept {
    if constexpr (requires { d_.min_alignment(); }) return d_.min_alignment();
    return kMinAlignment;
  }
  std::uint64_t resident_bytes() const noexcept { return d_.resident_bytes(); }
  void touch(dmm::Address a) { d_.touch(a); }
  const dmm::FrontCounters& counters() const noexcept { return counters_; }

 private:
  D& d_;
  const FrontSettings& settings_;
  dmm::Front front_;
  dmm::FrontCounters counters_;
};

}  // namespace tailor::simulate
