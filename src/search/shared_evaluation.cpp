// SPDX-License-Identifier: MIT
// Evaluations shared out among processes (shared_evaluation.h): the
// islands' threads hand their requests to the calling thread, which alone
// talks to the other processes (the Ring) and runs the simulations.
#include "search/shared_evaluation.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <thread>

#include "simulate/dmm_spec.h"
#include "util/parallel_for.h"

namespace tailor::search {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point& t0) {
  const Clock::time_point now = Clock::now();
  const double s = std::chrono::duration<double>(now - t0).count();
  t0 = now;
  return s;
}

// Byte strings in one message: a count, then each one's length and bytes.
std::string frame(const std::vector<std::string>& items) {
  std::string out;
  auto put = [&](std::uint64_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); };
  put(items.size());
  for (const std::string& s : items) {
    put(s.size());
    out += s;
  }
  return out;
}

std::vector<std::string> unframe(const std::string& in) {
  std::size_t at = 0;
  auto get = [&] {
    std::uint64_t v;
    if (in.size() - at < sizeof v) throw std::runtime_error("a process's measures are cut");
    std::memcpy(&v, in.data() + at, sizeof v);
    at += sizeof v;
    return v;
  };
  std::vector<std::string> items(get());
  for (std::string& s : items) {
    const std::uint64_t n = get();
    if (in.size() - at < n) throw std::runtime_error("a process's measures are cut");
    s.assign(in, at, n);
    at += n;
  }
  return items;
}

}  // namespace

struct SharedEvaluation::Slot {
  bool pending = false;   // the island waits for `answer`
  bool answered = false;
  bool done = false;      // the island is through the phase
  unsigned kind = kRanked;
  const std::vector<const simulate::DmmSpec*>* specs = nullptr;
  std::vector<std::string> keys;  // the specs' cache keys ("" for none)
  std::vector<Evaluation> answer;
  std::exception_ptr error;
};

struct SharedEvaluation::Sync {
  std::mutex mu;
  std::condition_variable to_main, to_islands;
  bool failed = false;  // the exchange failed: the islands stop at their next request
  std::atomic<std::uint64_t> simulations[2] = {0, 0};
};

class SharedEvaluation::Proxy : public Fitness {
 public:
  Proxy(SharedEvaluation& shared, std::size_t island, unsigned kind) : shared_(shared), island_(island), kind_(kind) {}
  std::vector<Evaluation> evaluate(const std::vector<const simulate::DmmSpec*>& specs) override {
    return shared_.ask(island_, kind_, specs);
  }
  // The count as of the last round (the fitness itself is busy on the calling thread).
  std::uint64_t simulations() const noexcept override { return shared_.sync_->simulations[kind_].load(); }

 private:
  SharedEvaluation& shared_;
  std::size_t island_;
  unsigned kind_;
};

namespace {

// The fitnesses a fitness is made of, depth first, down to those made of
// none (the units of work).
void leaves_of(Fitness& f, std::vector<Fitness*>& out) {
  if (f.components() == 0) {
    out.push_back(&f);
    return;
  }
  for (std::size_t c = 0; c < f.components(); ++c) leaves_of(f.component(c), out);
}

}  // namespace

// The evaluation of `f` from its leaves' (in leaves_of's order, from `next`).
Evaluation SharedEvaluation::combined(Fitness& f, std::vector<Evaluation>& leaves, std::size_t& next) {
  if (f.components() == 0) return std::move(leaves.at(next++));
  std::vector<Evaluation> parts;
  for (std::size_t c = 0; c < f.components(); ++c) parts.push_back(combined(f.component(c), leaves, next));
  return f.combine(std::move(parts));
}

SharedEvaluation::SharedEvaluation(Ring& ring, Fitness& ranked, Fitness* validator, std::size_t islands)
    : ring_(ring), fitness_{&ranked, validator}, sync_(std::make_unique<Sync>()) {
  for (unsigned kind : {kRanked, kValidator})
    if (fitness_[kind]) leaves_of(*fitness_[kind], leaves_[kind]);
  for (unsigned kind : {kRanked, kValidator})
    for (std::size_t k = 0; k < islands; ++k) proxies_[kind].push_back(std::make_unique<Proxy>(*this, k, kind));
  sync_->simulations[kRanked] = ranked.simulations();
  if (validator) sync_->simulations[kValidator] = validator->simulations();
}

SharedEvaluation::~SharedEvaluation() = default;

Fitness& SharedEvaluation::ranked(std::size_t k) { return *proxies_[kRanked].at(k); }
Fitness* SharedEvaluation::validator(std::size_t k) {
  return fitness_[kValidator] ? proxies_[kValidator].at(k).get() : nullptr;
}

