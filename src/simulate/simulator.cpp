// SPDX-License-Identifier: MIT
// The built-in DMMs by name: each name instantiates the simulation loop for
// its mechanism on a fresh SimulatedMemory.
#include "simulate/simulator.h"

#include <algorithm>
#include <new>
#include <type_traits>
#include <stdexcept>


#include <fmt/format.h>

#include "simulate/dmm.h"
#include "simulate/front_model.h"
#include "dmm/binary_buddy.h"
#include "dmm/fibonacci_buddy.h"
#include "dmm/kingsley.h"
#include "dmm/lea.h"
#include "dmm/segregated_lists.h"

namespace tailor::simulate {

namespace detail {

void unservable(std::uint64_t bytes, std::uint64_t alignment) {
  throw std::length_error("the DMM cannot serve a request of " + std::to_string(bytes) + " bytes" +
                          (alignment ? " aligned to " + std::to_string(alignment) : std::string()));
}

}  // namespace detail

const std::vector<std::string>& known_dmms() {
  static const std::vector<std::string> names = {"kng", "fib", "buddy", "s10", "exa", "lea"};
  return names;
}

namespace {

// Throws if a mechanism's check() rejected its parameters.
void require(const char* why) {
  if (why != nullptr) throw std::invalid_argument(why);
}

// A built-in mechanism alone on its memory, as the front model sees a DMM
// (front_model.h): libtailor runs it as the one allocator of a composition.
template <class Mech>
struct Alone {
  static constexpr std::uint64_t kMinAlignment = Mech::kMinAlignment;
  Mech& mech;
  SimulatedMemory& memory;

