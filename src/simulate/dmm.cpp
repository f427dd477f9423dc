// SPDX-License-Identifier: MIT
// Building a Dmm from its spec: size classes per allocator, one mechanism
// per allocator on its own SimulatedMemory (dmm.h says which).
#include "dmm.h"

#include <algorithm>
#include <bit>
#include <string>
#include <utility>

#include "binary_buddy.h"
#include "fibonacci_buddy.h"
#include "segregated_fit.h"
#include "simple_segregated_storage.h"

namespace tailor::simulate {

namespace {

template <class Mech>
class Part final : public DmmPart {
 public:
  template <class... Args>
  explicit Part(SimulatedMemory& memory, Args&&... args)
      : mech_(memory, std::forward<Args>(args)...), follow_size_(min_alignment() < 16) {}

  // Below 16, alignment follows the request's size (docs/dmm.md, "alignment"):
  // a size that is a multiple of 16 may hold a 16-aligned type, so it gets 16.
  Block allocate(std::uint64_t bytes, std::uint64_t alignment) override {
    if (follow_size_ && alignment < 16 && bytes != 0 && bytes % 16 == 0) alignment = 16;
    return mech_.allocate(bytes, alignment);
  }
  std::uint64_t release(Address address) override { return mech_.release(address); }
  std::uint64_t steps() const noexcept override { return mech_.steps(); }
  std::uint64_t splits() const noexcept override { return mech_.splits(); }
  std::uint64_t coalesces() const noexcept override { return mech_.coalesces(); }
  std::uint64_t min_alignment() const noexcept override {
    if constexpr (requires { mech_.min_alignment(); })
      return mech_.min_alignment();
    else
      return Mech::kMinAlignment;
  }
  Mech& mechanism() noexcept { return mech_; }

 private:
  Mech mech_;
  bool follow_size_;
};

constexpr std::uint64_t round8(std::uint64_t n) noexcept { return (n + 7) & ~std::uint64_t{7}; }

// Block sizes of a Fibonacci buddy (fibonacci_buddy.h: 16-byte units 2, 3, 5, ...).
std::vector<std::uint64_t> fibonacci_sizes(std::uint64_t up_to) {
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t a = 2, b = 3; a * FibonacciBuddy<SimulatedMemory>::kUnit <= up_to; std::swap(a, b), b += a)
    sizes.push_back(a * FibonacciBuddy<SimulatedMemory>::kUnit);
  return sizes;
}

}  // namespace

SizeClasses Dmm::classes_for(const AllocatorSpec& a, const std::vector<std::uint64_t>& trace_sizes) {
  const bool open = !a.max;
  const std::uint64_t top = open ? 0 : round8(*a.max);
  std::vector<std::uint64_t> bounds;
  switch (a.classes.kind) {
    case ClassesSpec::Kind::kSingle: break;
    case ClassesSpec::Kind::kPowersOfTwo:
      for (std::uint64_t p = 8; p <= (std::uint64_t{1} << 40) && (open || p < top); p <<= 1)
        if (p > a.min) bounds.push_back(p);
      break;
    case ClassesSpec::Kind::kExact:
      for (std::uint64_t s : trace_sizes)
        if (s > a.min && (open || s < top)) bounds.push_back(round8(s));
      bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
      break;
    case ClassesSpec::Kind::kBounds:
      for (std::uint64_t b : a.classes.bounds)
        if (open || b < top) bounds.push_back(b);
      break;
  }
  if (!open) bounds.push_back(top);
  return SizeClasses(std::move(bounds), open);
}

