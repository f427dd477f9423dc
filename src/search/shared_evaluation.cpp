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

// Waits on `cv` until `ready()`, first yielding the core for up to 200 us
// between checks: an island thread and the main thread hand each other the
// turn about three times a round, and a sleep on the condition variable
// costs each handoff a wake-up (half a millisecond a round on a loaded
// core), where the other thread is usually a few microseconds from done.
template <class Ready>
void wait_until(std::unique_lock<std::mutex>& lock, std::condition_variable& cv, Ready ready) {
  const Clock::time_point until = Clock::now() + std::chrono::microseconds(200);
  while (!ready()) {
    if (Clock::now() >= until) {
      cv.wait(lock, ready);
      return;
    }
    lock.unlock();
    std::this_thread::yield();
    lock.lock();
  }
}

}  // namespace

struct SharedEvaluation::Slot {
  bool pending = false;   // the island waits for `answer`
  bool answered = false;
  bool done = false;      // the island is through the phase
  Asks specs{};           // by kind; nullptr: not asked
  std::array<std::vector<std::string>, 2> keys;  // the specs' cache keys ("" for none)
  std::array<std::vector<Evaluation>, 2> answer;
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
    Asks asks{};
    asks[kind_] = &specs;
    return std::move(shared_.ask(island_, asks)[kind_]);
  }
  // The ranking fitness's and the validator's requests of one island in
  // one round.
  std::pair<std::vector<Evaluation>, std::vector<Evaluation>> evaluate_with(
      const std::vector<const simulate::DmmSpec*>& specs, Fitness& other,
      const std::vector<const simulate::DmmSpec*>& other_specs) override {
    if (kind_ != kRanked || &other != shared_.validator(island_)) return Fitness::evaluate_with(specs, other, other_specs);
    Asks asks{&specs, &other_specs};
    std::array<std::vector<Evaluation>, 2> answers = shared_.ask(island_, asks);
    return {std::move(answers[kRanked]), std::move(answers[kValidator])};
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

// The same for a fitness of `kind` whose components (traces) one process
// holds each: such a component is a leaf itself.
Evaluation SharedEvaluation::combined_top(unsigned kind, std::vector<Evaluation>& leaves) {
  Fitness& f = *fitness_[kind];
  std::size_t next = 0;
  if (holders_.empty()) return combined(f, leaves, next);
  std::vector<Evaluation> parts;
  for (std::size_t c = 0; c < f.components(); ++c)
    parts.push_back(holders_[c] >= 0 ? std::move(leaves.at(next++)) : combined(f.component(c), leaves, next));
  return f.combine(std::move(parts));
}

SharedEvaluation::SharedEvaluation(Ring& ring, Fitness& ranked, Fitness* validator, std::size_t islands,
                                   const Sharing& sharing)
    : ring_(ring), fitness_{&ranked, validator}, sync_(std::make_unique<Sync>()), threads_(sharing.threads),
      same_islands_(sharing.same_islands), holders_(sharing.holders) {
  for (unsigned kind : {kRanked, kValidator}) {
    if (!fitness_[kind]) continue;
    Fitness& f = *fitness_[kind];
    if (!holders_.empty() && holders_.size() != f.components())
      throw std::invalid_argument("SharedEvaluation: one holder per component (trace) of the fitness");
    if (holders_.empty()) {
      leaves_of(f, leaves_[kind]);
      holder_[kind].assign(leaves_[kind].size(), -1);
      continue;
    }
    for (std::size_t c = 0; c < f.components(); ++c) {
      if (holders_[c] >= static_cast<int>(ring_.size()))
        throw std::invalid_argument("SharedEvaluation: a trace's holder is not a process of the ring");
      if (holders_[c] >= 0) leaves_[kind].push_back(&f.component(c));
      else leaves_of(f.component(c), leaves_[kind]);
      holder_[kind].resize(leaves_[kind].size(), holders_[c]);
    }
  }
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

std::array<std::vector<Evaluation>, 2> SharedEvaluation::ask(std::size_t island, const Asks& specs) {
  std::unique_lock lock(sync_->mu);
  if (!slots_) throw std::logic_error("SharedEvaluation: an island evaluates outside run()");
  Slot& s = slots_[island];
  s.specs = specs;
  s.answered = false;
  s.pending = true;
  sync_->to_main.notify_one();
  wait_until(lock, sync_->to_islands, [&] { return s.answered || sync_->failed; });
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
  double work;                  // Fitness::work: a run's, or a DMM's allocators' summed
  int holder = -1;              // the process that holds its trace and measures it (-1: from the queue)
};

// What this process's islands ask: each waiting island's DMMs as keys
// (simulate::identity; its slots are this thread's until answered), and in
// the message the specs of those not measured yet (every process has the
// same measures); "through" when none waits. With the same islands on every
// process, only the keys.
std::string SharedEvaluation::asks_of(std::vector<Slot>& slots) {
  nlohmann::json asks = nlohmann::json::array();
  bool through = true;
  for (Slot& s : slots) {
    if (s.done) continue;
    through = false;
    for (unsigned kind : {kRanked, kValidator}) {
      const auto* specs = s.specs[kind];
      s.keys[kind].assign(specs ? specs->size() : 0, std::string());
      if (!specs) continue;
      nlohmann::json keys = nlohmann::json::array();
      for (std::size_t i = 0; i < specs->size(); ++i) {
        if (!(*specs)[i]) continue;
        s.keys[kind][i] = simulate::identity(*(*specs)[i]);
        if (!same_islands_ && !measured_[kind].count(s.keys[kind][i]))
          keys.push_back(simulate::to_json(*(*specs)[i]).dump());  // the spec itself, for the others
      }
      if (!same_islands_) asks.push_back({{"kind", kind}, {"keys", std::move(keys)}});
    }
  }
  if (same_islands_) return {};
  return nlohmann::json{{"through", through}, {"asks", asks}}.dump();
}

// With the same islands on every process: the DMMs this process's islands
// ask that are not measured, each once (the same on every process, which
// asks the same); true when the islands are through.
bool SharedEvaluation::own_needs(const std::vector<Slot>& slots, std::vector<Need>& needs) {
  std::set<std::pair<unsigned, std::string>> seen;
  bool through = true;
  for (const Slot& s : slots) {
    if (s.done) continue;
    through = false;
    for (unsigned kind : {kRanked, kValidator})
      for (std::size_t i = 0; i < s.keys[kind].size(); ++i) {
        const std::string& key = s.keys[kind][i];
        if (key.empty() || measured_[kind].count(key) || !seen.emplace(kind, key).second) continue;
        needs.push_back({kind, key, *(*s.specs[kind])[i], {}});
      }
  }
  return through;
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
        simulate::DmmSpec spec = simulate::parse_dmm_spec(nlohmann::json::parse(k.get<std::string>()), "a shared DMM");
        std::string key = simulate::identity(spec);
        if (measured_[kind].count(key) || !seen.emplace(kind, key).second) continue;
        needs.push_back({kind, std::move(key), std::move(spec), {}});
      }
    }
  }
  return everyone_through;
}

