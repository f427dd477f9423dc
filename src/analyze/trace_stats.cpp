// SPDX-License-Identifier: MIT
// One pass over a trace in time order, keeping the live blocks, sizes and
// call sites in flat hash tables and the lifetimes as exact counts;
// see trace_stats.h for the accounting rules.
#include "analyze/trace_stats.h"

#include <algorithm>
#include <bit>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "analyze/exact_distribution.h"
#include "analyze/sampling.h"
#include "analyze/symbolizer.h"
#include "util/flat_map.h"

namespace tailor::analyze {

namespace {

using trace::Event;
using trace::Op;

struct SiteAccumulator {
  std::uint64_t calls = 0, bytes = 0, live = 0, peak_live = 0;
  double calls_w = 0, bytes_var = 0;  // sampled traces: estimated calls, variance of `bytes`
};

struct StackAccumulator {
  StackStats stats;
  double calls_w = 0, bytes_var = 0;
};

// Sampled traces: a thread's estimated allocations and releases.
struct ThreadWeights {
  double allocations = 0, releases = 0;
};

struct LiveBlock {
  std::uint64_t size;
  std::uint64_t event_index;
  std::uint64_t time_ns;
  std::uint32_t site;  // index in site_list_: a release needs no second lookup
  std::uint32_t thread;
  std::uint32_t stack;
};

// Values below these are counted by value, the others kept one by one (see
// exact_distribution.h): lifetimes of up to 4095 events and 65535 ns cover
// most objects of allocation-heavy programs, in 32 KB and 512 KB of counts.
constexpr std::size_t kDenseLifetimeEvents = 1 << 12;
constexpr std::size_t kDenseLifetimeNs = 1 << 16;

// Allocations by request size: most requests are small, and those are
// counted in an array indexed by size (no hashing on the merging thread's
// per-event path); the rest in a FlatMap.
class SizeCounts {
 public:
  static constexpr std::uint64_t kDense = 1024;
  [[gnu::always_inline]] void add(std::uint64_t size) {
    if (size < kDense) {
      distinct_dense_ += dense_[size] == 0;
      ++dense_[size];
    } else {
      ++sparse_[size];
    }
  }
  std::size_t size() const noexcept { return distinct_dense_ + sparse_.size(); }
  /// f(size, count) for every size seen (small sizes in order, then the others).
  template <class F>
  void for_each(F f) const {
    for (std::uint64_t size = 0; size < kDense; ++size)
      if (dense_[size]) f(size, dense_[size]);
    sparse_.for_each(f);
  }

 private:
  std::vector<std::uint64_t> dense_ = std::vector<std::uint64_t>(kDense);
  std::size_t distinct_dense_ = 0;
  util::FlatMap<std::uint64_t> sparse_;
};

class Accumulator {
 public:
  Accumulator(const StatsOptions& o, std::uint64_t expected_events, std::uint64_t sample_interval)
      : options_(o),
        weights_(sample_interval),
        lifetime_events_(kDenseLifetimeEvents),
        lifetime_ns_(kDenseLifetimeNs),
        expected_(expected_events) {
    s_.sampling.interval = sample_interval;
  }

  [[gnu::always_inline]] void add(const Event& e) {
    ++s_.events;
    if (s_.events == 1) first_ns_ = e.time_ns;
    last_ns_ = e.time_ns;
    if (options_.series_points) sample(e);
    if (e.op == Op::ThreadStart || e.op == Op::ThreadExit) {
      ThreadStats& t = thread(e);
      if (e.op == Op::ThreadStart) t.tid = e.size;
      return;
    }
    ++s_.memory_ops;
    ++kinds_[static_cast<std::uint8_t>(e.op)][e.flags & 0xf];
    ThreadStats& t = thread(e);
    if (trace::is_allocation(e.op)) {
      if (trace::is_aligned(e)) {
        ++s_.aligned_calls;
        ++s_.alignments[e.aux];
      }
      if (e.address == 0) {
        ++s_.failed;
        return;
      }
      allocate(e, trace::requested_bytes(e), t);
    } else if (trace::is_release(e.op)) {
      if (e.address == 0) {
        ++s_.null_releases;
        return;
      }
      ++s_.releases;
      ++t.releases;
      release(e, e.address);
    } else if (e.op == Op::Realloc) {
      realloc(e, t);
    }
  }

