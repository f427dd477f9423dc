// SPDX-License-Identifier: MIT
// The values tried are the ones that change a policy, not a fine grid: the
// replay of a trace measures each in a fresh process, so every value costs
// a few runs, and a budget of minutes holds a few hundred. The defaults
// come first so that the search starts from libtailor as it ships.
#include "tune/tunable_space.h"

#include <fstream>
#include <sstream>

namespace tailor::tune {

std::vector<Dimension> tunable_space(Objective o, const TraceTraits& t) {
  std::vector<Dimension> d;
  // Classes where the program's sizes fall between the default's (above
  // 128 bytes), first: their gain is the program's own waste.
  if (!t.classes.empty())
    d.push_back({"classes", {"", t.classes}, "classes of the program's sizes where the default series' steps are wide"});
  // Huge pages trade resident memory for fewer faults and TLB misses: a
  // time dimension only.
  if (o != Objective::kMemory)
    d.push_back({"huge_pages", {"0", "1"}, "transparent huge pages: fewer page faults and TLB misses, more RSS"});
  d.push_back({"class_spacing", {"4", "8", "2", "1"},
               "size classes per doubling: internal fragmentation against partly used pages"});
  d.push_back({"page_size", {"64K", "16K", "32K", "128K", "256K"},
               "slice size: how much a size class takes at once, and the grain of purging"});
  d.push_back({"purge_delay", {"200", "-1", "1000", "20", "0"},
               "how long free spans stay resident: faults and madvise calls against resident memory"});
  d.push_back({"small_max", {"1K", "256", "512", "2K", "4K"},
               "largest size on one-slice pages: page-level fragmentation against refills"});
  d.push_back({"middle_max", {"128K", "32K", "512K"},
               "largest size class: above, one block per span of whole slices"});
  d.push_back({"heap_cache", {"256M", "16M", "64M", "1G"}, "resident free bytes a thread keeps"});
  if (t.threads > 1 && t.cross_thread_frees)
    d.push_back({"remote_batch", {"64", "1", "16", "256"}, "cross-thread frees gathered before one hand-back"});
  if (t.huge_blocks) d.push_back({"huge_cache", {"64M", "0", "256M"}, "freed huge mappings kept for reuse"});
  if (t.large_blocks) d.push_back({"large_max", {"32M", "4M"}, "largest block carved from a segment"});
  // Call-site pools (the pool allocation paper, docs/pools.md): objects of one site together.
  if (o != Objective::kMemory)
    d.push_back({"pools", {"0", "1", "2"}, "call-site pools: same-size requests of one site in a pool"});
  if (o == Objective::kMemory) {
    // For memory, purging leads page sizes: its wins are the cheapest.
    const std::size_t first = t.classes.empty() ? 0 : 1;
    std::swap(d[first + 1], d[first + 2]);
  }
  return d;
}

std::string describe(const Settings& s) {
  if (!s.given.empty()) return "the config file " + s.given;
  std::string out;
  for (const auto& [k, v] : s.values) out += (out.empty() ? "" : " ") + k + "=" + v;
  if (!s.dmm.empty()) out += std::string(out.empty() ? "" : " ") + "dmm=" + s.dmm;
  return out.empty() ? "defaults" : out;
}

std::string config_text(const Settings& s, const std::string& header, const std::string& section_key) {
  std::ostringstream out;
  // In a section, the comment follows the header, so that it belongs to
  // the section and goes with it when the section is replaced.
  if (!section_key.empty()) out << "[program " << section_key << "]\n";
  std::istringstream lines(header);
  for (std::string line; std::getline(lines, line);) out << "# " << line << "\n";
  if (!s.given.empty()) {
    // A given file's settings, as they are (its comments and any section
    // headers left out: they would change what the lines apply to).
    std::ifstream in(s.given);
    for (std::string line; std::getline(in, line);) {
      const auto a = line.find_first_not_of(" \t");
      if (a == std::string::npos || line[a] == '#' || line[a] == '[') continue;
      out << line << "\n";
    }
    return out.str();
  }
  for (const auto& [k, v] : s.values) out << k << " = " << v << "\n";
  if (!s.dmm.empty()) out << "dmm = " << s.dmm << "\n";
  if (s.values.empty() && s.dmm.empty()) out << "# (libtailor's defaults)\n";
  return out.str();
}

}  // namespace tailor::tune
