// SPDX-License-Identifier: MIT
// Fitness of DMMs on a trace (evaluator.h).
#include "search/evaluator.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "simulate/dmm.h"
#include "simulate/trace_sizes.h"
#include "simulate/simulator.h"
#include "util/parallel_for.h"

namespace tailor::search {

Weights parse_weights(const std::string& text) {
  Weights w;
  std::istringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    if (item.empty()) continue;
    const auto eq = item.find('=');
    if (eq == std::string::npos) throw std::invalid_argument("--weights: '" + item + "' is not name=value");
    const std::string key = item.substr(0, eq);
    double v;
    try {
      std::size_t used;
      v = std::stod(item.substr(eq + 1), &used);
      if (used != item.size() - eq - 1) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
      throw std::invalid_argument("--weights: '" + item + "': the value is not a number");
    }
    if (v < 0) throw std::invalid_argument("--weights: '" + item + "': weights are not negative");
    if (key == "time") w.time = v;
    else if (key == "memory") w.memory = v;
    else if (key == "energy") w.energy = v;
    else throw std::invalid_argument("--weights: unknown objective '" + key + "' (known: time, memory, energy)");
  }
  if (w.time + w.memory + w.energy <= 0) throw std::invalid_argument("--weights: at least one weight must be positive");
  return w;
}

Evaluator::Evaluator(const simulate::ReplayTrace& trace, Weights weights, unsigned threads,
                     const std::vector<std::uint64_t>* exact_sizes, const simulate::TimeModel* model)
    : trace_(trace),
      weights_(weights),
      threads_(std::max(1u, threads)),
      model_(model),
      kng_(simulate::simulate(trace, "kng")),
      sizes_(simulate::sizes_of(trace)),
      exact_(exact_sizes ? *exact_sizes : sizes_) {
  kng_.series.clear();
  // A DMM's time ratio is at least any of its allocators' steps over
  // Kingsley's, and its memory ratio at least any of its allocators'
  // resident bytes over Kingsley's memory usage; its fitness is at least a
  // weight x that ratio / the sum of the weights: past (sum / weight) x
  // Kingsley's figure it is worse than Kingsley (fitness 1) and cannot be
  // the best.
  limits_.steps = bound(weights_.time, kSlowest, kng_.steps);
  if (kng_.memory_usage > 0) limits_.resident = bound(weights_.memory, kLargest, kng_.memory_usage);
}

std::uint64_t Evaluator::bound(double weight, std::uint64_t most, std::uint64_t kingsley) const {
  const double sum = weights_.time + weights_.memory + weights_.energy;
  const double times = weight > 0 ? std::min<double>(static_cast<double>(most), sum / weight) : static_cast<double>(most);
  return static_cast<std::uint64_t>(times * static_cast<double>(std::max<std::uint64_t>(kingsley, 1))) + 1;
}

void Evaluator::bound_memory_for_front() {
  if (kng_.memory_usage > 0) limits_.resident = bound(0, kLargest, kng_.memory_usage);
}

double Evaluator::work(const simulate::AllocatorSpec& a) const {
  // The counts by routing size, made on first use: only a search shared
  // among processes asks, so other evaluators do not pay a pass over the trace.
  std::call_once(routed_once_, [&] {
    // Operations by size index (an aligned one routes larger: rare, apart);
    // a release routes as its block.
    std::vector<std::uint64_t> plain(trace_.sizes.size(), 0);
    std::map<std::uint64_t, std::uint64_t> by_size;
    for (const simulate::Operation& op : trace_.operations) {
      if (op.align_log2() == 0) ++plain[op.size()];
      else ++by_size[std::max<std::uint64_t>(dmm::routing_size(trace_.sizes[op.size()], op.alignment()), 1)];
    }
    for (std::size_t k = 0; k < plain.size(); ++k)
      if (plain[k]) by_size[std::max<std::uint64_t>(trace_.sizes[k], 1)] += plain[k];
    std::uint64_t total = 0;
    for (const auto& [size, count] : by_size) routed_.emplace_back(size, total += count);
  });
  // Operations with a routing size in (min, max]: the counts up to max less those up to min.
  auto up_to = [&](std::uint64_t size) -> std::uint64_t {
    auto it = std::upper_bound(routed_.begin(), routed_.end(), size,
                               [](std::uint64_t s, const auto& entry) { return s < entry.first; });
    return it == routed_.begin() ? 0 : std::prev(it)->second;
  };
  const std::uint64_t routed = up_to(a.max ? *a.max : UINT64_MAX) - up_to(a.min);
  // Every run also scans the whole trace for its operations.
  constexpr double kScan = 1.0 / 8;
  return static_cast<double>(routed) + kScan * static_cast<double>(trace_.operations.size());
}