// The round's units: the runs of allocators no process has made (for an
// Evaluator leaf) or the DMMs (for another), each with its work
// (Fitness::work: the operations it goes through), the costliest first by
// the cost model (cost_of). The same list on every process.
std::vector<SharedEvaluation::Unit> SharedEvaluation::units_of(std::vector<Need>& needs,
                                                               const std::vector<Group>& groups) const {
  std::vector<Unit> units;
  for (std::size_t i = 0; i < needs.size(); ++i) needs[i].per_component.resize(leaves_[needs[i].kind].size());
  std::vector<Unit> held;  // measured by their holder, not handed out
  for (const auto& [kind, c] : groups) {
    Fitness& f = *leaves_[kind][c];
    std::vector<const simulate::DmmSpec*> specs;
    for (const Need& need : needs)
      if (need.kind == kind) specs.push_back(&need.spec);
    if (specs.empty()) continue;
    if (const int holder = holder_[kind][c]; holder >= 0) {
      for (std::size_t i = 0; i < needs.size(); ++i)
        if (needs[i].kind == kind) held.push_back({kind, c, i, {}, false, 0, holder});
    } else if (auto* e = dynamic_cast<Evaluator*>(&f)) {
      for (simulate::AllocatorSpec& a : e->missing_runs(specs)) {
        const double work = f.work(a);
        units.push_back({kind, c, 0, std::move(a), true, work});
      }
    } else {
      for (std::size_t i = 0; i < needs.size(); ++i) {
        if (needs[i].kind != kind) continue;
        double work = 0;
        for (const auto& a : needs[i].spec.allocators) work += f.work(a);
        units.push_back({kind, c, i, {}, false, work});
      }
    }
  }
  std::vector<double> cost(units.size());
  for (std::size_t i = 0; i < units.size(); ++i) cost[i] = cost_of(units[i]);
  std::vector<std::size_t> order(units.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return cost[x] > cost[y]; });
  std::vector<Unit> sorted;
  sorted.reserve(units.size() + held.size());
  for (std::size_t i : order) sorted.push_back(std::move(units[i]));
  for (Unit& u : held) sorted.push_back(std::move(u));
  return sorted;
}

