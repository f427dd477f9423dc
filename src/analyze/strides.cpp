// SPDX-License-Identifier: MIT
// Call-site profiles and strides (strides.h): two passes over a trace.
#include "analyze/strides.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <memory>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "alloc/site_pool_policy.h"
#include "analyze/symbolizer.h"

namespace tailor::analyze {

namespace {

using trace::Event;
using trace::Op;

namespace policy = alloc::pools_policy;  // what libtailor does, replayed here
constexpr std::size_t kMisraGries = 32;
constexpr std::size_t kMaxSizes = 64;

// Most common stride: candidates by Misra-Gries (pass 1), exact counts of
// the candidates (pass 2).
struct StrideCounter {
  bool has_prev = false;
  std::uint64_t prev = 0;
  std::uint64_t total = 0;
  std::map<std::int64_t, std::uint64_t> counts;

  void add(std::uint64_t address, bool exact) {
    if (has_prev) {
      const auto s = static_cast<std::int64_t>(address - prev);
      ++total;
      if (exact) {
        if (auto it = counts.find(s); it != counts.end()) ++it->second;
      } else if (auto it = counts.find(s); it != counts.end()) {
        ++it->second;
      } else if (counts.size() < kMisraGries) {
        counts.emplace(s, 1);
      } else {
        for (auto c = counts.begin(); c != counts.end();) c = --c->second == 0 ? counts.erase(c) : std::next(c);
      }
    }
    has_prev = true;
    prev = address;
  }
  void restart_exact() {  // keep the candidates, count them again
    for (auto& [s, n] : counts) n = 0;
    has_prev = false;
    total = 0;
  }
  std::pair<std::int64_t, double> top() const {
    std::int64_t best = 0;
    std::uint64_t n = 0;
    for (const auto& [s, c] : counts)
      if (c > n) best = s, n = c;
    return {best, total ? static_cast<double>(n) / static_cast<double>(total) : 0.0};
  }
};

struct SimArea {
  std::uint64_t base = 0, bytes = 0, bump = 0, end = 0;
  std::vector<std::uint64_t> free;
  std::uint64_t live = 0;
  bool in_partial = false, released = false;
};

struct SimPool {
  std::uint64_t slot = 0;
  int held = 0;             // areas not given back
  std::uint32_t young = 0;  // times the pool emptied with its one area barely carved
  std::vector<SimArea> areas;
  int current = -1;
  std::vector<int> partial;
  std::uint64_t next_bytes = policy::kFirstPage;
  std::uint64_t next_base = 0;

  std::uint64_t take(SimArea& a) {
    ++a.live;
    if (!a.free.empty()) {
      const std::uint64_t p = a.free.back();
      a.free.pop_back();
      return p;
    }
    const std::uint64_t p = a.bump;
    a.bump += slot;
    return p;
  }
  static bool has_room(const SimArea& a) { return !a.free.empty() || a.bump < a.end; }

  std::pair<std::uint64_t, int> alloc() {
    if (current >= 0 && has_room(areas[current])) return {take(areas[current]), current};
    while (!partial.empty()) {
      const int i = partial.back();
      partial.pop_back();
      areas[i].in_partial = false;
      current = i;
      if (has_room(areas[i])) return {take(areas[i]), i};
    }
    SimArea a;
    a.bytes = std::min<std::uint64_t>(next_bytes, policy::kMaxPage);
    next_bytes = a.bytes * 2;
    a.base = next_base;
    next_base += a.bytes;
    a.bump = a.base;  // a pool page has no header: its descriptor is in the segment header
    a.end = a.bump + a.bytes / slot * slot;
    areas.push_back(std::move(a));
    ++held;
    current = static_cast<int>(areas.size()) - 1;
    return {take(areas[current]), current};
  }