  TraceStats finish() {
    s_.duration_ns = s_.events ? last_ns_ - first_ns_ : 0;
    s_.first_event_ns = first_ns_;
    if (sampled()) estimate_totals();
    for (unsigned op = 1; op <= trace::kMaxOp; ++op)
      for (unsigned flags = 0; flags < 16; ++flags)
        if (std::uint64_t n = sampled() ? rounded(kinds_w_[op][flags]) : kinds_[op][flags]) {
          Event k;
          k.op = static_cast<Op>(op);
          k.flags = static_cast<std::uint8_t>(flags);
          s_.calls[trace::describe_kind(k)] += n;
        }
    s_.average_size = s_.objects ? static_cast<double>(s_.total_bytes) / static_cast<double>(s_.objects) : 0;
    s_.live_objects_at_end = live_.size();
    collect_leaks();
    s_.lifetime_events_histogram = lifetime_events_.histogram();
    s_.lifetime_ns_histogram = lifetime_ns_.histogram();
    s_.lifetime_events = lifetime_events_.summarize();
    s_.lifetime_ns = lifetime_ns_.summarize();
    if (run_open_) close_run();

    s_.distinct_sizes = sizes_.size();
    std::vector<SizeShare> all;
    all.reserve(sizes_.size());
    sizes_.for_each([&](std::uint64_t size, std::uint64_t count) {
      count = estimated_count(size, count);
      all.push_back({size, count, size * count});
    });
    std::sort(all.begin(), all.end(), [](const SizeShare& a, const SizeShare& b) {
      return a.count != b.count ? a.count > b.count : a.size < b.size;
    });
    all.resize(std::min(all.size(), options_.top));
    s_.top_sizes = std::move(all);
    std::map<std::uint64_t, SizeShare> buckets;
    sizes_.for_each([&](std::uint64_t size, std::uint64_t count) {
      count = estimated_count(size, count);
      std::uint64_t bound = size <= 1 ? 1 : std::bit_ceil(size);
      SizeShare& b = buckets[bound];
      b.size = bound;
      b.count += count;
      b.bytes += size * count;
    });
    for (const auto& [bound, b] : buckets) s_.size_buckets.push_back(b);

    s_.distinct_callsites = sites_.size();
    std::vector<CallSiteStats> sites;
    sites.reserve(sites_.size());
    sites_.for_each([&](std::uint64_t addr, std::uint32_t index) {
      const SiteAccumulator& a = site_list_[index];
      sites.push_back({addr, sampled() ? rounded(a.calls_w) : a.calls, a.bytes, a.peak_live, error(a.bytes_var), {},
                       {}, {}});
    });
    auto top = [&](auto key) {
      std::vector<CallSiteStats> v = sites;
      std::sort(v.begin(), v.end(), [&](const auto& a, const auto& b) {
        return key(a) != key(b) ? key(a) > key(b) : a.address < b.address;
      });
      v.resize(std::min(v.size(), options_.top));
      return v;
    };
    s_.top_sites_by_calls = top([](const CallSiteStats& c) { return c.calls; });
    s_.top_sites_by_bytes = top([](const CallSiteStats& c) { return c.bytes; });

    s_.distinct_stacks = stacks_.size();
    stacks_.for_each([&](std::uint64_t id, const StackAccumulator& a) {
      StackStats st = a.stats;
      st.stack = static_cast<std::uint32_t>(id);
      if (sampled()) {
        st.calls = rounded(a.calls_w);
        st.bytes_error = error(a.bytes_var);
      }
      s_.top_stacks_by_bytes.push_back(std::move(st));
    });
    const std::size_t keep = std::min(s_.top_stacks_by_bytes.size(), options_.top);
    std::partial_sort(s_.top_stacks_by_bytes.begin(), s_.top_stacks_by_bytes.begin() + static_cast<std::ptrdiff_t>(keep),
                      s_.top_stacks_by_bytes.end(), [](const StackStats& a, const StackStats& b) {
                        return a.bytes != b.bytes ? a.bytes > b.bytes : a.stack < b.stack;
                      });
    s_.top_stacks_by_bytes.resize(keep);

    for (auto& [id, t] : threads_) {
      s_.threads.push_back(t);
      if (sampled()) {
        s_.threads.back().allocations = rounded(thread_weights_[id].allocations);
        s_.threads.back().releases = rounded(thread_weights_[id].releases);
      }
    }
    return std::move(s_);
  }