// The kinds of work a unit is, for the cost model, from the narrowest: an
// allocator's mechanism, structure, fit, policy, coalescing and splitting on
// one view of one trace (a first-fit list walks where a segregated one does
// not, and walks longer on a larger heap), then without the last three,
// then any unit on that view, then any unit at all. A whole DMM has
// mechanism -1.
std::array<SharedEvaluation::CostClass, 4> SharedEvaluation::cost_classes(const Unit& u) {
  constexpr int kAny = -2;
  const int kind = static_cast<int>(u.kind), c = static_cast<int>(u.component);
  const simulate::AllocatorSpec& a = u.run;
  const int mechanism = u.is_run ? static_cast<int>(a.mechanism) : -1;
  const int structure = u.is_run ? static_cast<int>(a.structure) : -1, fit = u.is_run ? static_cast<int>(a.fit) : -1;
  return {CostClass{kind, c, mechanism, structure, fit, u.is_run ? static_cast<int>(a.policy) : -1,
                    u.is_run ? a.coalesce : -1, u.is_run ? a.split : -1},
          CostClass{kind, c, mechanism, structure, fit, kAny, kAny, kAny},
          CostClass{kind, c, kAny, kAny, kAny, kAny, kAny, kAny},
          CostClass{kAny, kAny, kAny, kAny, kAny, kAny, kAny, kAny}};
}

// A unit's predicted seconds: its work at the seconds per operation measured
// so far for the narrowest of its classes that has any (the work itself
// before any unit is measured). Every process learns the same (learn()).
double SharedEvaluation::cost_of(const Unit& u) const {
  for (const CostClass& k : cost_classes(u))
    if (auto it = rates_.find(k); it != rates_.end() && it->second.work > 0)
      return u.work * it->second.seconds / it->second.work;
  return u.work;
}

void SharedEvaluation::learn(const Unit& u, double seconds) {
  for (const CostClass& k : cost_classes(u)) {
    Rate& r = rates_[k];
    r.seconds += seconds;
    r.work += u.work;
  }
}