std::unique_ptr<DmmPart> make_part(const AllocatorSpec& a, SimulatedMemory& m,
                                   const std::vector<std::uint64_t>& trace_sizes, const std::string& field) {
  try {
    const bool buddy = a.mechanism == Mechanism::kBinaryBuddy || a.mechanism == Mechanism::kFibonacciBuddy;
    if (buddy && a.split) {
      if (a.mechanism == Mechanism::kBinaryBuddy) {
        auto p = std::make_unique<Part<BinaryBuddy<SimulatedMemory>>>(
            m, static_cast<unsigned>(std::countr_zero(a.chunk)), a.granularity);
        p->mechanism().set_coalesce(a.coalesce);
        return p;
      }
      const auto sizes = fibonacci_sizes(UINT64_MAX / 4);
      const auto top = std::lower_bound(sizes.begin(), sizes.end(), a.chunk) - sizes.begin();
      auto p = std::make_unique<Part<FibonacciBuddy<SimulatedMemory>>>(
          m, static_cast<unsigned>(std::max<std::ptrdiff_t>(top, 2)), a.granularity);
      p->mechanism().set_coalesce(a.coalesce);
      return p;
    }
    if (buddy) {
      // No splitting: the strict segregated fit of the buddy's block sizes.
      std::vector<std::uint64_t> blocks;
      if (a.mechanism == Mechanism::kBinaryBuddy)
        for (std::uint64_t b = 32; b <= a.chunk; b <<= 1) blocks.push_back(b);
      else
        blocks = fibonacci_sizes(a.chunk);
      std::vector<std::uint64_t> bounds;
      for (std::uint64_t b : blocks)
        if (b - 16 > a.min) bounds.push_back(b - 16);
      if (bounds.empty())
        throw SpecError("spec", field + ".system.chunk", "no block up to " + std::to_string(a.chunk) +
                                                             " bytes is above sizes.min");
      const bool open = !a.max || bounds.back() < *a.max;  // larger requests: blocks of their own size
      SegregatedFitConfig c;
      c.round_to_class = true;
      c.header = 16;
      c.alignment = 16;
      c.chunk = c.granularity = a.granularity;
      return std::make_unique<Part<SegregatedFit<SimulatedMemory>>>(m, SizeClasses(std::move(bounds), open), c);
    }
    if (a.mechanism == Mechanism::kSimpleSegregatedStorage) {
      SimpleSegregatedConfig c{a.structure, a.fit, a.policy, a.alignment, a.chunk};
      return std::make_unique<Part<SimpleSegregatedStorage<SimulatedMemory>>>(m, Dmm::classes_for(a, trace_sizes), c);
    }
    SegregatedFitConfig c;
    c.structure = a.structure;
    c.fit = a.fit;
    c.policy = a.policy;
    c.search_larger = a.mechanism == Mechanism::kSegregatedFit;
    c.round_to_class = a.mechanism == Mechanism::kStrictSegregatedFit || a.mechanism == Mechanism::kExactSegregatedFit;
    c.split = a.split;
    c.coalesce = a.coalesce;
    c.header = a.header;
    c.alignment = a.alignment;
    c.chunk = a.chunk;
    c.granularity = a.granularity;
    c.returns = a.returns;
    return std::make_unique<Part<SegregatedFit<SimulatedMemory>>>(m, Dmm::classes_for(a, trace_sizes), c);
  } catch (const SpecError&) {
    throw;
  } catch (const std::invalid_argument& e) {
    throw SpecError("spec", field, e.what());
  }
}

Dmm::Dmm(const DmmSpec& spec, const std::vector<std::uint64_t>& trace_sizes, const std::string& origin) {
  for (std::size_t i = 0; i < spec.allocators.size(); ++i) {
    const AllocatorSpec& a = spec.allocators[i];
    memory_.parts_.push_back(
        std::make_unique<SimulatedMemory>(static_cast<Address>(i + 1) << 40, SimulatedMemory::kSpan));
    upper_.push_back(a.max ? *a.max : UINT64_MAX);
    try {
      parts_.push_back(make_part(a, *memory_.parts_.back(), trace_sizes, "allocators[" + std::to_string(i) + "]"));
    } catch (const SpecError& e) {
      throw SpecError(origin, e.field(), e.why());
    }
  }
}

namespace {

// The sum of a counter over a DMM's allocators or memories.
template <class Parts, class Get>
std::uint64_t sum(const Parts& parts, Get get) noexcept {
  std::uint64_t n = 0;
  for (const auto& p : parts) n += get(*p);
  return n;
}

}  // namespace

std::uint64_t Dmm::steps() const noexcept { return sum(parts_, [](const DmmPart& p) { return p.steps(); }); }
std::uint64_t Dmm::splits() const noexcept { return sum(parts_, [](const DmmPart& p) { return p.splits(); }); }
std::uint64_t Dmm::coalesces() const noexcept { return sum(parts_, [](const DmmPart& p) { return p.coalesces(); }); }
std::uint64_t Dmm::min_alignment() const noexcept {
  std::uint64_t n = UINT64_MAX;
  for (const auto& p : parts_) n = std::min(n, p->min_alignment());
  return n;
}

std::uint64_t DmmMemory::reads() const noexcept {
  return sum(parts_, [](const SimulatedMemory& m) { return m.reads(); });
}
std::uint64_t DmmMemory::writes() const noexcept {
  return sum(parts_, [](const SimulatedMemory& m) { return m.writes(); });
}
std::uint64_t DmmMemory::system_requests() const noexcept {
  return sum(parts_, [](const SimulatedMemory& m) { return m.system_requests(); });
}
bool DmmMemory::holds(Address address, std::uint64_t bytes) const noexcept {
  const std::size_t i = (address >> 40) - 1;
  return address >> 40 != 0 && i < parts_.size() && parts_[i]->holds(address, bytes);
}

}  // namespace tailor::simulate