 private:
  static std::uint64_t rounded(double estimate) {
    return estimate > 0 ? static_cast<std::uint64_t>(std::llround(estimate)) : 0;
  }
  static double error(double variance) { return variance > 0 ? std::sqrt(variance) : 0; }
  bool sampled() const { return weights_.sampled(); }
  // Allocations of `size` bytes: `count` in the trace, what they stand for.
  std::uint64_t estimated_count(std::uint64_t size, std::uint64_t count) const {
    return sampled() ? rounded(static_cast<double>(count) * weights_.count(size)) : count;
  }

  // Sampled traces: the counts of the Table 2 figures become estimates.
  void estimate_totals() {
    s_.sampling.samples = s_.objects;
    s_.objects = rounded(objects_w_);
    s_.sampling.objects_error = error(objects_var_);
    s_.sampling.total_bytes_error = error(total_bytes_var_);
    s_.sampling.max_in_use_error = error(max_in_use_var_);
    s_.max_live_objects = rounded(max_live_w_);
    s_.releases = rounded(releases_w_);
    double ops = 0;
    for (const auto& by_flags : kinds_w_)
      for (double n : by_flags) ops += n;
    s_.memory_ops = rounded(ops);
  }
  // The series: event i (from 1) belongs to run floor((i-1) * points / expected);
  // events past the expected count (a reader that found more) go to the last run.
  void sample(const Event& e) {
    const std::uint64_t points = options_.series_points;
    const std::uint64_t run =
        expected_ ? std::min<std::uint64_t>(points - 1, (s_.events - 1) * points / expected_) : points - 1;
    if (run_open_ && run != run_) close_run();
    if (!run_open_) {
      run_open_ = true;
      run_ = run;
      point_ = {0, 0, in_use_, in_use_};
    }
    last_time_ns_ = e.time_ns;
    last_index_ = s_.events - 1;
  }
  // Called before the event's effect on in_use_ is known: the run's min and
  // max are updated after every change (note_in_use), its time at closing.
  void note_in_use() {
    if (!run_open_) return;
    point_.min = std::min(point_.min, in_use_);
    point_.max = std::max(point_.max, in_use_);
  }
  void close_run() {
    point_.time_ns = last_time_ns_ - first_ns_;
    point_.event = last_index_;
    s_.in_use_series.push_back(point_);
    run_open_ = false;
  }