// The units are handed out as they are done: each process takes the next
// `threads_` of them from a counter the processes share (Ring::ticket, one
// sided: nobody waits to hand them out; the counter only grows, and a
// round's tickets start where the last round's moved it, which every
// process learns from the others' measures), measures them (runs made and kept,
// DMMs measured) and takes more until none is left, so that a round ends
// when its work does, whichever process was faster or had the costlier
// units. Then every process sends what it measured (each with its unit's
// index and seconds) to every other.
void SharedEvaluation::exchange_measures(const std::vector<Unit>& units, std::vector<Need>& needs, TimePoint& t0) {
  auto fitness_of = [&](unsigned kind, std::size_t c) -> Fitness& { return *leaves_[kind][c]; };
  const unsigned processes = ring_.size(), me = ring_.rank();
  const std::uint64_t batch = std::max(1u, threads_);
  std::uint64_t taken = 0;  // tickets this process took this round
  std::vector<std::string> mine;
  auto put = [&](std::size_t index, double seconds, std::string measure) {
    std::string item(sizeof(std::uint64_t) + sizeof(double), '\0');
    const std::uint64_t i = index;
    std::memcpy(item.data(), &i, sizeof i);
    std::memcpy(item.data() + sizeof i, &seconds, sizeof seconds);
    mine.push_back(std::move(item += measure));
  };
  // The units of the traces this process holds first (as one batch), then
  // the queue's.
  const std::size_t queued = static_cast<std::size_t>(
      std::find_if(units.begin(), units.end(), [](const Unit& u) { return u.holder >= 0; }) - units.begin());
  std::vector<std::size_t> mine_held;
  for (std::size_t i = queued; i < units.size(); ++i)
    if (units[i].holder == static_cast<int>(me)) mine_held.push_back(i);
  for (bool holding = !mine_held.empty();; holding = false) {
    std::vector<std::size_t> batch_units;
    if (holding) {
      batch_units = mine_held;
    } else {
      if (queued == 0) break;
      costs_.bookkeeping += since(t0);
      const std::uint64_t ticket = ring_.ticket(batch);
      costs_.exchanging += since(t0);
      taken += batch;
      if (ticket < tickets_) throw std::logic_error("SharedEvaluation: a ticket of an earlier round");
      if (ticket - tickets_ >= queued) break;
      const std::size_t first = static_cast<std::size_t>(ticket - tickets_);
      for (std::size_t i = first; i < std::min<std::size_t>(queued, first + batch); ++i) batch_units.push_back(i);
    }
    // The batch's units of each fitness together: runs in parallel.
    std::set<Group> batch_groups;
    for (std::size_t i : batch_units) batch_groups.emplace(units[i].kind, units[i].component);
    for (const auto& [kind, c] : batch_groups) {
      Fitness& f = fitness_of(kind, c);
      std::vector<std::size_t> runs, dmms;
      for (std::size_t i : batch_units)
        if (units[i].kind == kind && units[i].component == c) (units[i].is_run ? runs : dmms).push_back(i);
      auto measured = [&](const std::vector<std::size_t>& which, std::vector<std::string> measures) {
        // The time of a batch shared among its units by their work.
        const double seconds = since(t0);
        costs_.measuring += seconds;
        costs_.measured += which.size();
        double work = 0;
        for (std::size_t i : which) work += units[i].work;
        for (std::size_t k = 0; k < which.size(); ++k)
          put(which[k], work > 0 ? seconds * units[which[k]].work / work : seconds / static_cast<double>(which.size()), std::move(measures[k]));
      };
      costs_.bookkeeping += since(t0);
      if (!runs.empty()) {
        std::vector<simulate::AllocatorSpec> specs;
        for (std::size_t i : runs) specs.push_back(units[i].run);
        measured(runs, dynamic_cast<Evaluator&>(f).make_runs(specs));
      }
      if (!dmms.empty()) {
        std::vector<const simulate::DmmSpec*> specs;
        for (std::size_t i : dmms) specs.push_back(&needs[units[i].need].spec);
        std::vector<std::string> out;
        for (const Evaluation& e : f.evaluate(specs)) out.push_back(evaluation_to_json(e).dump());
        measured(dmms, std::move(out));
      }
    }
  }
  // First, how far this process moved the counter: the next round's
  // tickets start where every process's together moved it.
  std::string moved(sizeof taken, '\0');
  std::memcpy(moved.data(), &taken, sizeof taken);
  mine.insert(mine.begin(), std::move(moved));
  const std::string measures = frame(mine);
  costs_.bytes += measures.size();
  costs_.bookkeeping += since(t0);
  const std::vector<std::string> results = ring_.allgather(measures);
  costs_.exchanging += since(t0);
  std::vector<double> seconds(units.size(), -1);
  for (unsigned r = 0; r < processes; ++r) {
    std::vector<std::string> items = unframe(results.at(r));
    std::uint64_t moved_by = 0;
    if (items.empty() || items.front().size() != sizeof moved_by) throw std::runtime_error("a process's measures are cut");
    std::memcpy(&moved_by, items.front().data(), sizeof moved_by);
    tickets_ += moved_by;
    for (std::size_t k = 1; k < items.size(); ++k) {
      std::string& item = items[k];
      std::uint64_t i = 0;
      double s = 0;
      if (item.size() < sizeof i + sizeof s) throw std::runtime_error("a process's measures are cut");
      std::memcpy(&i, item.data(), sizeof i);
      std::memcpy(&s, item.data() + sizeof i, sizeof s);
      if (i >= units.size() || seconds[i] >= 0 || (units[i].holder >= 0 && units[i].holder != static_cast<int>(r)))
        throw std::runtime_error("a process sent a measure of a unit it was not handed");
      seconds[i] = std::max(0.0, s);
      const Unit& u = units[i];
      const std::string measure = item.substr(sizeof i + sizeof s);
      if (!u.is_run) needs[u.need].per_component[u.component] = evaluation_from_json(nlohmann::json::parse(measure));
      else if (r != me) dynamic_cast<Evaluator&>(fitness_of(u.kind, u.component)).add_run(u.run, measure);
    }
  }
  // Learned in the units' order, so that every process's cost model is the same.
  for (std::size_t i = 0; i < units.size(); ++i) {
    if (seconds[i] < 0) throw std::runtime_error("no process sent the measure of a unit of work");
    if (units[i].holder < 0) learn(units[i], seconds[i]);
  }
  costs_.bookkeeping += since(t0);
}