Evaluation Evaluator::normalize(const simulate::Metrics& m) const {
  Evaluation e;
  e.valid = true;
  e.metrics = m;
  auto ratio = [](double x, double base) { return base > 0 ? x / base : (x > 0 ? 1e9 : 1.0); };
  e.time = model_ != nullptr ? ratio(model_->seconds(m), model_->seconds(kng_))
                            : ratio(static_cast<double>(m.steps), static_cast<double>(kng_.steps));
  e.memory = ratio(static_cast<double>(m.memory_usage), static_cast<double>(kng_.memory_usage));
  e.energy = ratio(m.energy_nj, kng_.energy_nj);
  e.fitness = (weights_.time * e.time + weights_.memory * e.memory + weights_.energy * e.energy) /
              (weights_.time + weights_.memory + weights_.energy);
  return e;
}

std::vector<Evaluation> Evaluator::evaluate(const std::vector<const simulate::DmmSpec*>& specs) {
  // Phenotypes seen before come from the cache; the others are assembled from
  // their allocators' runs (part_simulation.h), simulating in parallel only
  // the allocators no earlier DMM had.
  std::vector<std::string> keys(specs.size());
  std::vector<std::size_t> fresh;  // first index of each new phenotype
  std::vector<std::vector<std::string>> fresh_parts;  // its allocators' keys
  std::map<std::string, std::size_t> seen;
  std::vector<std::pair<std::string, const simulate::AllocatorSpec*>> todo;
  std::map<std::string, bool> queued;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    if (!specs[i]) continue;
    keys[i] = simulate::identity(*specs[i]);
    ++lookups_;
    if (cache_.count(keys[i]) || !seen.emplace(keys[i], i).second) continue;
    fresh.push_back(i);
    fresh_parts.emplace_back();
    for (const auto& a : specs[i]->allocators) {
      std::string key = part_key(a);
      if (!parts_.count(key) && queued.emplace(key, true).second) todo.emplace_back(key, &a);
      fresh_parts.back().push_back(std::move(key));
    }
  }
  run(todo);

  for (std::size_t f = 0; f < fresh.size(); ++f) {
    const std::size_t i = fresh[f];
    std::vector<const simulate::PartResult*> parts;
    bool valid = true;
    for (const std::string& key : fresh_parts[f]) {
      const auto& r = parts_[key];
      if (!r) {
        valid = false;
        break;
      }
      parts.push_back(&*r);
    }
    Evaluation e;
    if (valid) {
      simulate::Metrics m = simulate::combine_parts(parts, trace_);
      m.dmm = specs[i]->name;
      e = normalize(m);
    }
    cache_[keys[i]] = std::move(e);
  }
  std::vector<Evaluation> out(specs.size());
  for (std::size_t i = 0; i < specs.size(); ++i)
    if (specs[i]) out[i] = cache_[keys[i]];
  return out;
}

void Evaluator::run(const std::vector<std::pair<std::string, const simulate::AllocatorSpec*>>& todo) {
  std::vector<std::optional<simulate::PartResult>> results(todo.size());
  util::parallel_for(todo.size(), threads_, [&](std::size_t k) {
    try {
      results[k] = simulate::simulate_part(trace_, *todo[k].second, exact_, limits_);
    } catch (const std::invalid_argument&) {
      results[k].reset();  // the model rejects it for this trace (e.g. an area too small)
    } catch (const std::length_error&) {
      results[k].reset();
    }
  });
  simulations_ += todo.size();
  for (std::size_t k = 0; k < todo.size(); ++k) parts_[todo[k].first] = std::move(results[k]);
}

std::vector<simulate::AllocatorSpec> Evaluator::missing_runs(const std::vector<const simulate::DmmSpec*>& specs) const {
  std::vector<simulate::AllocatorSpec> out;
  std::map<std::string, bool> listed;
  for (const simulate::DmmSpec* spec : specs) {
    if (!spec) continue;
    for (const auto& a : spec->allocators) {
      std::string key = part_key(a);
      if (!parts_.count(key) && listed.emplace(std::move(key), true).second) out.push_back(a);
    }
  }
  return out;
}

namespace {

// A run as bytes: a byte (1: made, 0: none), then fifteen counters, the mechanism and the
// held and resident bytes' changes as native 64-bit words (the processes of one job share
// a byte order).
void put(std::string& out, std::uint64_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); }

std::string encode(const std::optional<simulate::PartResult>& r) {
  std::string out(1, r ? '\1' : '\0');
  if (!r) return out;
  for (std::uint64_t v : {r->steps, r->reads, r->writes, r->splits, r->coalesces, r->system_requests, r->pages_gained,
                          r->purges, r->zeroed_bytes, r->base_resident, r->front_hits, r->front_misses, r->front_kept,
                          r->front_passed, r->line_misses, std::uint64_t{r->kind}})
    put(out, v);
  put(out, r->changes.size());
  for (const auto& c : r->changes) {
    put(out, c.operation);
    put(out, c.held);
    put(out, c.resident);
  }
  return out;
}