  // true: the pool's site is demoted (temporaries).
  bool put(int i, std::uint64_t p) {
    SimArea& a = areas[i];
    a.free.push_back(p);
    if (--a.live == 0) {
      if (i != current) {
        --held;
        if (a.in_partial) partial.erase(std::find(partial.begin(), partial.end(), i));
        a.in_partial = false;
        a.released = true;
        a.free.clear();
        a.free.shrink_to_fit();
        next_bytes = a.bytes;
        return false;
      }
      const bool barely_carved = held == 1 && a.bump - a.base < policy::kYoungSlots * slot;
      a.bump = a.base;
      a.free.clear();
      return barely_carved && ++young >= policy::kYoungEmpties;
    }
    if (i != current && !a.in_partial) {
      a.in_partial = true;
      partial.push_back(i);
    }
    return false;
  }
};

struct SiteAcc {
  SiteProfile out;
  std::unordered_map<std::uint64_t, std::uint64_t> sizes;
  std::uint64_t lifetime_sum = 0;
  std::uint64_t live = 0;
  // monitor
  std::uint32_t seen = 0, repeats = 0, after_other = 0;
  std::uint64_t last_size = 0;
  bool decided = false;
  bool tracked = true;  // strides counted (pass 2: only the reported sites)
  StrideCounter recorded, pooled;
  std::map<std::uint32_t, std::unique_ptr<SimPool>> pools;  // by thread
};

struct TrackedBlock {
  SiteAcc* site;
  std::uint64_t event;
  SimPool* pool;
  int area;
  std::uint64_t sim;
};

class Pass {
 public:
  Pass(std::unordered_map<std::uint64_t, SiteAcc>& sites, bool exact, bool every_site)
      : sites_(sites), exact_(exact), every_site_(every_site) {}

  void run(const std::string& path) {
    trace::Reader r(path);
    trace::require_every_call(r, "a call-site profile");
    Event e;
    while (r.next(e)) add(e);
  }

 private:
  void add(const Event& e) {
    ++events_;
    if (trace::is_allocation(e.op)) {
      if (e.address == 0) return;
      if (trace::is_aligned(e)) return;  // libtailor pools no aligned request
      allocate(e);
    } else if (trace::is_release(e.op)) {
      if (e.address != 0) release(e.address);
    } else if (e.op == Op::Realloc) {
      if (e.aux != 0 && e.address != 0) release(e.aux);   // a pooled block moves out
      else if (e.aux != 0 && e.size == 0) release(e.aux);  // realloc(p, 0) frees
    }
  }

  void allocate(const Event& e) {
    const std::uint64_t size = trace::requested_bytes(e);
    SiteAcc& s = sites_[e.callsite];
    SiteProfile& o = s.out;
    o.address = e.callsite;
    ++o.allocations;
    o.bytes += size;
    if (s.sizes.size() < kMaxSizes || s.sizes.count(size)) ++s.sizes[size];
    ++s.live;
    o.peak_live = std::max(o.peak_live, s.live);
    TrackedBlock l{&s, events_, nullptr, -1, 0};
    const bool pooled_now = s.decided && o.pooled && !o.demoted && policy::round_slot(size) == o.slot;
    if (!pooled_now && size <= policy::kPoolMaxRequest) {  // the heap's pages serve it: interleaving
      std::uint64_t& last = last_site_[std::uint64_t{e.thread} << 32 | policy::round_slot(size)];
      if (!s.decided && last != 0 && last != e.callsite) ++s.after_other;
      last = e.callsite;
    }
    if (!s.decided) {
      if (s.seen > 0 && size == s.last_size) ++s.repeats;
      s.last_size = size;
      if (++s.seen == policy::kWindow) {
        s.decided = true;
        o.pooled = policy::keeps_one_size(size, static_cast<std::uint32_t>(s.repeats));
        if (o.pooled && !every_site_ && claimed_.insert(policy::round_slot(size)).second) {
          o.pooled = false;  // the first site of its slot size keeps the heap's pages
          o.keeps_heap = true;
        } else if (o.pooled && !every_site_ && !policy::interleaves(s.after_other)) {
          o.pooled = false;  // alone in its slot size: the heap's pages already are its pool
          o.alone = true;
        }
        o.slot = o.pooled ? policy::round_slot(size) : 0;
      }
    } else if (pooled_now) {
      auto& pool = s.pools[e.thread];
      if (!pool) {
        pool = std::make_unique<SimPool>();
        pool->slot = o.slot;
        pool->next_base = static_cast<std::uint64_t>(e.thread + 1) << 40;
      }
      auto [sim, area] = pool->alloc();
      l.pool = pool.get();
      l.area = area;
      l.sim = sim;
      ++o.pooled_allocations;
      if (s.tracked) s.pooled.add(sim, exact_);
    }
    if (s.tracked) s.recorded.add(e.address, exact_);
    if (auto [it, fresh] = live_.try_emplace(e.address, l); !fresh) {  // the trace missed its release
      it->second.site->live--;
      it->second = l;
    }
  }