// The DMMs of Evaluator components, assembled here from the runs, and every
// needed DMM's measure combined from its components'.
void SharedEvaluation::assemble(std::vector<Need>& needs, const std::vector<Group>& groups) {
  for (const auto& [kind, c] : groups) {
    auto* e = dynamic_cast<Evaluator*>(leaves_[kind][c]);
    if (!e || holder_[kind][c] >= 0) continue;
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
    for (unsigned kind : {kRanked, kValidator}) {
      s.answer[kind].assign(s.keys[kind].size(), Evaluation{});
      for (std::size_t i = 0; i < s.keys[kind].size(); ++i)
        if (!s.keys[kind][i].empty()) s.answer[kind][i] = measured_[kind].at(s.keys[kind][i]);
    }
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
    wait_until(lock, sync_->to_main, [&] {
      for (const Slot& s : slots)
        if (!s.done && !(s.pending && !s.answered)) return false;
      return true;
    });
  }
  costs_.waiting += since(t0);
  const std::string message = asks_of(slots);
  std::vector<Need> needs;
  bool through = false;
  ++costs_.rounds;
  if (same_islands_) {
    through = own_needs(slots, needs);
  } else {
    costs_.bytes += message.size();
    costs_.bookkeeping += since(t0);
    const std::vector<std::string> parts = ring_.allgather(message);
    costs_.exchanging += since(t0);
    through = collect_needs(parts, needs);
  }
  if (through) {
    costs_.bookkeeping += since(t0);
    return false;
  }
  std::vector<Group> groups;  // in the order units are sent
  for (unsigned kind : {kRanked, kValidator})
    for (std::size_t c = 0; c < leaves_[kind].size(); ++c) groups.emplace_back(kind, c);
  const std::vector<Unit> units = units_of(needs, groups);
  if (!units.empty()) exchange_measures(units, needs, t0);
  if (!needs.empty()) {
    assemble(needs, groups);
    costs_.assembling += since(t0);
    for (unsigned kind : {kRanked, kValidator})
      if (fitness_[kind]) sync_->simulations[kind] = fitness_[kind]->simulations();
    for (Need& need : needs) measured_[need.kind][need.key] = combined_top(need.kind, need.per_component);
  }
  answer(slots);
  costs_.bookkeeping += since(t0);
  return true;
}

}  // namespace tailor::search
