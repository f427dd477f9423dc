// SPDX-License-Identifier: MIT
// The built-in DMMs by name: each name instantiates the simulation loop for
// its mechanism on a fresh SimulatedMemory.
#include "simulator.h"

#include <stdexcept>

#include "binary_buddy.h"
#include "fibonacci_buddy.h"
#include "kingsley.h"
#include "lea.h"
#include "segregated_lists.h"

namespace tailor::simulate {

const std::vector<std::string>& known_dmms() {
  static const std::vector<std::string> names = {"kng", "fib", "buddy", "s10", "exa", "lea"};
  return names;
}

Metrics simulate(const ReplayTrace& trace, std::string_view name, const SimulateOptions& options) {
  if (name == "kng") {
    SimulatedMemory memory;
    Kingsley<SimulatedMemory> kng(memory, trace.summary.page_size);
    Metrics m = run(kng, memory, trace, options);
    m.dmm = "kng";
    return m;
  }
  if (name == "fib") {
    SimulatedMemory memory;
    FibonacciBuddy<SimulatedMemory> fib(memory, FibonacciBuddy<SimulatedMemory>::kDefaultTop,
                                        trace.summary.page_size);
    Metrics m = run(fib, memory, trace, options);
    m.dmm = "fib";
    return m;
  }
  if (name == "buddy") {
    SimulatedMemory memory;
    BinaryBuddy<SimulatedMemory> buddy(memory, BinaryBuddy<SimulatedMemory>::kDefaultMaxOrder,
                                       trace.summary.page_size);
    Metrics m = run(buddy, memory, trace, options);
    m.dmm = "buddy";
    return m;
  }
  if (name == "s10" || name == "exa") {
    SimulatedMemory memory;
    const std::uint64_t page = trace.summary.page_size;
    SegregatedLists<SimulatedMemory> seg =
        name == "s10" ? SegregatedLists<SimulatedMemory>(memory, s10_classes(), s10_config(page))
                      : SegregatedLists<SimulatedMemory>(memory, exa_classes(sizes_of(trace.operations)), exa_config(page));
    Metrics m = run(seg, memory, trace, options);
    m.dmm = std::string(name);
    return m;
  }
  if (name == "lea") {
    SimulatedMemory memory;
    Lea<SimulatedMemory> lea(memory, trace.summary.page_size);
    Metrics m = run(lea, memory, trace, options);
    m.dmm = "lea";
    return m;
  }
  std::string known;
  for (const auto& k : known_dmms()) known += (known.empty() ? "" : ", ") + k;
  throw std::invalid_argument("unknown DMM '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace tailor::simulate
