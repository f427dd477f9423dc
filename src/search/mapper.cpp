// SPDX-License-Identifier: MIT
// Leftmost derivation with wrapping (mapper.h), with an explicit stack of
// symbols still to expand.
#include "search/mapper.h"

namespace tailor::search {

std::optional<Mapping> map_genome(const Grammar& grammar, const Genome& genome,
                                  const std::vector<std::uint64_t>& trace_sizes, unsigned max_wraps) {
  if (genome.empty()) return std::nullopt;
  Mapping m;
  std::vector<const Symbol*> stack;
  Symbol start{false, grammar.rules()[grammar.start()].name, grammar.start()};
  stack.push_back(&start);
  const std::size_t limit = genome.size() * (max_wraps + 1);
  std::size_t expansions = 0;
  auto next_codon = [&]() -> std::optional<std::uint8_t> {
    if (m.codons_used >= limit) return std::nullopt;
    return genome[m.codons_used++ % genome.size()];
  };
  while (!stack.empty()) {
    const Symbol* s = stack.back();
    stack.pop_back();
    if (s->terminal) {
      m.phenotype += s->text;
      continue;
    }
    if (++expansions > 10000) return std::nullopt;
    if (grammar.is_trace_size(s->rule)) {
      if (trace_sizes.empty()) return std::nullopt;
      std::uint64_t choice = 0;
      if (trace_sizes.size() > 1) {
        // Two codons: the trace may use more than 256 sizes.
        const auto hi = next_codon(), lo = next_codon();
        if (!hi || !lo) return std::nullopt;
        choice = (std::uint64_t{*hi} << 8 | *lo) % trace_sizes.size();
      }
      m.phenotype += std::to_string(trace_sizes[choice]);
      continue;
    }
    const Rule& r = grammar.rules()[s->rule];
    std::size_t pick = 0;
    if (r.alternatives.size() > 1) {
      const auto codon = next_codon();
      if (!codon) return std::nullopt;
      pick = *codon % r.alternatives.size();
    }
    const auto& alt = r.alternatives[pick];
    for (auto it = alt.rbegin(); it != alt.rend(); ++it) stack.push_back(&*it);
  }
  return m;
}

}  // namespace tailor::search
