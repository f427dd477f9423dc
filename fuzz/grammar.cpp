// SPDX-License-Identifier: MIT
// Fuzz target: the BNF grammar loader of `tailor search` on arbitrary text.
// A bad grammar is reported by an exception (std::invalid_argument naming
// the line), nothing else: no crash, no hang, no out-of-bounds access.
#include <cstdint>
#include <stdexcept>
#include <string>

#include "search/grammar.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    auto g = tailor::search::Grammar::parse(std::string(reinterpret_cast<const char*>(data), size), "fuzz");
    (void)g.rules().size();
  } catch (const std::exception&) {
  }
  return 0;
}
