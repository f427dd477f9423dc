// SPDX-License-Identifier: MIT
// The genotype-to-phenotype mapping of grammatical evolution (O'Neill and
// Ryan; the DMM simulator paper, section 3): a chromosome of 8-bit codons drives a leftmost
// derivation of the grammar; at each nonterminal with k alternatives the
// next codon picks alternative (codon mod k), and a nonterminal with one
// alternative takes no codon. When the codons run out the chromosome wraps
// around, at most max_wraps times; a derivation still unfinished then (or
// longer than a bound) is invalid. <TRACE_SIZE> takes a codon to pick one of
// the trace's sizes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "search/grammar.h"

namespace tailor::search {

using Genome = std::vector<std::uint8_t>;

struct Mapping {
  std::string phenotype;
  std::size_t codons_used = 0;  ///< codons read, wraps included
};

/// Maps `genome` through `grammar`; std::nullopt if the derivation does not
/// finish within `max_wraps` wraps (or 10,000 expansions).
std::optional<Mapping> map_genome(const Grammar& grammar, const Genome& genome,
                                  const std::vector<std::uint64_t>& trace_sizes, unsigned max_wraps = 3);

}  // namespace tailor::search
