// SPDX-License-Identifier: MIT
// Phenotype text to DMM spec (phenotype.h), through the spec's JSON form so
// that the one reader (dmm_spec.cpp) checks every rule.
#include "search/phenotype.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

namespace tailor::search {

simulate::DmmSpec phenotype_to_spec(const std::string& phenotype, const std::string& name) {
  using nlohmann::json;
  struct Entry {
    std::uint64_t max;
    json allocator;
  };
  std::vector<Entry> entries;
  std::istringstream in(phenotype);
  for (std::string item; std::getline(in, item, ';') && entries.size() < kMaxAllocators;) {
    std::istringstream words(item);
    std::string word;
    if (!(words >> word)) continue;
    if (word != "alloc") throw simulate::SpecError("phenotype", "alloc", "an entry must start with 'alloc': " + item);
    Entry e{0, json::object()};
    bool has_max = false;
    while (words >> word) {
      const auto eq = word.find('=');
      if (eq == std::string::npos) throw simulate::SpecError("phenotype", word, "expected key=value");
      const std::string key = word.substr(0, eq), value = word.substr(eq + 1);
      auto number = [&] {
        try {
          return std::stoull(value);
        } catch (const std::exception&) {
          throw simulate::SpecError("phenotype", key, "'" + value + "' is not a number");
        }
      };
      if (key == "max") {
        e.max = number(), has_max = true;
      } else if (key == "split" || key == "coalesce") {
        e.allocator[key] = value == "true";
      } else if (key == "returns") {
        e.allocator["system"]["returns"] = value == "true";
      } else if (key == "granularity" || key == "chunk") {
        e.allocator["system"][key] = number();
      } else if (key == "header" || key == "alignment") {
        e.allocator[key] = number();
      } else {
        e.allocator[key] = value;  // mechanism, structure, fit, policy, classes: checked by the spec reader
      }
    }
    if (!has_max) throw simulate::SpecError("phenotype", "max", "an entry has no max");
    entries.push_back(std::move(e));
  }
  if (entries.empty()) throw simulate::SpecError("phenotype", "alloc", "no allocator");
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.max < b.max; });
  entries.erase(std::unique(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.max == b.max; }),
                entries.end());
  json list = json::array();
  std::uint64_t min = 0;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    json a = entries[i].allocator;
    const bool last = i + 1 == entries.size();
    a["sizes"] = {{"min", min}, {"max", last ? json(nullptr) : json(entries[i].max)}};
    min = entries[i].max;
    list.push_back(std::move(a));
  }
  return simulate::parse_dmm_spec(json{{"name", name}, {"allocators", list}}, "phenotype");
}

}  // namespace tailor::search
