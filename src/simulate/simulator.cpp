// SPDX-License-Identifier: MIT
// The built-in DMMs by name: each name instantiates the simulation loop for
// its mechanism on a fresh SimulatedMemory.
#include "simulator.h"

#include <stdexcept>

#include "kingsley.h"

namespace tailor::simulate {

const std::vector<std::string>& known_dmms() {
  static const std::vector<std::string> names = {"kng"};
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
  std::string known;
  for (const auto& k : known_dmms()) known += (known.empty() ? "" : ", ") + k;
  throw std::invalid_argument("unknown DMM '" + std::string(name) + "' (known: " + known + ")");
}

}  // namespace tailor::simulate