  Block allocate(std::uint64_t bytes, std::uint64_t alignment) { return mech.allocate(bytes, alignment); }
  std::uint64_t release(Address a) { return mech.release(a); }
  std::uint64_t usable(Address a) { return mech.usable(a); }
  std::uint64_t usable_uncounted(Address a) {
    const std::uint64_t before = memory.reads();
    const std::uint64_t n = mech.usable(a);
    memory.discount_reads(memory.reads() - before);
    return n;
  }
  std::uint64_t load(Address a) { return memory.load(a); }
  void store(Address a, std::uint64_t v) { memory.store(a, v); }
  void touch(Address a) { memory.touch(a); }
  std::size_t part_of(Address) const noexcept { return 0; }
  std::uint64_t steps() const noexcept { return mech.steps(); }
  void steps_by_kind(std::array<std::uint64_t, dmm::kMechanismKinds>& out) const noexcept {
    dmm::MechanismKind k = dmm::MechanismKind::kOther;
    if constexpr (requires { Mech::kKind; }) k = Mech::kKind;
    out[static_cast<std::size_t>(k)] += mech.steps();
  }
  std::uint64_t splits() const noexcept {
    if constexpr (requires { mech.splits(); }) return mech.splits();
    return 0;
  }
  std::uint64_t coalesces() const noexcept {
    if constexpr (requires { mech.coalesces(); }) return mech.coalesces();
    return 0;
  }
  std::uint64_t resident_bytes() const noexcept { return detail::resident_bytes(mech, memory); }
  std::uint64_t min_alignment() const noexcept {
    if constexpr (requires { mech.min_alignment(); }) return mech.min_alignment();
    return Mech::kMinAlignment;
  }
};

// One run of mechanism A on a fresh SimulatedMemory; make(memory) builds it.
// Source: a finished ReplayTrace or a ReplayStream. With a front, the
// mechanism serves what the front passes on.
template <class Source, class Make>
Metrics run_on_fresh_memory(std::string_view name, Source& trace, const SimulateOptions& options, Make make) {
  SimulatedMemory memory;
  auto allocator = make(memory);
  if constexpr (requires { allocator.ok(); }) {
    if (!allocator.ok()) throw std::bad_alloc();
  }
  Metrics m;
  Alone<decltype(allocator)> alone{allocator, memory};
  if (options.front > 0) {
    FrontSettings settings;
    settings.limit = options.front;
    dmm::Front::owners(settings.owner, [](std::uint64_t) { return std::size_t{0}; });
    const bool merges = [&] {
      if constexpr (requires { allocator.merges(); }) return allocator.merges();
      return false;
    }();
    dmm::Front::limits(settings.limits, settings.owner, settings.limit, [&](std::size_t) { return merges; });
    Fronted<Alone<decltype(allocator)>> fronted(alone, settings);
    m = run(fronted, memory, trace, options);
  } else {
    m = run(alone, memory, trace, options);
  }
  m.dmm = std::string(name);
  return m;
}

std::uint32_t page_size_of(const ReplayTrace& trace) { return trace.summary.page_size; }
std::uint32_t page_size_of(const ReplayStream::Feed& feed) { return feed.stream().page_size(); }

[[noreturn]] void unknown_dmm(std::string_view name) {
  throw std::invalid_argument(fmt::format("unknown DMM '{}' (known: {})", name, fmt::join(known_dmms(), ", ")));
}

// The built-ins by name, over either source; `exa` only over a finished trace.
template <class Source>
Metrics simulate_builtin(Source& trace, std::string_view name, const SimulateOptions& options) {
  using Mem = SimulatedMemory;
  const std::uint64_t page = page_size_of(trace);
  if (name == "kng") require(Kingsley<Mem>::check(page));
  if (name == "lea") require(Lea<Mem>::check(page));
  if (name == "fib") require(FibonacciBuddy<Mem>::check(FibonacciBuddy<Mem>::kDefaultTop, page));
  if (name == "buddy") require(BinaryBuddy<Mem>::check(BinaryBuddy<Mem>::kDefaultMaxOrder, page));
  if (name == "kng")
    return run_on_fresh_memory(name, trace, options, [&](Mem& m) { return Kingsley<Mem>(m, page); });
  if (name == "lea") return run_on_fresh_memory(name, trace, options, [&](Mem& m) { return Lea<Mem>(m, page); });
  if (name == "fib")
    return run_on_fresh_memory(name, trace, options, [&](Mem& m) {
      return FibonacciBuddy<Mem>(m, FibonacciBuddy<Mem>::kDefaultTop, page);
    });
  if (name == "buddy")
    return run_on_fresh_memory(name, trace, options, [&](Mem& m) {
      return BinaryBuddy<Mem>(m, BinaryBuddy<Mem>::kDefaultMaxOrder, page);
    });
  if (name == "s10" || name == "exa") {
    SizeClasses classes = [&] {
      if (name == "s10") return s10_classes();
      if constexpr (std::is_same_v<Source, const ReplayTrace>)
        return exa_classes(sizes_of(trace));
      else
        throw std::logic_error("exa needs the whole trace's sizes before it starts");
    }();
    const SegregatedConfig config = name == "s10" ? s10_config(page) : exa_config(page);
    require(SegregatedLists<Mem>::check(classes, config));
    return run_on_fresh_memory(name, trace, options,
                               [&](Mem& m) { return SegregatedLists<Mem>(m, std::move(classes), config); });
  }
  unknown_dmm(name);
}

}  // namespace

Metrics simulate(const ReplayTrace& trace, const DmmSpec& spec, const SimulateOptions& options,
                 const std::string& origin) {
  std::uint64_t largest = 0;
  for (const Operation& op : trace.operations) largest = std::max(largest, routing_size(trace.bytes(op), op.alignment()));
  check_covers(spec, largest, origin);
  Dmm dmm(spec, spec.exact_sizes.empty() ? sizes_of(trace) : spec.exact_sizes, origin);
  Metrics m;
  if (options.front > 0) {
    FrontSettings settings;
    settings.limit = options.front;
    dmm::Front::owners(settings.owner, [&](std::uint64_t bytes) { return dmm.part_for(bytes); });
    dmm::Front::limits(settings.limits, settings.owner, settings.limit, [&](std::size_t i) { return dmm.merges(i); });
    Fronted<Dmm> fronted(dmm, settings);
    m = run(fronted, dmm.memory(), trace, options);
  } else {
    m = run(dmm, dmm.memory(), trace, options);
  }
  m.dmm = spec.name.empty() ? "spec" : spec.name;
  return m;
}

Metrics simulate(const ReplayTrace& trace, std::string_view name, const SimulateOptions& options) {
  return simulate_builtin(trace, name, options);
}

bool streams(std::string_view name) {
  return name == "kng" || name == "lea" || name == "fib" || name == "buddy" || name == "s10";
}

Metrics simulate(ReplayStream& stream, std::string_view name, const SimulateOptions& options) {
  ReplayStream::Feed feed(stream);  // first: through a window, the builder waits for every reader's feed
  if (!streams(name)) {
    if (std::find(known_dmms().begin(), known_dmms().end(), name) == known_dmms().end()) unknown_dmm(name);
    throw std::invalid_argument("DMM '" + std::string(name) + "' needs the whole trace before it starts");
  }
  return simulate_builtin(feed, name, options);
}

}  // namespace tailor::simulate