std::optional<simulate::PartResult> decode(const std::string& in) {
  std::size_t at = 1;
  auto get = [&] {
    std::uint64_t v;
    if (in.size() < at + sizeof v) throw std::invalid_argument("a shared allocator run is cut");
    std::memcpy(&v, in.data() + at, sizeof v);
    at += sizeof v;
    return v;
  };
  if (in.empty() || (in[0] != '\0' && in[0] != '\1')) throw std::invalid_argument("not a shared allocator run");
  if (in[0] == '\0') return std::nullopt;
  simulate::PartResult r;
  for (std::uint64_t* v : {&r.steps, &r.reads, &r.writes, &r.splits, &r.coalesces, &r.system_requests, &r.pages_gained,
                           &r.purges, &r.zeroed_bytes, &r.base_resident, &r.front_hits, &r.front_misses,
                           &r.front_kept, &r.front_passed, &r.line_misses})
    *v = get();
  const std::uint64_t kind = get();
  if (kind >= dmm::kMechanismKinds) throw std::invalid_argument("a shared allocator run names no mechanism");
  r.kind = static_cast<std::uint8_t>(kind);
  const std::uint64_t n = get();
  if (n > (in.size() - at) / 24) throw std::invalid_argument("a shared allocator run is cut");
  r.changes.resize(n);
  for (auto& c : r.changes) {
    c.operation = get();
    c.held = get();
    c.resident = get();
  }
  if (at != in.size()) throw std::invalid_argument("a shared allocator run has trailing bytes");
  return r;
}

}  // namespace

std::vector<std::string> Evaluator::make_runs(const std::vector<simulate::AllocatorSpec>& allocators) {
  std::vector<std::pair<std::string, const simulate::AllocatorSpec*>> todo;
  for (const auto& a : allocators) todo.emplace_back(part_key(a), &a);
  run(todo);
  std::vector<std::string> out;
  for (const auto& [key, a] : todo) out.push_back(encode(parts_.at(key)));
  return out;
}

void Evaluator::add_run(const simulate::AllocatorSpec& a, const std::string& encoded) {
  parts_[part_key(a)] = decode(encoded);
}

Aggregate parse_aggregate(const std::string& text) {
  if (text == "mean") return Aggregate::kMean;
  if (text == "worst") return Aggregate::kWorst;
  throw std::invalid_argument("--aggregate: '" + text + "' (known: mean, worst)");
}

const char* to_string(Aggregate a) noexcept { return a == Aggregate::kMean ? "mean" : "worst"; }

Evaluation aggregate(std::vector<Evaluation> per_trace, Aggregate how) {
  Evaluation e;
  e.valid = !per_trace.empty() &&
            std::all_of(per_trace.begin(), per_trace.end(), [](const Evaluation& x) { return x.valid; });
  if (e.valid) {
    auto combine = [&](double Evaluation::*field) {
      double acc = how == Aggregate::kMean ? 0.0 : -std::numeric_limits<double>::infinity();
      for (const Evaluation& x : per_trace) acc = how == Aggregate::kMean ? acc + x.*field : std::max(acc, x.*field);
      return how == Aggregate::kMean ? acc / static_cast<double>(per_trace.size()) : acc;
    };
    e.time = combine(&Evaluation::time);
    e.memory = combine(&Evaluation::memory);
    e.energy = combine(&Evaluation::energy);
    e.fitness = combine(&Evaluation::fitness);
  }
  e.per_trace = std::move(per_trace);
  return e;
}

std::vector<Evaluation> MultiEvaluator::evaluate(const std::vector<const simulate::DmmSpec*>& specs) {
  std::vector<std::vector<Evaluation>> by_trace;
  for (Fitness* t : traces_) by_trace.push_back(t->evaluate(specs));
  std::vector<Evaluation> out(specs.size());
  for (std::size_t i = 0; i < specs.size(); ++i) {
    if (!specs[i]) continue;
    std::vector<Evaluation> per;
    for (auto& evals : by_trace) per.push_back(std::move(evals[i]));
    out[i] = aggregate(std::move(per), how_);
  }
  return out;
}

double MultiEvaluator::work(const simulate::AllocatorSpec& a) const {
  double w = 0;
  for (const Fitness* t : traces_) w += t->work(a);
  return w;
}

std::uint64_t MultiEvaluator::simulations() const noexcept {
  std::uint64_t n = 0;
  for (const Fitness* t : traces_) n += t->simulations();
  return n;
}

std::string Evaluator::part_key(const simulate::AllocatorSpec& a) { return simulate::identity(a); }

}  // namespace tailor::search
