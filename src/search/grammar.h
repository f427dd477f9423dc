// SPDX-License-Identifier: MIT
// Grammar: a BNF grammar loaded at run time (share/search/dmm.bnf), the
// design space of grammatical evolution (the DMM simulator paper, section 3): rules of
// alternatives, each a sequence of nonterminals and quoted terminals. A user
// narrows or widens the search by editing the file; a malformed file is an
// error naming its line.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace tailor::search {

/// One symbol of an alternative: a terminal's text or a nonterminal's rule index.
struct Symbol {
  bool terminal = true;
  std::string text;       ///< terminal text, or the nonterminal's name (without < >)
  std::uint32_t rule = 0; ///< nonterminal: index into Grammar::rules
};

struct Rule {
  std::string name;
  std::vector<std::vector<Symbol>> alternatives;
  std::uint32_t line = 0;
};

class Grammar {
 public:
  /// A nonterminal that the mapper expands itself (not defined in the file):
  /// one of the sizes the trace uses, chosen by a codon.
  static constexpr const char* kTraceSize = "TRACE_SIZE";

  /// Parses grammar text; `origin` (a file name) prefixes errors. The first rule is the start.
  static Grammar parse(const std::string& text, const std::string& origin = "grammar");
  static Grammar load(const std::string& path);

  const std::vector<Rule>& rules() const noexcept { return rules_; }
  std::uint32_t start() const noexcept { return 0; }
  /// Index of the built-in TRACE_SIZE rule (a rule with no alternatives), if used.
  bool is_trace_size(std::uint32_t rule) const noexcept { return rules_[rule].name == kTraceSize; }

 private:
  std::vector<Rule> rules_;
};

}  // namespace tailor::search