  // The live blocks by allocating call site (by stack, where the trace has
  // them), then the groups that hold any, largest first.
  void collect_leaks() {
    std::vector<LeakSite> by_site(site_list_.size());
    sites_.for_each([&](std::uint64_t addr, std::uint32_t index) { by_site[index].address = addr; });
    util::FlatMap<std::uint32_t> stack_group;  // stack -> index in by_site, past the sites
    std::vector<double> blocks_w, bytes_var;     // sampled traces, by index in by_site
    double live_w = 0, live_var = 0;
    live_.for_each([&](std::uint64_t, const LiveBlock& b) {
      const std::uint64_t bytes = weights_.bytes(b.size);
      s_.live_bytes_at_end += bytes;
      std::uint32_t group = b.site;
      if (b.stack != 0) {
        auto [g, fresh] = stack_group.try_emplace(b.stack);
        if (fresh) {
          *g = static_cast<std::uint32_t>(by_site.size());
          by_site.emplace_back();
          by_site.back().stack = b.stack;
          by_site.back().address = by_site[b.site].address;
        }
        group = *g;
      }
      LeakSite& l = by_site[group];
      ++l.blocks;
      l.bytes += bytes;
      l.largest = std::max(l.largest, b.size);
      if (sampled()) {
        blocks_w.resize(by_site.size());
        bytes_var.resize(by_site.size());
        blocks_w[group] += weights_.count(b.size);
        bytes_var[group] += weights_.bytes_variance(b.size);
        live_w += weights_.count(b.size);
        live_var += weights_.bytes_variance(b.size);
      }
    });
    if (sampled()) {
      s_.live_objects_at_end = rounded(live_w);
      s_.sampling.live_bytes_at_end_error = error(live_var);
      for (std::size_t i = 0; i < blocks_w.size(); ++i) {
        if (by_site[i].blocks == 0) continue;
        by_site[i].blocks = std::max<std::uint64_t>(1, rounded(blocks_w[i]));
        by_site[i].bytes_error = error(bytes_var[i]);
      }
    }
    std::erase_if(by_site, [](const LeakSite& l) { return l.blocks == 0; });
    s_.leak_sites = by_site.size();
    const std::size_t keep = std::min(by_site.size(), options_.top);
    std::partial_sort(by_site.begin(), by_site.begin() + static_cast<std::ptrdiff_t>(keep), by_site.end(),
                      [](const LeakSite& a, const LeakSite& b) {
                        return a.bytes != b.bytes ? a.bytes > b.bytes : a.address < b.address;
                      });
    by_site.resize(keep);
    s_.leaks = std::move(by_site);
  }

  ThreadStats& thread(const Event& e) {
    if (last_thread_ && last_thread_->thread == e.thread) {  // the common case: runs of one thread's events
      last_thread_->last_ns = e.time_ns;
      return *last_thread_;
    }
    auto [it, fresh] = threads_.try_emplace(e.thread);
    ThreadStats& t = it->second;
    if (fresh) {
      t.thread = e.thread;
      t.first_ns = e.time_ns;
    }
    t.last_ns = e.time_ns;
    last_thread_ = &t;  // map nodes never move
    return t;
  }

  // `requested`: the call's bytes; `bytes` below, what they stand for (the
  // same in an exact trace).
  void allocate(const Event& e, std::uint64_t requested, ThreadStats& t) {
    const std::uint64_t bytes = weights_.bytes(requested);
    ++s_.objects;
    s_.total_bytes += bytes;
    ++t.allocations;
    t.bytes += bytes;
    sizes_.add(requested);
    auto [site_index, new_site] = sites_.try_emplace(e.callsite);
    if (new_site) {
      *site_index = static_cast<std::uint32_t>(site_list_.size());
      site_list_.emplace_back();
    }
    StackAccumulator* stack = nullptr;
    if (e.stack != 0) {
      stack = &*stacks_.try_emplace(e.stack).first;
      ++stack->stats.calls;
      stack->stats.bytes += bytes;
    }
    SiteAccumulator& site = site_list_[*site_index];
    ++site.calls;
    site.bytes += bytes;
    site.live += bytes;
    site.peak_live = std::max(site.peak_live, site.live);
    if (sampled()) {
      const double w = weights_.count(requested), var = weights_.bytes_variance(requested);
      objects_w_ += w;
      objects_var_ += weights_.count_variance(requested);
      total_bytes_var_ += var;
      kinds_w_[static_cast<std::uint8_t>(e.op)][e.flags & 0xf] += w;
      thread_weights_[t.thread].allocations += w;
      site.calls_w += w;
      site.bytes_var += var;
      if (stack) {
        stack->calls_w += w;
        stack->bytes_var += var;
      }
      live_w_ += w;
      in_use_var_ += var;
    }
    auto [block, fresh] = live_.try_emplace(e.address);
    if (!fresh) {
      // The trace missed this block's release; forget the old one.
      ++s_.reused_live;
      forget(*block);
    }
    *block = {requested, s_.events, e.time_ns, *site_index, e.thread, e.stack};
    in_use_ += bytes;
    note_in_use();
    if (in_use_ > s_.max_in_use) {
      s_.max_in_use = in_use_;
      s_.time_of_max_in_use_ns = e.time_ns;
      s_.event_of_max_in_use = s_.events - 1;
      max_in_use_var_ = in_use_var_;
    }
    s_.max_live_objects = std::max<std::uint64_t>(s_.max_live_objects, live_.size());
    max_live_w_ = std::max(max_live_w_, live_w_);
  }

