// SPDX-License-Identifier: MIT
// The out-of-line half of SimulatedMemory: system requests (bump allocation,
// region list, held bytes) and host pages on demand.
#include "simulate/simulated_memory.h"

#include <algorithm>
#include <cstdio>
#include <string>

namespace tailor::simulate {

SimulatedMemory::SimulatedMemory(Address base, std::uint64_t span)
    : base_(base), limit_(base + span), space_(base, span, 4096) {
  if (base == 0 || base % 4096 != 0 || span > (std::uint64_t{1} << 48) || base > (std::uint64_t{1} << 48) - span)
    throw std::invalid_argument("SimulatedMemory: base " + std::to_string(base) + " and span " +
                                std::to_string(span) + " do not fit the 48-bit simulated address space");
}
namespace {

// Host pages of finished simulations, kept per thread for the next ones: a
// search simulates thousands of DMMs, and handing every page back to malloc
// (and the kernel) only to fault it in again cost more than the simulation.
constexpr std::size_t kPagesKept = 16384;  // 64 MiB per thread
thread_local std::vector<std::unique_ptr<std::uint64_t[]>> spare_pages;

}  // namespace

SimulatedMemory::~SimulatedMemory() {
  for (auto& page : owned_) {
    if (spare_pages.size() >= kPagesKept) break;
    spare_pages.push_back(std::move(page));
  }
}

Address SimulatedMemory::obtain(std::uint64_t bytes, std::uint64_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0)
    throw std::invalid_argument("SimulatedMemory::obtain: alignment " + std::to_string(alignment) +
                                " is not a power of two");
  const std::uint64_t pages_before = space_.os_bytes();
  const Address start = bytes == 0 ? space_.bump() : space_.obtain(bytes, alignment);
  if (start == 0)
    throw std::length_error("SimulatedMemory::obtain: the simulated address space is exhausted (request of " +
                            std::to_string(bytes) + " bytes)");
  limit_words_ = (space_.bump() - base_ + 7) >> 3;
  pages_.resize(((limit_words_ + kPageMask) >> kPageBits) + 1, nullptr);
  if (bytes) regions_.insert(std::upper_bound(regions_.begin(), regions_.end(), start,
                                              [](Address a, const Region& r) { return a < r.start; }),
                             {start, bytes});
  ++requests_;
  held_ += bytes;
  high_water_ = std::max(high_water_, held_);
  page_high_water_ = std::max(page_high_water_, space_.os_bytes());
  pages_gained_ += space_.os_bytes() - pages_before;
  return start;
}

void SimulatedMemory::release(Address address, std::uint64_t bytes) {
  auto it = std::upper_bound(regions_.begin(), regions_.end(), address,
                             [](Address a, const Region& r) { return a < r.start; });
  if (it == regions_.begin() || address + bytes > std::prev(it)->start + std::prev(it)->bytes ||
      (address != std::prev(it)->start && address + bytes != std::prev(it)->start + std::prev(it)->bytes))
    throw std::logic_error("SimulatedMemory::release: [" + std::to_string(address) + ", +" + std::to_string(bytes) +
                           ") is not a held region nor the tail or head of one");
  Region& r = *std::prev(it);
  if (bytes == r.bytes) {
    regions_.erase(std::prev(it));
  } else if (address == r.start) {
    r.start += bytes;
    r.bytes -= bytes;
  } else {
    r.bytes -= bytes;
  }
  ++requests_;
  held_ -= bytes;
  // Released memory reads as zero when it is obtained again, as fresh pages
  // do. A real memory (src/alloc/dmm_memory.h) gives the whole pages back and
  // zeroes the rest by hand: counted for the time model.
  const dmm::PageRange back = space_.release(address, bytes);
  if (back.start < back.end) {
    ++purges_;
    zeroed_ += std::max(back.start, address) - address + (address + bytes - std::min(back.end, address + bytes));
  } else {
    zeroed_ += bytes;
  }
  zero(address, address + bytes);
}

void SimulatedMemory::zero(Address start, Address end) {
  for (Address a = start; a < end;) {
    const std::uint64_t word = (a - base_) >> 3;
    const std::uint64_t index = word >> kPageBits;
    const Address page_end = base_ + ((index + 1) << (kPageBits + 3));
    const Address stop = std::min(end, page_end);
    if (index < pages_.size() && pages_[index] != nullptr)
      std::fill(pages_[index] + (word & kPageMask), pages_[index] + (word & kPageMask) + ((stop - a) >> 3),
                std::uint64_t{0});
    a = stop;
  }
}

bool SimulatedMemory::holds(Address address, std::uint64_t bytes) const noexcept {
  auto it = std::upper_bound(regions_.begin(), regions_.end(), address,
                             [](Address a, const Region& r) { return a < r.start; });
  if (it == regions_.begin()) return false;
  const Region& r = *std::prev(it);
  return address + bytes <= r.start + r.bytes;
}

void SimulatedMemory::bad_access(Address address) const {
  throw std::logic_error("SimulatedMemory: metadata access at " + std::to_string(address) +
                         ((address & 7) ? " (not 8-byte aligned)" : " (outside the obtained address space)"));
}

std::uint64_t* SimulatedMemory::new_page(std::uint64_t index) {
  (void)index;
  if (!spare_pages.empty()) {
    owned_.push_back(std::move(spare_pages.back()));
    spare_pages.pop_back();
    std::fill_n(owned_.back().get(), std::size_t{1} << kPageBits, std::uint64_t{0});
  } else {
    owned_.push_back(std::make_unique<std::uint64_t[]>(std::size_t{1} << kPageBits));  // zeroed
  }
  return owned_.back().get();
}

}  // namespace tailor::simulate
