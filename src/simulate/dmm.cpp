// SPDX-License-Identifier: MIT
// Building the simulator's Dmm from a spec through dmm::Composite, one
// SimulatedMemory per allocator; size-class helpers of the simulator.
#include "simulate/dmm.h"

#include <stdexcept>
#include <string>

namespace tailor::simulate {

namespace {

SizeClasses checked(SizeClasses&& c, bool ok) {
  if (!ok) throw std::invalid_argument("SizeClasses: no room for the class tables");
  return std::move(c);
}

}  // namespace

SizeClasses make_classes(const std::vector<std::uint64_t>& bounds, bool open_last) {
  if (const char* why = SizeClasses::check(bounds.data(), bounds.size(), open_last))
    throw std::invalid_argument(std::string("SizeClasses: ") + why);
  SizeClasses c;
  const bool ok = c.assign(bounds.data(), bounds.size(), open_last);
  return checked(std::move(c), ok);
}

SizeClasses powers_of_two_classes(unsigned first_log2, unsigned last_log2, bool open_last) {
  if (first_log2 < 3 || last_log2 < first_log2 || last_log2 > 62)
    throw std::invalid_argument("SizeClasses: bad exponents for powers of two");
  SizeClasses c;
  const bool ok = c.assign_powers_of_two(first_log2, last_log2, open_last);
  return checked(std::move(c), ok);
}

SizeClasses s10_classes() {
  SizeClasses c;
  const bool ok = dmm::assign_s10_classes(c);
  return checked(std::move(c), ok);
}

SizeClasses exa_classes(const std::vector<std::uint64_t>& sizes) {
  SizeClasses c;
  const bool ok = dmm::assign_exa_classes(c, sizes.data(), sizes.size());
  return checked(std::move(c), ok);
}

SizeClasses Dmm::classes_for(const AllocatorSpec& a, const std::vector<std::uint64_t>& exact_sizes) {
  const DmmSpec one{"", {a}, {}};
  const SpecViewHolder view(one, exact_sizes);
  SizeClasses c;
  if (!dmm::Composite<SimulatedMemory>::classes_for(view.view().allocators[0], exact_sizes.data(),
                                                    exact_sizes.size(), c))
    throw std::invalid_argument("no size class in the allocator's range");
  return c;
}

Dmm::Dmm(const DmmSpec& spec, const std::vector<std::uint64_t>& exact_sizes, const std::string& origin) {
  std::vector<SimulatedMemory*> memories;
  for (std::size_t i = 0; i < spec.allocators.size(); ++i) {
    memory_.parts_.push_back(
        std::make_unique<SimulatedMemory>(static_cast<Address>(i + 1) << 40, SimulatedMemory::kSpan));
    memories.push_back(memory_.parts_.back().get());
  }
  const SpecViewHolder view(spec, exact_sizes);
  std::size_t failed = 0;
  if (const char* why = dmm_.build(view.view(), memories.data(), failed))
    throw SpecError(origin, "allocators[" + std::to_string(failed) + "]", why);
}

std::uint64_t Dmm::steps() const noexcept {
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < dmm_.parts(); ++i) n += dmm_.steps(i);
  return n;
}
void Dmm::steps_by_kind(std::array<std::uint64_t, dmm::kMechanismKinds>& out) const noexcept {
  for (std::size_t i = 0; i < dmm_.parts(); ++i) out[static_cast<std::size_t>(dmm_.kind(i))] += dmm_.steps(i);
}
std::uint64_t Dmm::splits() const noexcept {
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < dmm_.parts(); ++i) n += dmm_.splits(i);
  return n;
}
std::uint64_t Dmm::coalesces() const noexcept {
  std::uint64_t n = 0;
  for (std::size_t i = 0; i < dmm_.parts(); ++i) n += dmm_.coalesces(i);
  return n;
}
std::uint64_t Dmm::min_alignment() const noexcept {
  std::uint64_t n = UINT64_MAX;
  for (std::size_t i = 0; i < dmm_.parts(); ++i) n = std::min(n, dmm_.min_alignment(i));
  return n;
}

// The sum of a counter over the allocators' memories.
template <class R>
R DmmMemory::sum(R (SimulatedMemory::*counter)() const noexcept) const noexcept {
  R n = 0;
  for (const auto& m : parts_) n += ((*m).*counter)();
  return n;
}

std::uint64_t DmmMemory::reads() const noexcept { return sum(&SimulatedMemory::reads); }
std::uint64_t DmmMemory::writes() const noexcept { return sum(&SimulatedMemory::writes); }
std::uint64_t DmmMemory::system_requests() const noexcept { return sum(&SimulatedMemory::system_requests); }
std::uint64_t DmmMemory::page_bytes() const noexcept { return sum(&SimulatedMemory::page_bytes); }
std::size_t DmmMemory::state_bytes() const noexcept { return sum(&SimulatedMemory::state_bytes); }
std::uint64_t DmmMemory::pages_gained() const noexcept { return sum(&SimulatedMemory::pages_gained); }
std::uint64_t DmmMemory::purges() const noexcept { return sum(&SimulatedMemory::purges); }
std::uint64_t DmmMemory::zeroed_bytes() const noexcept { return sum(&SimulatedMemory::zeroed_bytes); }
std::uint64_t DmmMemory::line_misses() const noexcept { return sum(&SimulatedMemory::line_misses); }
bool DmmMemory::holds(Address address, std::uint64_t bytes) const noexcept {
  const std::size_t i = (address >> 40) - 1;
  return address >> 40 != 0 && i < parts_.size() && parts_[i]->holds(address, bytes);
}

std::vector<Region> DmmMemory::held_regions() const {
  std::vector<Region> all;  // part i lives at (i + 1) << 40: the parts' lists concatenate in order
  for (const auto& part : parts_) all.insert(all.end(), part->regions().begin(), part->regions().end());
  return all;
}

}  // namespace tailor::simulate