  // A live block's bytes leave the amounts in use.
  void forget(const LiveBlock& b) {
    const std::uint64_t bytes = weights_.bytes(b.size);
    in_use_ -= bytes;
    site_list_[b.site].live -= bytes;
    if (sampled()) {
      live_w_ -= weights_.count(b.size);
      in_use_var_ -= weights_.bytes_variance(b.size);
    }
  }

  void release(const Event& e, std::uint64_t address) {
    LiveBlock b{};
    if (!live_.take(address, b)) {
      ++s_.unknown_releases;
      return;
    }
    lifetime_events_.add(s_.events - b.event_index);
    lifetime_ns_.add(e.time_ns - b.time_ns);
    if (b.thread != e.thread) {
      ++s_.cross_thread_releases;
      ++s_.cross_thread_pairs[{b.thread, e.thread}];
    }
    forget(b);
    note_in_use();
    if (sampled()) {
      const double w = weights_.count(b.size);
      releases_w_ += w;
      thread_weights_[e.thread].releases += w;
      if (e.op != Op::Realloc || e.address == 0)  // a realloc's call is counted with its new block
        kinds_w_[static_cast<std::uint8_t>(e.op)][e.flags & 0xf] += w;
    }
  }

  void realloc(const Event& e, ThreadStats& t) {
    ++s_.realloc.calls;
    if (e.aux == 0) {  // realloc(NULL, n) is malloc(n)
      ++s_.realloc.from_null;
      if (e.address == 0) {
        ++s_.realloc.failed;
        ++s_.failed;
        return;
      }
      allocate(e, e.size, t);
      return;
    }
    if (e.address == 0) {
      if (e.size == 0) {  // realloc(p, 0): glibc frees p
        ++s_.realloc.to_zero;
        release(e, e.aux);
      } else {
        ++s_.realloc.failed;
        ++s_.failed;
      }
      return;
    }
    ++(e.address == e.aux ? s_.realloc.in_place : s_.realloc.moved);
    release(e, e.aux);
    allocate(e, e.size, t);
  }

  StatsOptions options_;
  SampleWeights weights_;  // sampled traces: what a kept block stands for (sampling.h)
  TraceStats s_;
  util::FlatMap<LiveBlock> live_{std::size_t{1} << 16};
  SizeCounts sizes_;                            // request size -> allocations
  util::FlatMap<std::uint32_t> sites_;                // call site -> index in site_list_
  std::vector<SiteAccumulator> site_list_;
  util::FlatMap<StackAccumulator> stacks_;  // stack -> allocations (traces with stacks)
  std::map<std::uint32_t, ThreadStats> threads_;
  ThreadStats* last_thread_ = nullptr;
  ExactDistribution lifetime_events_, lifetime_ns_;
  std::uint64_t kinds_[trace::kMaxOp + 1][16] = {};  // calls by op and flags
  std::uint64_t in_use_ = 0;
  // Sampled traces (sampling.h): estimated counts and the variances of the estimates.
  double kinds_w_[trace::kMaxOp + 1][16] = {};
  double objects_w_ = 0, objects_var_ = 0, total_bytes_var_ = 0, releases_w_ = 0;
  double live_w_ = 0, max_live_w_ = 0, in_use_var_ = 0, max_in_use_var_ = 0;
  std::map<std::uint32_t, ThreadWeights> thread_weights_;
  std::uint64_t first_ns_ = 0, last_ns_ = 0;
  std::uint64_t expected_;  // events the reader announced, for the series' runs
  bool run_open_ = false;
  std::uint64_t run_ = 0;
  InUsePoint point_;
  std::uint64_t last_time_ns_ = 0, last_index_ = 0;
};

nlohmann::json dist_json(const Distribution& d) {
  return {{"count", d.count}, {"mean", d.mean}, {"min", d.min}, {"p50", d.p50},
          {"p90", d.p90},     {"p99", d.p99},   {"max", d.max}};
}

nlohmann::json sites_json(const std::vector<CallSiteStats>& v, bool sampled) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& c : v) {
    a.push_back({{"address", c.address}, {"calls", c.calls}, {"bytes", c.bytes},
                 {"peak_live_bytes", c.peak_live_bytes}, {"symbol", c.symbol}});
    if (sampled) a.back()["bytes_error"] = c.bytes_error;
  }
  return a;
}