std::vector<Evaluation> SharedEvaluation::ask(std::size_t island, unsigned kind,
                                              const std::vector<const simulate::DmmSpec*>& specs) {
  std::unique_lock lock(sync_->mu);
  if (!slots_) throw std::logic_error("SharedEvaluation: an island evaluates outside run()");
  Slot& s = slots_[island];
  s.kind = kind;
  s.specs = &specs;
  s.answered = false;
  s.pending = true;
  sync_->to_main.notify_one();
  sync_->to_islands.wait(lock, [&] { return s.answered || sync_->failed; });
  s.pending = false;
  if (!s.answered) throw std::runtime_error("the exchange of evaluations with the other processes failed");
  return std::move(s.answer);
}

void SharedEvaluation::run(const std::function<void(std::size_t)>& phase) {
  const std::size_t n = proxies_[kRanked].size();
  std::vector<Slot> slots(n);
  {
    std::lock_guard lock(sync_->mu);
    slots_ = slots.data();
    sync_->failed = false;
  }
  util::ParallelFor islands(n, 0, [&](std::size_t k) {  // a thread per island: they run rounds together
    std::exception_ptr error;
    try {
      phase(k);
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard lock(sync_->mu);
    slots[k].error = error;
    slots[k].done = true;
    sync_->to_main.notify_one();
  });
  std::exception_ptr failure;
  try {
    while (round(slots)) {
    }
  } catch (...) {
    failure = std::current_exception();
    std::lock_guard lock(sync_->mu);
    sync_->failed = true;
    sync_->to_islands.notify_all();
  }
  islands.join();
  {
    std::lock_guard lock(sync_->mu);
    slots_ = nullptr;
  }
  if (failure) std::rethrow_exception(failure);
  for (const Slot& s : slots)
    if (s.error) std::rethrow_exception(s.error);
}

struct SharedEvaluation::Need {
  unsigned kind;
  std::string key;
  simulate::DmmSpec spec;
  std::vector<Evaluation> per_component;
};

// A fitness made of others (one per trace, say; or a trace's validation
// sample and prefix) is measured by the fitnesses it is made of, down to
// those made of none (leaves_). For a leaf that is an Evaluator, the units of work are
// the runs of allocators it lacks: every process gets every run, and
// then assembles every DMM itself (cheap next to the runs), so no
// allocator is run twice and one costly DMM is still shared out. For
// another fitness, a unit is a DMM, measured where it is assigned.
struct SharedEvaluation::Unit {
  unsigned kind;
  std::size_t component;
  std::size_t need;             // a DMM unit's
  simulate::AllocatorSpec run;  // a run unit's
  bool is_run;
  unsigned owner = 0;
};

// What this process's islands ask: each waiting island's DMMs as keys (its
// slots are this thread's until answered); "through" when none waits.
std::string SharedEvaluation::asks_of(std::vector<Slot>& slots) {
  nlohmann::json asks = nlohmann::json::array();
  bool through = true;
  for (Slot& s : slots) {
    if (s.done) continue;
    through = false;
    s.keys.assign(s.specs->size(), std::string());
    nlohmann::json keys = nlohmann::json::array();
    for (std::size_t i = 0; i < s.specs->size(); ++i) {
      if ((*s.specs)[i]) s.keys[i] = simulate::to_json(*(*s.specs)[i]).dump();
      keys.push_back(s.keys[i]);
    }
    asks.push_back({{"kind", s.kind}, {"keys", std::move(keys)}});
  }
  return nlohmann::json{{"through", through}, {"asks", asks}}.dump();
}

// The DMMs no process has measured, in rank order, each once; true when
// every process's islands are through.
bool SharedEvaluation::collect_needs(const std::vector<std::string>& parts, std::vector<Need>& needs) {
  std::set<std::pair<unsigned, std::string>> seen;
  bool everyone_through = true;
  for (const std::string& part : parts) {
    const nlohmann::json p = nlohmann::json::parse(part);
    everyone_through &= p.at("through").get<bool>();
    for (const auto& ask : p.at("asks")) {
      const unsigned kind = ask.at("kind").get<unsigned>();
      if (kind > kValidator || !fitness_[kind]) throw std::runtime_error("a process asked for an unknown fitness");
      for (const auto& k : ask.at("keys")) {
        std::string key = k.get<std::string>();
        if (key.empty() || measured_[kind].count(key) || !seen.emplace(kind, key).second) continue;
        simulate::DmmSpec spec = simulate::parse_dmm_spec(nlohmann::json::parse(key), "a shared DMM");
        needs.push_back({kind, std::move(key), std::move(spec), {}});
      }
    }
  }
  return everyone_through;
}

// The round's units, each given to the process it adds least to, in
// proportion to the operations each allocator is routed (Fitness::work): a
// run; or for a DMM, a run of each allocator that process has not run for
// that component plus the assembly (about a quarter of a run). The same
// choices on every process.
std::vector<SharedEvaluation::Unit> SharedEvaluation::plan_units(std::vector<Need>& needs,
                                                                 const std::vector<Group>& groups) {
  auto fitness_of = [&](unsigned kind, std::size_t c) -> Fitness& { return *leaves_[kind][c]; };
  std::vector<Unit> units;
  for (std::size_t i = 0; i < needs.size(); ++i) needs[i].per_component.resize(leaves_[needs[i].kind].size());
  for (const auto& [kind, c] : groups) {
    std::vector<const simulate::DmmSpec*> specs;
    for (const Need& need : needs)
      if (need.kind == kind) specs.push_back(&need.spec);
    if (specs.empty()) continue;
    if (auto* e = dynamic_cast<Evaluator*>(&fitness_of(kind, c))) {
      for (simulate::AllocatorSpec& a : e->missing_runs(specs)) units.push_back({kind, c, 0, std::move(a), true});
    } else {
      for (std::size_t i = 0; i < needs.size(); ++i)
        if (needs[i].kind == kind) units.push_back({kind, c, i, {}, false});
    }
  }
  const unsigned processes = ring_.size();
  constexpr double kAssembly = 0.25;
  std::vector<double> load(processes, 0);
  // Runs first, the costliest first, each to the least loaded process (the
  // longest-processing-time rule), so that the last ones even the loads out.
  std::vector<std::pair<double, std::size_t>> by_work;
  for (std::size_t i = 0; i < units.size(); ++i)
    if (units[i].is_run) by_work.emplace_back(fitness_of(units[i].kind, units[i].component).work(units[i].run), i);
  std::stable_sort(by_work.begin(), by_work.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  for (const auto& [work, i] : by_work) {
    units[i].owner = static_cast<unsigned>(std::min_element(load.begin(), load.end()) - load.begin());
    load[units[i].owner] += work;
  }
  for (Unit& u : units) {
    if (u.is_run) continue;
    Fitness& f = fitness_of(u.kind, u.component);
    std::vector<std::pair<std::string, double>> allocators;
    const std::string where = std::to_string(u.kind) + "/" + std::to_string(u.component) + "/";
    for (const auto& a : needs[u.need].spec.allocators) allocators.emplace_back(where + Evaluator::part_key(a), f.work(a));
    double best = 0;
    for (unsigned r = 0; r < processes; ++r) {
      double cost = 0;
      for (const auto& [key, work] : allocators) {
        auto it = ran_.find(key);
        cost += work * (it == ran_.end() || !it->second[r] ? 1 + kAssembly : kAssembly);
      }
      if (r == 0 || load[r] + cost < best) {
        best = load[r] + cost;
        u.owner = r;
      }
    }
    load[u.owner] = best;
    for (const auto& [key, work] : allocators) {
      std::vector<bool>& ran = ran_[key];
      ran.resize(processes, false);
      ran[u.owner] = true;
    }
  }
  return units;
}

// Measures this process's units, grouped by fitness and component (the runs
// made and the DMMs measured, as byte strings), and takes every other
// process's.
void SharedEvaluation::exchange_measures(const std::vector<Unit>& units, std::vector<Need>& needs,
                                         const std::vector<Group>& groups, TimePoint& t0) {
  auto fitness_of = [&](unsigned kind, std::size_t c) -> Fitness& { return *leaves_[kind][c]; };
  const unsigned processes = ring_.size(), me = ring_.rank();
  std::vector<std::string> mine;
  for (const auto& [kind, c] : groups) {
    Fitness& f = fitness_of(kind, c);
    std::vector<simulate::AllocatorSpec> runs;
    std::vector<const simulate::DmmSpec*> specs;
    for (const Unit& u : units)
      if (u.owner == me && u.kind == kind && u.component == c) {
        if (u.is_run) runs.push_back(u.run);
        else specs.push_back(&needs[u.need].spec);
      }
    costs_.bookkeeping += since(t0);
    if (!runs.empty()) {
      for (std::string& r : dynamic_cast<Evaluator&>(f).make_runs(runs)) mine.push_back(std::move(r));
      costs_.measured += runs.size();
    }
    if (!specs.empty()) {
      for (const Evaluation& e : f.evaluate(specs)) mine.push_back(evaluation_to_json(e).dump());
      costs_.measured += specs.size();
    }
    costs_.measuring += since(t0);
  }
  const std::string measures = frame(mine);
  costs_.bytes += measures.size();
  costs_.bookkeeping += since(t0);
  const std::vector<std::string> results = ring_.allgather(measures);
  costs_.exchanging += since(t0);
  for (unsigned r = 0; r < processes; ++r) {
    const std::vector<std::string> theirs = unframe(results.at(r));
    std::size_t j = 0;
    for (const auto& [kind, c] : groups)
      for (const Unit& u : units) {
        if (u.owner != r || u.kind != kind || u.component != c) continue;
        if (j == theirs.size()) throw std::runtime_error("a process sent fewer measures than it was asked for");
        const std::string& item = theirs[j++];
        if (!u.is_run) needs[u.need].per_component[c] = evaluation_from_json(nlohmann::json::parse(item));
        else if (r != me) dynamic_cast<Evaluator&>(fitness_of(kind, c)).add_run(u.run, item);
      }
    if (j != theirs.size()) throw std::runtime_error("a process sent more measures than it was asked for");
  }
  costs_.bookkeeping += since(t0);
}

// The DMMs of Evaluator components, assembled here from the runs, and every
// needed DMM's measure combined from its components'.
void SharedEvaluation::assemble(std::vector<Need>& needs, const std::vector<Group>& groups) {
  for (const auto& [kind, c] : groups) {
    auto* e = dynamic_cast<Evaluator*>(leaves_[kind][c]);
    if (!e) continue;
    std::vector<const simulate::DmmSpec*> specs;
    std::vector<std::size_t> which;
    for (std::size_t i = 0; i < needs.size(); ++i)
      if (needs[i].kind == kind) {
        specs.push_back(&needs[i].spec);
        which.push_back(i);
      }
    if (specs.empty()) continue;
    std::vector<Evaluation> evals = e->evaluate(specs);
    for (std::size_t k = 0; k < which.size(); ++k) needs[which[k]].per_component[c] = std::move(evals[k]);
  }
}

// Answers this process's waiting islands and wakes them.
void SharedEvaluation::answer(std::vector<Slot>& slots) {
  std::lock_guard lock(sync_->mu);
  for (Slot& s : slots) {
    if (s.done) continue;
    s.answer.assign(s.keys.size(), Evaluation{});
    for (std::size_t i = 0; i < s.keys.size(); ++i)
      if (!s.keys[i].empty()) s.answer[i] = measured_[s.kind].at(s.keys[i]);
    s.answered = true;
  }
  sync_->to_islands.notify_all();
}

// One round: every process says what its waiting islands ask (or that they
// are through), the DMMs nobody has measured are shared out and simulated,
// and the measures go to every process, which answers its islands.
bool SharedEvaluation::round(std::vector<Slot>& slots) {
  Clock::time_point t0 = Clock::now();
  {
    std::unique_lock lock(sync_->mu);
    sync_->to_main.wait(lock, [&] {
      for (const Slot& s : slots)
        if (!s.done && !(s.pending && !s.answered)) return false;
      return true;
    });
  }
  costs_.waiting += since(t0);
  const std::string message = asks_of(slots);
  costs_.bytes += message.size();
  costs_.bookkeeping += since(t0);
  const std::vector<std::string> parts = ring_.allgather(message);
  costs_.exchanging += since(t0);
  ++costs_.rounds;

  std::vector<Need> needs;
  if (collect_needs(parts, needs)) {
    costs_.bookkeeping += since(t0);
    return false;
  }
  std::vector<Group> groups;  // in the order units are sent
  for (unsigned kind : {kRanked, kValidator})
    for (std::size_t c = 0; c < leaves_[kind].size(); ++c) groups.emplace_back(kind, c);
  const std::vector<Unit> units = plan_units(needs, groups);
  if (!units.empty()) exchange_measures(units, needs, groups, t0);
  if (!needs.empty()) {
    assemble(needs, groups);
    costs_.measuring += since(t0);
    for (unsigned kind : {kRanked, kValidator})
      if (fitness_[kind]) sync_->simulations[kind] = fitness_[kind]->simulations();
    for (Need& need : needs) {
      std::size_t next = 0;
      measured_[need.kind][need.key] = combined(*fitness_[need.kind], need.per_component, next);
    }
  }
  answer(slots);
  costs_.bookkeeping += since(t0);
  return true;
}

}  // namespace tailor::search