  void release(std::uint64_t address) {
    auto it = live_.find(address);
    if (it == live_.end()) return;
    TrackedBlock& l = it->second;
    SiteAcc& s = *l.site;
    --s.live;
    ++s.out.freed;
    s.lifetime_sum += events_ - l.event;
    if (l.pool != nullptr && l.pool->put(l.area, l.sim)) s.out.demoted = true;
    live_.erase(it);
  }

  std::unordered_map<std::uint64_t, SiteAcc>& sites_;
  bool exact_;
  bool every_site_;
  std::set<std::uint64_t> claimed_;  // slot sizes whose first one-size site kept the heap
  std::unordered_map<std::uint64_t, std::uint64_t> last_site_;  // by thread and slot size: the last site the heap served
  std::uint64_t events_ = 0;
  std::unordered_map<std::uint64_t, TrackedBlock> live_;
};

}  // namespace

std::vector<SiteProfile> profile_sites(const std::string& path, const SiteProfileOptions& o) {
  std::unordered_map<std::uint64_t, SiteAcc> sites;
  Pass(sites, false, o.every_site).run(path);
  // The reported sites, by allocations.
  std::vector<SiteAcc*> order;
  for (auto& [a, s] : sites)
    if (s.out.allocations >= o.min_allocations) order.push_back(&s);
  std::sort(order.begin(), order.end(), [](const SiteAcc* a, const SiteAcc* b) {
    return a->out.allocations != b->out.allocations ? a->out.allocations > b->out.allocations
                                                    : a->out.address < b->out.address;
  });
  if (order.size() > o.top) order.resize(o.top);
  // Pass 2: the same replay, counting the candidates exactly.
  for (auto& [a, s] : sites) {
    const SiteProfile keep = s.out;
    const bool tracked = std::find(order.begin(), order.end(), &s) != order.end();
    StrideCounter rec = std::move(s.recorded), pool = std::move(s.pooled);
    s = SiteAcc{};
    s.out.address = keep.address;
    s.tracked = tracked;
    if (tracked) {
      s.recorded = std::move(rec);
      s.pooled = std::move(pool);
      s.recorded.restart_exact();
      s.pooled.restart_exact();
    }
  }
  Pass(sites, true, o.every_site).run(path);
  std::vector<SiteProfile> out;
  for (SiteAcc* s : order) {
    SiteProfile p = s->out;
    std::uint64_t best = 0;
    for (const auto& [size, n] : s->sizes)
      if (n > best || (n == best && size < p.top_size)) best = n, p.top_size = size;
    p.top_size_share = p.allocations ? static_cast<double>(best) / static_cast<double>(p.allocations) : 0;
    p.distinct_sizes = s->sizes.size();
    p.mean_lifetime_events = p.freed ? static_cast<double>(s->lifetime_sum) / static_cast<double>(p.freed) : 0;
    std::tie(p.stride, p.stride_share) = s->recorded.top();
    std::tie(p.pool_stride, p.pool_stride_share) = s->pooled.top();
    out.push_back(std::move(p));
  }
  return out;
}

void symbolize_sites(std::vector<SiteProfile>& sites, const std::vector<trace::Module>& modules) {
  Symbolizer sym(modules);
  for (auto& s : sites) {
    if (s.address == 0) {
      s.symbol = "(unknown)";
      continue;
    }
    const Symbol r = sym.resolve_return_address(s.address);
    s.symbol = r.to_string();
    s.module = r.module.empty() ? std::string() : std::filesystem::path(r.module).filename().string();
    s.module_offset = r.offset;
  }
}

nlohmann::json to_json(const std::vector<SiteProfile>& sites) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& s : sites)
    a.push_back({{"address", s.address},
                 {"symbol", s.symbol},
                 {"module", s.module},
                 {"module_offset", s.module_offset},
                 {"allocations", s.allocations},
                 {"bytes", s.bytes},
                 {"top_size", s.top_size},
                 {"top_size_share", s.top_size_share},
                 {"distinct_sizes", s.distinct_sizes},
                 {"freed", s.freed},
                 {"mean_lifetime_events", s.mean_lifetime_events},
                 {"peak_live", s.peak_live},
                 {"pooled", s.pooled},
                 {"keeps_heap", s.keeps_heap},
                 {"alone", s.alone},
                 {"demoted", s.demoted},
                 {"slot", s.slot},
                 {"pooled_allocations", s.pooled_allocations},
                 {"stride", s.stride},
                 {"stride_share", s.stride_share},
                 {"pool_stride", s.pool_stride},
                 {"pool_stride_share", s.pool_stride_share}});
  return a;
}

}  // namespace tailor::analyze