// A stack's frames, innermost first: address and symbol (empty unsymbolized).
nlohmann::json frames_json(const std::vector<std::uint64_t>& addresses, const std::vector<std::string>& symbols) {
  nlohmann::json frames = nlohmann::json::array();
  for (std::size_t k = 0; k < addresses.size(); ++k)
    frames.push_back({{"address", addresses[k]}, {"symbol", k < symbols.size() ? symbols[k] : ""}});
  return frames;
}

nlohmann::json leaks_json(const TraceStats& s) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& l : s.leaks) {
    nlohmann::json one = {{"address", l.address}, {"blocks", l.blocks}, {"bytes", l.bytes},
                          {"largest_bytes", l.largest}, {"symbol", l.symbol}};
    if (s.sampling.interval) one["bytes_error"] = l.bytes_error;
    if (l.stack != 0) one["stack"] = frames_json(l.frame_addresses, l.frames);
    a.push_back(std::move(one));
  }
  return {{"sites", s.leak_sites}, {"top_by_bytes", a}};
}

nlohmann::json stacks_json(const std::vector<StackStats>& v, bool sampled) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& st : v) {
    a.push_back({{"calls", st.calls}, {"bytes", st.bytes}, {"stack", frames_json(st.frame_addresses, st.frames)}});
    if (sampled) a.back()["bytes_error"] = st.bytes_error;
  }
  return a;
}

nlohmann::json sizes_json(const std::vector<SizeShare>& v) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& s : v) a.push_back({{"size", s.size}, {"count", s.count}, {"bytes", s.bytes}});
  return a;
}

nlohmann::json histogram_json(const Log2Histogram& h) {
  nlohmann::json a = nlohmann::json::array();
  for (std::size_t k = 0; k < h.counts.size(); ++k)
    a.push_back({{"upper_bound", std::uint64_t{1} << k}, {"count", h.counts[k]}});
  return a;
}

}  // namespace

void Log2Histogram::add(std::uint64_t value) { add(value, 1); }

void Log2Histogram::add(std::uint64_t value, std::uint64_t times) {
  const std::size_t k = value <= 1 ? 0 : static_cast<std::size_t>(std::bit_width(value - 1));
  if (counts.size() <= k) counts.resize(k + 1);
  counts[k] += times;
}

TraceStats compute_stats(trace::Reader& reader, const StatsOptions& options) {
  Accumulator acc(options, reader.event_count(), reader.header().sample_interval);
  reader.rewind();
  const Event* run = nullptr;
  while (const std::size_t n = reader.next_run(run))
    for (std::size_t i = 0; i < n; ++i) acc.add(run[i]);
  reader.rewind();
  TraceStats s = acc.finish();
  for (LeakSite& l : s.leaks)
    if (l.stack != 0) l.frame_addresses = reader.stacks().frames(l.stack);
  for (StackStats& st : s.top_stacks_by_bytes) st.frame_addresses = reader.stacks().frames(st.stack);
  return s;
}

std::string end_description(const trace::Reader& r) {
  if (!r.complete()) return "at the trace's last event (the trace is cut)";
  if (!r.end()) return "at the trace's end";
  switch (r.end()->reason) {
    case trace::EndReason::Exit:
    case trace::EndReason::FastExit:
      return "at exit (status " + std::to_string(r.end()->status) + ")";
    case trace::EndReason::Abort:
      return "at abort";
    case trace::EndReason::Exec:
      return "when the process called exec";
  }
  return "at the trace's end";
}

