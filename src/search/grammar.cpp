// SPDX-License-Identifier: MIT
// Parsing BNF grammar files (grammar.h): `<name> ::= alt | alt`, where an
// alternative is a sequence of `<nonterminal>` and `"terminal"` symbols
// (with \" and \\ escapes); lines starting with `|` continue the previous
// rule; `#` starts a comment outside terminals. Every nonterminal used must be
// defined (except TRACE_SIZE), and none twice.
#include "search/grammar.h"
#include "util/file.h"

#include <sstream>

namespace tailor::search {

namespace {

struct Pending {
  std::string name;
  std::vector<std::vector<Symbol>> alternatives;
  std::uint32_t line;
};

[[noreturn]] void fail(const std::string& origin, std::uint32_t line, const std::string& why) {
  throw std::invalid_argument(origin + ":" + std::to_string(line) + ": " + why);
}

// Parses the alternatives in `s` from position i, appending to `alts`
// (the first symbols go into the last alternative).
void parse_alternatives(const std::string& s, std::size_t i, std::vector<std::vector<Symbol>>& alts,
                        const std::string& origin, std::uint32_t line) {
  while (i < s.size()) {
    const char c = s[i];
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
    } else if (c == '#') {
      break;
    } else if (c == '|') {
      alts.emplace_back();
      ++i;
    } else if (c == '"') {
      std::string text;
      ++i;
      for (;; ++i) {
        if (i >= s.size()) fail(origin, line, "a terminal's closing quote is missing");
        if (s[i] == '\\' && i + 1 < s.size()) {
          text += s[++i];
        } else if (s[i] == '"') {
          ++i;
          break;
        } else {
          text += s[i];
        }
      }
      alts.back().push_back({true, text, 0});
    } else if (c == '<') {
      const std::size_t end = s.find('>', i);
      if (end == std::string::npos) fail(origin, line, "a nonterminal's closing '>' is missing");
      const std::string name = s.substr(i + 1, end - i - 1);
      if (name.empty()) fail(origin, line, "an empty nonterminal <>");
      alts.back().push_back({false, name, 0});
      i = end + 1;
    } else {
      // A bare word is a terminal too (numbers in the grammar read naturally).
      std::size_t end = i;
      while (end < s.size() && s[end] != ' ' && s[end] != '\t' && s[end] != '|' && s[end] != '#') ++end;
      alts.back().push_back({true, s.substr(i, end - i), 0});
      i = end;
    }
  }
}

}  // namespace

Grammar Grammar::parse(const std::string& text, const std::string& origin) {
  std::vector<Pending> pending;
  std::istringstream in(text);
  std::string s;
  std::uint32_t line = 0;
  while (std::getline(in, s)) {
    ++line;
    std::size_t i = s.find_first_not_of(" \t\r");
    if (i == std::string::npos || s[i] == '#') continue;
    if (s[i] == '|') {
      if (pending.empty()) fail(origin, line, "'|' continues no rule");
      parse_alternatives(s, i, pending.back().alternatives, origin, line);
      continue;
    }
    if (s[i] != '<') fail(origin, line, "expected a rule '<name> ::= ...' or a continuation '| ...'");
    const std::size_t close = s.find('>', i);
    const std::size_t def = s.find("::=", i);
    if (close == std::string::npos || def == std::string::npos || def < close)
      fail(origin, line, "expected '<name> ::= ...'");
    Pending p{s.substr(i + 1, close - i - 1), {{}}, line};
    if (p.name == kTraceSize) fail(origin, line, "<TRACE_SIZE> is built in and cannot be redefined");
    for (const auto& q : pending)
      if (q.name == p.name) fail(origin, line, "<" + p.name + "> is defined twice (first on line " + std::to_string(q.line) + ")");
    parse_alternatives(s, def + 3, p.alternatives, origin, line);
    pending.push_back(std::move(p));
  }
  if (pending.empty()) fail(origin, line, "no rule");

  Grammar g;
  std::map<std::string, std::uint32_t> index;
  for (const auto& p : pending) {
    index[p.name] = static_cast<std::uint32_t>(g.rules_.size());
    g.rules_.push_back({p.name, p.alternatives, p.line});
  }
  bool uses_trace_size = false;
  for (const auto& p : pending)
    for (const auto& alt : p.alternatives)
      for (const auto& sym : alt) uses_trace_size |= !sym.terminal && sym.text == kTraceSize;
  if (uses_trace_size) {
    index[kTraceSize] = static_cast<std::uint32_t>(g.rules_.size());
    g.rules_.push_back({kTraceSize, {}, 0});
  }
  for (auto& r : g.rules_) {
    for (auto& alt : r.alternatives) {
      if (alt.empty()) fail(origin, r.line, "<" + r.name + "> has an empty alternative");
      for (auto& sym : alt) {
        if (sym.terminal) continue;
        auto it = index.find(sym.text);
        if (it == index.end()) fail(origin, r.line, "<" + sym.text + "> is used but never defined");
        sym.rule = it->second;
      }
    }
  }
  return g;
}

Grammar Grammar::load(const std::string& path) {
  return parse(util::read_file(path, "grammar"), path);
}

}  // namespace tailor::search
