// SPDX-License-Identifier: MIT
// Builds the report's JSON document (report_data.h), section by section.
#include "report/report_data.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <fmt/format.h>


namespace tailor::report {

namespace {

using nlohmann::json;

double seconds(std::uint64_t ns) { return static_cast<double>(ns) / 1e9; }

json trace_section(const trace::Reader& r, const analyze::TraceStats& s) {
  const std::string cmd = fmt::format("{}", fmt::join(r.header().command_line, " "));
  return {{"path", r.path()},         {"command", cmd},
          {"pid", r.header().pid},    {"complete", r.complete()},
          {"cut", r.cut()},           {"events", s.events},
          {"duration_s", seconds(s.duration_ns)}};
}

json summary_section(const analyze::TraceStats& s) {
  return {{"objects", s.objects},
          {"total_bytes", s.total_bytes},
          {"max_in_use_bytes", s.max_in_use},
          {"average_size", s.average_size},
          {"memory_ops", s.memory_ops},
          {"max_live_objects", s.max_live_objects},
          {"live_bytes_at_end", s.live_bytes_at_end},
          {"distinct_sizes", s.distinct_sizes},
          {"distinct_callsites", s.distinct_callsites},
          {"failed_allocations", s.failed},
          {"unknown_releases", s.unknown_releases},
          {"cross_thread_releases", s.cross_thread_releases},
          {"sampling",
           {{"interval", s.sampling.interval},
            {"samples", s.sampling.samples},
            {"total_bytes_error", s.sampling.total_bytes_error},
            {"max_in_use_error", s.sampling.max_in_use_error},
            {"live_bytes_at_end_error", s.sampling.live_bytes_at_end_error}}}};
}

json in_use_section(const analyze::TraceStats& s) {
  json points = json::array();
  for (const auto& p : s.in_use_series) points.push_back({seconds(p.time_ns), p.min, p.max});
  return {{"columns", {"time_s", "min_bytes", "max_bytes"}},
          {"points", points},
          {"peak", {{"time_s", seconds(s.time_of_max_in_use_ns - s.first_event_ns)}, {"bytes", s.max_in_use},
                    {"event", s.event_of_max_in_use}}}};
}

json histogram(const analyze::Log2Histogram& h) { return h.counts; }

json sizes_section(const analyze::TraceStats& s) {
  json buckets = json::array();
  for (const auto& b : s.size_buckets) buckets.push_back({b.size, b.count, b.bytes});
  return {{"columns", {"upper_bound_bytes", "objects", "bytes"}}, {"buckets", buckets}};
}

json sites_section(const analyze::TraceStats& s) {
  std::set<std::uint64_t> seen;
  json rows = json::array();
  for (const auto* list : {&s.top_sites_by_bytes, &s.top_sites_by_calls})
    for (const auto& c : *list)
      if (seen.insert(c.address).second)
        rows.push_back({{"address", c.address},
                        {"symbol", c.symbol},
                        {"function", c.function},
                        {"module", c.module},
                        {"calls", c.calls},
                        {"bytes", c.bytes},
                        {"peak_live_bytes", c.peak_live_bytes}});
  return {{"distinct", s.distinct_callsites}, {"total_calls", s.objects}, {"total_bytes", s.total_bytes},
          {"rows", rows}};
}

json leaks_section(const trace::Reader& r, const analyze::TraceStats& s) {
  json rows = json::array();
  for (const auto& l : s.leaks)
    rows.push_back({{"address", l.address},
                    {"symbol", l.symbol},
                    {"module", l.module},
                    {"blocks", l.blocks},
                    {"bytes", l.bytes},
                    {"largest_bytes", l.largest},
                    {"stack", l.frames}});  // innermost first; empty without --stacks
  return {{"end", analyze::end_description(r)}, {"objects", s.live_objects_at_end},
          {"bytes", s.live_bytes_at_end},       {"sites", s.leak_sites},
          {"rows", rows}};
}

json threads_section(const analyze::TraceStats& s) {
  json threads = json::array();
  for (const auto& t : s.threads)
    threads.push_back({{"thread", t.thread}, {"tid", t.tid}, {"allocations", t.allocations}, {"bytes", t.bytes},
                       {"releases", t.releases}});
  json cross = json::array();
  for (const auto& [pair, n] : s.cross_thread_pairs) cross.push_back({pair.first, pair.second, n});
  return {{"threads", threads}, {"cross", cross}, {"cross_columns", {"allocated_by", "released_by", "releases"}}};
}

double ratio(double base, double value) { return value > 0 ? base / value : 0.0; }

json dmms_section(const std::vector<simulate::Metrics>& dmms) {
  auto kng = std::find_if(dmms.begin(), dmms.end(), [](const simulate::Metrics& m) { return m.dmm == "kng"; });
  json list = json::array();
  for (const auto& m : dmms) {
    json series = json::array();
    for (const auto& p : m.series) series.push_back({p.operation, p.requested, p.held});
    json maps = json::array();
    for (const auto& snap : m.snapshots) maps.push_back(heap_map(snap));
    json one = {{"name", m.dmm},
                {"steps", m.steps},
                {"memory_accesses", m.reads + m.writes},
                {"memory_usage_bytes", m.memory_usage},
                {"energy_nj", m.energy_nj},
                {"internal_fragmentation_bytes", m.internal_fragmentation},
                {"external_fragmentation_bytes", m.external_fragmentation},
                {"peak_operation", m.peak_operation},
                {"series_columns", {"operation", "requested_bytes", "held_bytes"}},
                {"series", series},
                {"heap_maps", maps}};
    if (kng != dmms.end()) {
      const auto d = [](std::uint64_t v) { return static_cast<double>(v); };
      one["normalized_to_kng"] = {
          {"time_complexity", ratio(d(kng->steps), d(m.steps))},
          {"memory_accesses", ratio(d(kng->reads + kng->writes), d(m.reads + m.writes))},
          {"memory_usage", ratio(d(kng->memory_usage), d(m.memory_usage))},
          {"energy", ratio(kng->energy_nj, m.energy_nj)}};
    }
    list.push_back(std::move(one));
  }
  return list;
}

json search_section(const SearchOutcome& s) {
  json history = json::array();
  for (const auto& [gen, best] : s.history) history.push_back({gen, best});
  json found = simulate::to_json(s.found);
  if (found.contains("exact_sizes")) {  // thousands of sizes: the count is what the table shows
    found["exact_size_count"] = found["exact_sizes"].size();
    found.erase("exact_sizes");
  }
  return {{"history", history},
          {"evaluations", s.evaluations},
          {"seconds", s.seconds},
          {"found", found},
          {"normalized_to_kng",
           {{"fitness", s.evaluation.fitness},
            {"time", s.evaluation.time},
            {"memory", s.evaluation.memory},
            {"energy", s.evaluation.energy}}}};
}

}  // namespace

json report_data(const ReportInputs& in) {
  json moments = json::array();
  for (const auto& m : in.moments) moments.push_back({{"operation", m.operation}, {"label", m.label}});
  json j = {{"trace", trace_section(in.reader, in.stats)},
            {"summary", summary_section(in.stats)},
            {"in_use", in_use_section(in.stats)},
            {"sizes", sizes_section(in.stats)},
            {"lifetimes",
             {{"events", histogram(in.stats.lifetime_events_histogram)},
              {"ns", histogram(in.stats.lifetime_ns_histogram)}}},
            {"sites", sites_section(in.stats)},
            {"leaks", leaks_section(in.reader, in.stats)},
            {"threads", threads_section(in.stats)},
            {"dmms", dmms_section(in.dmms)},
            {"moments", moments},
            {"search", in.search ? search_section(*in.search) : json(nullptr)},
            {"stacks", in.stacks}};
  if (in.replay) j["replay"] = {{"operations", in.replay->allocations + in.replay->releases},
                                {"max_in_use_bytes", in.replay->max_in_use_bytes}};
  return j;
}

}  // namespace tailor::report
