// SPDX-License-Identifier: MIT
// `tailor pools TRACE [-o pools.conf]`: the offline profile of call-site
// pools (docs/pools.md). Picks, from a recorded trace, the call sites worth
// a pool: many objects, nearly all of one size, many of them live together;
// shows every candidate with its symbolized call site, and writes the chosen
// ones in the format libtailor reads from TAILOR_POOLS_FILE.
#include <fmt/format.h>

#include <fstream>

#include "cli/commands.h"
#include "analyze/strides.h"
#include "tailor/trace/reader.h"

namespace tailor::cli {

namespace {

struct PoolsCmdOptions {
  std::string trace;
  std::string output;
  std::uint64_t min_objects = 1000;
  double min_share = 0.9;
  std::uint64_t min_live = 256;
  std::size_t top = 1000;
  bool every_site = false;
};

constexpr std::uint64_t kPoolMaxRequest = 1024;  // src/alloc/site_pool.h

int pools(const PoolsCmdOptions& o) {
  trace::Reader r(o.trace);
  trace::require_every_call(r, "pools");
  analyze::SiteProfileOptions so;
  so.top = o.top;
  so.min_allocations = 1;
  so.every_site = o.every_site;
  std::vector<analyze::SiteProfile> sites = analyze::profile_sites(o.trace, so);
  analyze::symbolize_sites(sites, r.modules());
  if (!r.complete()) fmt::print(stderr, "tailor pools: {}: {}; the profile covers the events before the cut\n", o.trace, r.cut());
  std::string conf = fmt::format(
      "# tailor pools profile of {} (TAILOR_POOLS_FILE, docs/pools.md)\n"
      "# site <module> <offset of the return address, hex> <request size>\n",
      o.trace);
  fmt::print("{:>12} {:>6} {:>7} {:>10} {:>12}  {:<8} {}\n", "objects", "size", "share", "peak live",
             "mean life", "pool", "call site");
  std::size_t chosen = 0;
  for (const auto& s : sites) {
    std::string why;
    if (s.allocations < o.min_objects) why = "few objects";
    else if (s.top_size_share < o.min_share) why = "sizes vary";
    else if (s.top_size > kPoolMaxRequest) why = "too large";
    else if (s.peak_live < o.min_live) why = "short-lived";
    else if (s.module.empty()) why = "no module";
    else if (s.demoted) why = "temporary";  // libtailor's monitor would demote it (docs/pools.md)
    else if (s.keeps_heap) why = "heap";  // the first one-size site of its slot size (docs/pools.md)
    else if (s.alone) why = "alone";      // no other site's requests of its slot size between its own
    const bool pick = why.empty();
    if (s.allocations >= o.min_objects || pick)
      fmt::print("{:>12} {:>6} {:>6.1f}% {:>10} {:>12.0f}  {:<8} {}\n", s.allocations, s.top_size,
                 100 * s.top_size_share, s.peak_live, s.mean_lifetime_events, pick ? "yes" : why, s.symbol);
    if (!pick) continue;
    ++chosen;
    conf += fmt::format("site {} {:#x} {}  # {} objects, {}\n", s.module, s.module_offset, s.top_size, s.allocations,
                        s.symbol);
  }
  fmt::print("\n{} site(s) chosen of {} (at least {} objects, {:.0f}% of one size up to {} bytes, {} live at once{})\n",
             chosen, sites.size(), o.min_objects, 100 * o.min_share, kPoolMaxRequest, o.min_live,
             o.every_site ? "" : "; 'heap': the first such site of its slot size, whose heap pages already are its pool; 'alone': a later one whose requests no other site's of its size come between");
  if (!o.output.empty()) {
    std::ofstream out(o.output);
    out << conf;
    out.close();
    if (!out) {
      fmt::print(stderr, "tailor pools: cannot write {}\n", o.output);
      return 1;
    }
    fmt::print("written to {}: run with TAILOR_POOLS_FILE={} LD_PRELOAD=libtailor.so\n", o.output, o.output);
  }
  return 0;
}

}  // namespace

void add_pools(CLI::App& app, Runner& run) {
  auto [cmd, o] = add_trace_command<PoolsCmdOptions>(
      app, run, "pools", "Offline profile of call-site pools: the sites worth a pool, for TAILOR_POOLS_FILE", pools);
  cmd->add_option("-o,--output", o->output, "Write the profile (for TAILOR_POOLS_FILE) to this file");
  cmd->add_option("--min-objects", o->min_objects, "Fewest allocations of a site worth a pool")->capture_default_str();
  cmd->add_option("--min-share", o->min_share, "Smallest share of the site's allocations of its one size")
      ->capture_default_str();
  cmd->add_option("--min-live", o->min_live, "Fewest of the site's objects live at once")->capture_default_str();
  cmd->add_flag("--every-site", o->every_site,
                "Also pool the first one-size site of each slot size (as TAILOR_POOLS=2; by default it keeps the heap's pages, as TAILOR_POOLS=1)");
}

}  // namespace tailor::cli
