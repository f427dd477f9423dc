// SPDX-License-Identifier: MIT
// Evaluations shared out among processes (shared_evaluation.h): the
// islands' threads hand their requests to the calling thread, which alone
// talks to the other processes (the Ring) and runs the simulations.
#include "shared_evaluation.h"

#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <thread>

#include "dmm_spec.h"

namespace tailor::search {

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

SharedEvaluation::SharedEvaluation(Ring& ring, Fitness& ranked, Fitness* validator, std::size_t islands)
    : ring_(ring), fitness_{&ranked, validator}, sync_(std::make_unique<Sync>()) {
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
  std::vector<std::thread> threads;
  threads.reserve(n);
  for (std::size_t k = 0; k < n; ++k)
    threads.emplace_back([&, k] {
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
  for (auto& t : threads) t.join();
  {
    std::lock_guard lock(sync_->mu);
    slots_ = nullptr;
  }
  if (failure) std::rethrow_exception(failure);
  for (const Slot& s : slots)
    if (s.error) std::rethrow_exception(s.error);
}

// One round: every process says what its waiting islands ask (or that they
// are through), the DMMs nobody has measured are shared out and simulated,
// and the measures go to every process, which answers its islands.
bool SharedEvaluation::round(std::vector<Slot>& slots) {
  {
    std::unique_lock lock(sync_->mu);
    sync_->to_main.wait(lock, [&] {
      for (const Slot& s : slots)
        if (!s.done && !(s.pending && !s.answered)) return false;
      return true;
    });
  }
  // The islands wait (or are through): their slots are this thread's until answered.
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
  const std::vector<std::string> parts = ring_.allgather(nlohmann::json{{"through", through}, {"asks", asks}}.dump());
  ++rounds_;

  // The DMMs no process has measured, in rank order, each once.
  struct Need {
    unsigned kind;
    std::string key;
    simulate::DmmSpec spec;
    unsigned owner = 0;
  };
  std::vector<Need> needs;
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
        needs.push_back({kind, std::move(key), std::move(spec)});
      }
    }
  }
  if (everyone_through) return false;

  // Each to the process it adds least to: an assembly, plus a simulation per
  // allocator that process has not run (the same choice on every process).
  const unsigned processes = ring_.size(), me = ring_.rank();
  constexpr double kAssembly = 1, kSimulation = 3;
  std::vector<double> load(processes, 0);
  for (Need& need : needs) {
    std::vector<std::string> allocators;
    for (const auto& a : need.spec.allocators) allocators.push_back(Evaluator::part_key(a));
    double best = 0;
    for (unsigned r = 0; r < processes; ++r) {
      double cost = kAssembly;
      for (const std::string& a : allocators) {
        auto it = ran_[need.kind].find(a);
        if (it == ran_[need.kind].end() || !it->second[r]) cost += kSimulation;
      }
      if (r == 0 || load[r] + cost < best) {
        best = load[r] + cost;
        need.owner = r;
      }
    }
    load[need.owner] = best;
    for (const std::string& a : allocators) {
      std::vector<bool>& ran = ran_[need.kind][a];
      ran.resize(processes, false);
      ran[need.owner] = true;
    }
  }

  if (!needs.empty()) {
    nlohmann::json mine = nlohmann::json::array();
    for (unsigned kind : {kRanked, kValidator}) {
      std::vector<const simulate::DmmSpec*> specs;
      for (const Need& need : needs)
        if (need.owner == me && need.kind == kind) specs.push_back(&need.spec);
      if (specs.empty()) continue;
      for (const Evaluation& e : fitness_[kind]->evaluate(specs)) mine.push_back(evaluation_to_json(e));
      sync_->simulations[kind] = fitness_[kind]->simulations();
      served_ += specs.size();
    }
    const std::vector<std::string> results = ring_.allgather(mine.dump());
    for (unsigned r = 0; r < processes; ++r) {
      const nlohmann::json theirs = nlohmann::json::parse(results.at(r));
      std::size_t j = 0;
      for (unsigned kind : {kRanked, kValidator})  // the order each process evaluated in
        for (const Need& need : needs)
          if (need.owner == r && need.kind == kind) measured_[kind][need.key] = evaluation_from_json(theirs.at(j++));
      if (j != theirs.size()) throw std::runtime_error("a process sent more measures than it was asked for");
    }
  }

  std::lock_guard lock(sync_->mu);
  for (Slot& s : slots) {
    if (s.done) continue;
    s.answer.assign(s.keys.size(), Evaluation{});
    for (std::size_t i = 0; i < s.keys.size(); ++i)
      if (!s.keys[i].empty()) s.answer[i] = measured_[s.kind].at(s.keys[i]);
    s.answered = true;
  }
  sync_->to_islands.notify_all();
  return true;
}

}  // namespace tailor::search