void symbolize(TraceStats& stats, const std::vector<trace::Module>& modules) {
  Symbolizer sym(modules);
  auto fill = [&sym](auto& site) {
    if (!site.address) {
      site.symbol = "(unknown)";
      return;
    }
    const Symbol s = sym.resolve_return_address(site.address);
    site.symbol = s.to_string();
    site.function = s.function;
    site.module = s.module.empty() ? std::string() : std::filesystem::path(s.module).filename().string();
  };
  for (auto* list : {&stats.top_sites_by_calls, &stats.top_sites_by_bytes})
    for (auto& c : *list) fill(c);
  auto fill_frames = [&sym](auto& stack) {
    for (const std::uint64_t frame : stack.frame_addresses)
      stack.frames.push_back(sym.resolve_return_address(frame).to_string());
  };
  for (auto& st : stats.top_stacks_by_bytes) fill_frames(st);
  for (auto& l : stats.leaks) {
    fill(l);
    fill_frames(l);
  }
}

nlohmann::json to_json(const TraceStats& s) {
  nlohmann::json threads = nlohmann::json::array();
  for (const auto& t : s.threads)
    threads.push_back({{"thread", t.thread}, {"tid", t.tid}, {"allocations", t.allocations}, {"bytes", t.bytes},
                       {"releases", t.releases}, {"first_ns", t.first_ns}, {"last_ns", t.last_ns}});
  nlohmann::json cross = nlohmann::json::array();
  for (const auto& [pair, n] : s.cross_thread_pairs)
    cross.push_back({{"allocated_by", pair.first}, {"released_by", pair.second}, {"releases", n}});
  nlohmann::json alignments = nlohmann::json::object();
  for (const auto& [a, n] : s.alignments) alignments[std::to_string(a)] = n;
  const bool sampled = s.sampling.interval != 0;
  return {
      {"sampling",
       {{"interval", s.sampling.interval}, {"samples", s.sampling.samples}, {"objects_error", s.sampling.objects_error},
        {"total_bytes_error", s.sampling.total_bytes_error}, {"max_in_use_error", s.sampling.max_in_use_error},
        {"live_bytes_at_end_error", s.sampling.live_bytes_at_end_error}}},
      {"objects", s.objects},
      {"total_bytes", s.total_bytes},
      {"max_in_use_bytes", s.max_in_use},
      {"average_size", s.average_size},
      {"memory_ops", s.memory_ops},
      {"events", s.events},
      {"duration_ns", s.duration_ns},
      {"calls", s.calls},
      {"releases", s.releases},
      {"null_releases", s.null_releases},
      {"failed_allocations", s.failed},
      {"max_live_objects", s.max_live_objects},
      {"time_of_max_in_use_ns", s.time_of_max_in_use_ns},
      {"live_objects_at_end", s.live_objects_at_end},
      {"live_bytes_at_end", s.live_bytes_at_end},
      {"unknown_releases", s.unknown_releases},
      {"reused_live", s.reused_live},
      {"cross_thread_releases", s.cross_thread_releases},
      {"cross_thread_pairs", cross},
      {"realloc",
       {{"calls", s.realloc.calls}, {"in_place", s.realloc.in_place}, {"moved", s.realloc.moved},
        {"from_null", s.realloc.from_null}, {"to_zero", s.realloc.to_zero}, {"failed", s.realloc.failed}}},
      {"aligned_calls", s.aligned_calls},
      {"alignments", alignments},
      {"distinct_sizes", s.distinct_sizes},
      {"top_sizes", sizes_json(s.top_sizes)},
      {"size_buckets", sizes_json(s.size_buckets)},
      {"lifetime_events", dist_json(s.lifetime_events)},
      {"lifetime_ns", dist_json(s.lifetime_ns)},
      {"lifetime_events_histogram", histogram_json(s.lifetime_events_histogram)},
      {"lifetime_ns_histogram", histogram_json(s.lifetime_ns_histogram)},
      {"distinct_callsites", s.distinct_callsites},
      {"top_sites_by_calls", sites_json(s.top_sites_by_calls, sampled)},
      {"top_sites_by_bytes", sites_json(s.top_sites_by_bytes, sampled)},
      {"distinct_stacks", s.distinct_stacks},
      {"top_stacks_by_bytes", stacks_json(s.top_stacks_by_bytes, sampled)},
      {"leaks", leaks_json(s)},
      {"threads", threads},
  };
}

}  // namespace tailor::analyze
