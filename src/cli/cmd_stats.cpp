// SPDX-License-Identifier: MIT
// `tailor stats TRACE [--json]`: exact statistics of a trace (see
// src/analyze/trace_stats.h for what each number counts).
#include <fmt/format.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/exit_status.h"
#include "analyze/strides.h"
#include "tailor/trace/reader.h"
#include "analyze/trace_stats.h"

namespace tailor::cli {

namespace {

struct StatsCmdOptions {
  std::string trace;
  bool json = false;
  bool no_symbols = false;
  bool strides = false;
  bool leaks = false;
  bool every_site = false;
  std::size_t top = 10;
};

std::string pct(std::uint64_t part, std::uint64_t whole) {
  return whole ? fmt::format("{:5.1f}%", 100.0 * static_cast<double>(part) / static_cast<double>(whole)) : "    -";
}

std::string human_ns(double ns) {
  if (ns < 1e3) return fmt::format("{:.0f} ns", ns);
  if (ns < 1e6) return fmt::format("{:.1f} us", ns / 1e3);
  if (ns < 1e9) return fmt::format("{:.1f} ms", ns / 1e6);
  return fmt::format("{:.2f} s", ns / 1e9);
}

// A stack's frames under its first line (which names the innermost): the
// symbol of each, or its address unsymbolized.
void print_callers(const std::vector<std::uint64_t>& addresses, const std::vector<std::string>& symbols) {
  for (std::size_t k = 1; k < addresses.size(); ++k)
    fmt::print("  {:>52}  {}\n", "from", k < symbols.size() ? symbols[k] : fmt::format("{:#x}", addresses[k]));
}

// "± E" for an estimate of a sampled trace, empty for an exact one.
std::string error_of(const analyze::TraceStats& s, double error) {
  return s.sampling.interval ? fmt::format(" ± {:.0f}", error) : std::string();
}

void print_sampling(const analyze::TraceStats& s) {
  if (!s.sampling.interval) return;
  fmt::print("sampled   one allocation per {} bytes on average (record --sample), {} sampled allocations: the counts\n"
             "          and bytes below are estimates for the whole run (± one standard error); lifetimes, realloc\n"
             "          and aligned counts and the anomalies are those of the sampled blocks\n",
             s.sampling.interval, s.sampling.samples);
}

void print_text(const trace::Reader& r, const analyze::TraceStats& s) {
  const auto& h = r.header();
  std::string cmd;
  for (const auto& a : h.command_line) cmd += (cmd.empty() ? "" : " ") + a;
  fmt::print("trace     {} (pid {}: {})\n", r.path(), h.pid, cmd);
  if (!r.complete()) fmt::print("warning   {}\n", r.cut());
  fmt::print("events    {} in {} over {} thread(s)\n", s.events, human_ns(static_cast<double>(s.duration_ns)),
             s.threads.size());
  print_sampling(s);
  fmt::print("\n");

  fmt::print("{:>14} {:>16} {:>14} {:>12} {:>14}\n", "objects", "total bytes", "max in use", "average size",
             "memory ops");
  fmt::print("{:>14} {:>16} {:>14} {:>12.2f} {:>14}\n", s.objects, s.total_bytes, s.max_in_use, s.average_size,
             s.memory_ops);
  if (s.sampling.interval)
    fmt::print("{:>14} {:>16} {:>14}\n", error_of(s, s.sampling.objects_error),
               error_of(s, s.sampling.total_bytes_error), error_of(s, s.sampling.max_in_use_error));
  fmt::print("\n");

  fmt::print("calls\n");
  for (const auto& [kind, n] : s.calls) fmt::print("  {:<26} {:>14} {}\n", kind, n, pct(n, s.memory_ops));
  fmt::print("  releases of NULL {:>23}   failed allocations {}\n", s.null_releases, s.failed);
  fmt::print("  realloc: {} calls, {} in place, {} moved, {} from NULL, {} to size 0, {} failed\n", s.realloc.calls,
             s.realloc.in_place, s.realloc.moved, s.realloc.from_null, s.realloc.to_zero, s.realloc.failed);
  fmt::print("  aligned: {} calls", s.aligned_calls);
  for (const auto& [a, n] : s.alignments) fmt::print(", {} x align {}", n, a);
  fmt::print("\n\n");

  fmt::print("live      peak {} objects; at end {} objects, {} bytes (never freed) from {} call sites (--leaks)\n",
             s.max_live_objects, s.live_objects_at_end, s.live_bytes_at_end, s.leak_sites);
  fmt::print("          {} releases of unknown blocks, {} cross-thread releases, {} allocations over a live block\n\n",
             s.unknown_releases, s.cross_thread_releases, s.reused_live);

  fmt::print("lifetime of released objects ({}):\n", s.lifetime_events.count);
  const auto& le = s.lifetime_events;
  const auto& ln = s.lifetime_ns;
  fmt::print("  {:<8} {:>12} {:>12} {:>12} {:>12} {:>12}\n", "", "mean", "p50", "p90", "p99", "max");
  fmt::print("  {:<8} {:>12.1f} {:>12} {:>12} {:>12} {:>12}\n", "events", le.mean, le.p50, le.p90, le.p99, le.max);
  fmt::print("  {:<8} {:>12} {:>12} {:>12} {:>12} {:>12}\n\n", "time", human_ns(ln.mean),
             human_ns(static_cast<double>(ln.p50)), human_ns(static_cast<double>(ln.p90)),
             human_ns(static_cast<double>(ln.p99)), human_ns(static_cast<double>(ln.max)));

  fmt::print("top sizes ({} distinct)\n", s.distinct_sizes);
  for (const auto& z : s.top_sizes)
    fmt::print("  {:>12} bytes {:>14} {}  ({} bytes)\n", z.size, z.count, pct(z.count, s.objects), z.bytes);
  fmt::print("\nsizes by power of two\n");
  std::uint64_t prev = 0;
  for (const auto& b : s.size_buckets) {
    fmt::print("  {:>12} .. {:<12} {:>14} {}  {} of bytes\n", prev + (prev ? 1 : 0), b.size, b.count,
               pct(b.count, s.objects), pct(b.bytes, s.total_bytes));
    prev = b.size;
  }

  fmt::print("\ncall sites ({} distinct), top by calls\n", s.distinct_callsites);
  for (const auto& c : s.top_sites_by_calls)
    fmt::print("  {:>14} {} {:>16} bytes  {}\n", c.calls, pct(c.calls, s.objects), c.bytes, c.symbol);
  fmt::print("top by bytes\n");
  for (const auto& c : s.top_sites_by_bytes)
    fmt::print("  {:>16} bytes {} {:>14} calls  {}\n", c.bytes, pct(c.bytes, s.total_bytes), c.calls, c.symbol);

  if (s.distinct_stacks != 0) {
    fmt::print("\nstacks ({} distinct), top by bytes\n", s.distinct_stacks);
    for (const auto& st : s.top_stacks_by_bytes) {
      fmt::print("  {:>16} bytes{} {} {:>14} calls  {}\n", st.bytes, error_of(s, st.bytes_error),
                 pct(st.bytes, s.total_bytes), st.calls,
                 st.frames.empty() ? fmt::format("{:#x}", st.frame_addresses.empty() ? 0 : st.frame_addresses[0])
                                   : st.frames[0]);
      print_callers(st.frame_addresses, st.frames);
    }
  }

  fmt::print("\nthreads\n");
  for (const auto& t : s.threads)
    fmt::print("  T{:<4} tid {:<8} {:>14} allocations {:>16} bytes {:>14} releases\n", t.thread, t.tid, t.allocations,
               t.bytes, t.releases);
}

nlohmann::json end_json(const trace::Reader& r) {
  if (!r.end()) return nullptr;
  static constexpr const char* kReasons[] = {"", "exit", "_exit", "abort", "exec"};
  const auto reason = static_cast<unsigned>(r.end()->reason);
  return {{"reason", reason < std::size(kReasons) ? kReasons[reason] : "unknown"}, {"status", r.end()->status}};
}

// --leaks: the blocks never freed, by the call site that allocated them.
void print_leaks(const trace::Reader& r, const analyze::TraceStats& s) {
  fmt::print("trace     {}\n", r.path());
  if (!r.complete()) fmt::print("warning   {}\n", r.cut());
  const bool stacks = std::any_of(s.leaks.begin(), s.leaks.end(), [](const auto& l) { return l.stack != 0; });
  print_sampling(s);
  fmt::print("leaks     {} {}, {}{} bytes live {}, allocated at {} {}", s.live_objects_at_end,
             s.live_objects_at_end == 1 ? "block" : "blocks",
             s.live_bytes_at_end, error_of(s, s.sampling.live_bytes_at_end_error), analyze::end_description(r),
             s.leak_sites, stacks ? (s.leak_sites == 1 ? "stack" : "stacks") : (s.leak_sites == 1 ? "call site" : "call sites"));
  if (s.leaks.size() < s.leak_sites) fmt::print(" (top {} by bytes)", s.leaks.size());
  fmt::print("\n\n  {:>16} {:>7} {:>12} {:>14}  {}\n", "bytes", "share", "blocks", "largest", "call site");
  for (const auto& l : s.leaks) {
    fmt::print("  {:>16}{} {} {:>12} {:>14}  {}\n", l.bytes, error_of(s, l.bytes_error), pct(l.bytes, s.live_bytes_at_end),
               l.blocks, l.largest,
               l.symbol.empty() ? fmt::format("{:#x}", l.address) : l.symbol);
    print_callers(l.frame_addresses, l.frames);
  }
}

// --strides: per hot call site, the regularity of its allocation strides,
// recorded and with call-site pools (src/analyze/strides.h).
int strides(const StatsCmdOptions& o) {
  trace::Reader r(o.trace);
  analyze::SiteProfileOptions so;
  so.top = o.top;
  so.every_site = o.every_site;
  std::vector<analyze::SiteProfile> sites = analyze::profile_sites(o.trace, so);
  if (!o.no_symbols) analyze::symbolize_sites(sites, r.modules());
  if (o.json) {
    fmt::print("{}\n", analyze::to_json(sites).dump(2));
    return exit_status(r, "stats");
  }
  fmt::print("trace     {}\n", r.path());
  if (!r.complete()) fmt::print("warning   {}\n", r.cut());
  fmt::print("strides between successive allocations of each call site (top {} sites by allocations);\n"
             "'pooled': as libtailor's pools (TAILOR_POOLS={}) would place the site's blocks; 'heap': the first\n"
             "one-size site of its slot size, left the heap's pages of that size; 'temp': pooled, then\n"
             "demoted to the heap as a site of temporaries\n\n",
             sites.size(), o.every_site ? 2 : 1);
  fmt::print("  {:>12} {:>6} {:>7} {:>8} {:>14} {:>8} {:>14}  {}\n", "allocations", "size", "share", "pooled",
             "recorded", "share", "with pools", "call site");
  for (const auto& s : sites) {
    const std::string pooled = s.demoted ? fmt::format("{}, temp", s.slot)
                               : s.pooled ? fmt::format("{}", s.slot)
                               : s.keeps_heap ? "heap" : s.alone ? "alone" : "no";
    const std::string with_pools =
        s.pooled && s.pooled_allocations > 1 ? fmt::format("{:>7} {:5.1f}%", s.pool_stride, 100 * s.pool_stride_share)
                                             : std::string("-");
    fmt::print("  {:>12} {:>6} {:>6.1f}% {:>8} {:>7} {:5.1f}% {:>14}  {}\n", s.allocations, s.top_size,
               100 * s.top_size_share, pooled, s.stride, 100 * s.stride_share, with_pools, s.symbol);
  }
  return 0;
}

int stats(const StatsCmdOptions& o) {
  if (o.strides) return strides(o);
  trace::Reader r(o.trace);
  analyze::StatsOptions so;
  so.top = o.top;
  analyze::TraceStats s = analyze::compute_stats(r, so);
  if (!o.no_symbols) analyze::symbolize(s, r.modules());
  if (o.json) {
    nlohmann::json j = analyze::to_json(s);
    j["trace"] = {{"path", r.path()}, {"pid", r.header().pid}, {"command_line", r.header().command_line},
                  {"complete", r.complete()}, {"cut", r.cut()}, {"end", end_json(r)}};
    if (o.leaks) j = {{"trace", j["trace"]}, {"sampling", j["sampling"]}, {"live_objects_at_end", j["live_objects_at_end"]},
                      {"live_bytes_at_end", j["live_bytes_at_end"]}, {"leaks", j["leaks"]}};
    fmt::print("{}\n", j.dump(2));
  } else if (o.leaks) {
    print_leaks(r, s);
  } else {
    print_text(r, s);
  }
  return exit_status(r, "stats");
}

}  // namespace

void add_stats(CLI::App& app, Runner& run) {
  auto [cmd, o] = add_trace_command<StatsCmdOptions>(
      app, run, "stats", "Exact statistics of a trace: Table 2 of the DMM paper and more", stats);
  cmd->add_flag("--json", o->json, "Machine-readable output");
  cmd->add_flag("--no-symbols", o->no_symbols, "Do not symbolize call sites");
  CLI::Option* strides = cmd->add_flag("--strides", o->strides,
                "Per hot call site: the most common address stride between its successive allocations and its "
                "share, recorded and as call-site pools would place them (docs/pools.md)");
  cmd->add_flag("--every-site", o->every_site,
                "With --strides: model TAILOR_POOLS=2, which also pools the first one-size site of each slot size")
      ->needs(strides);
  cmd->add_flag("--leaks", o->leaks,
                "Only the blocks never freed (live at exit, or at the end of a cut trace), by the call site that "
                "allocated them, largest first")
      ->excludes(strides);
  cmd->add_option("--top", o->top, "Entries in each top list")->capture_default_str();
}

}  // namespace tailor::cli
