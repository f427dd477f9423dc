// SPDX-License-Identifier: MIT
// Evaluations shared out among the processes of an island search. Each
// process owns some islands (islands.h); if each simulated only its own
// islands' DMMs, every process would wait at the end for the one whose
// islands happened to breed the costlier DMMs, and two processes would
// simulate the same allocators twice (each has its own caches). Instead,
// every process runs a phase (the first generation, a generation, the
// finish) of all its islands at once, each island in a thread of its own,
// and the islands' requests to the ranking fitness and to the validator are
// served together with the other processes': in rounds, the processes
// exchange the DMMs their islands ask for (not when every process runs the
// same islands: they ask the same), each simulates a share of the ones no
// process has measured yet, and the measures are exchanged back. A
// measure depends only on the DMM, so the islands evolve exactly as they
// would alone; only where the simulations run changes. With several traces
// divided among the processes, a trace's measures are made by the process
// that holds it.
//
// The units of work are allocator runs where the fitness is an Evaluator
// (every process then gets every run and assembles the DMMs itself), DMMs
// otherwise. They are handed out as they are done, not planned: ordered
// costliest first by a cost model learned as the search runs (seconds per
// operation gone through, by kind of allocator, Fitness::work), each
// process takes the next from a counter the processes share (Ring::ticket,
// one-sided) until none is left, so a round ends when its work does
// whichever process is slower or drew the costlier units.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "search/evaluator.h"
#include "search/islands.h"

namespace tailor::search {

class SharedEvaluation {
 public:
  struct Sharing {
    /// The units of work this process takes at once (and runs in parallel).
    unsigned threads = 1;
    /// Every process runs the same islands (fewer islands than processes):
    /// they ask the same DMMs everywhere, so the asks are not exchanged.
    bool same_islands = false;
    /// For fitnesses over several traces whose traces are divided among
    /// the processes (one component per trace): the process (rank in the
    /// ring) that alone holds each trace and measures every DMM on it, -1
    /// for a trace every process holds; empty: every process holds every
    /// trace. A held trace's component is a placeholder elsewhere.
    std::vector<int> holders;
  };
  /// `ranked` and `validator` (may be null) evaluate on this process; every
  /// process has the same, over the same traces. `islands`: this process's.
  SharedEvaluation(Ring& ring, Fitness& ranked, Fitness* validator, std::size_t islands, const Sharing& sharing);
  SharedEvaluation(Ring& ring, Fitness& ranked, Fitness* validator, std::size_t islands)
      : SharedEvaluation(ring, ranked, validator, islands, Sharing{}) {}
  ~SharedEvaluation();
  SharedEvaluation(const SharedEvaluation&) = delete;
  SharedEvaluation& operator=(const SharedEvaluation&) = delete;

  /// What island `k` of this process evaluates and validates with (for
  /// use inside run() only).
  Fitness& ranked(std::size_t k);
  Fitness* validator(std::size_t k);

  /// Runs phase(k) for every island k of this process, each in a thread,
  /// serving their evaluations with the other processes' until every
  /// process's islands are through. Every process calls it at the same
  /// points of the search. An exception of a phase is rethrown here once
  /// the other processes are served.
  void run(const std::function<void(std::size_t)>& phase);

  /// Where this process's time in run() went, so far.
  using Costs = SharingCosts;
  const Costs& costs() const noexcept { return costs_; }

  class Proxy;  // an island's view of one fitness

 private:
  struct Slot;  // one island's pending request
  enum Kind : unsigned { kRanked = 0, kValidator = 1 };
  // An island's request: the DMMs it asks of each kind's fitness (nullptr: none).
  using Asks = std::array<const std::vector<const simulate::DmmSpec*>*, 2>;
  std::array<std::vector<Evaluation>, 2> ask(std::size_t island, const Asks& specs);
  bool round(std::vector<Slot>& slots);  // false once every process's islands are through
  // The phases of a round (t0: a lap timer the costs are taken from).
  using TimePoint = std::chrono::steady_clock::time_point;
  struct Need;                                      // a DMM no process has measured
  struct Unit;                                      // one process's share of a round's work
  using Group = std::pair<unsigned, std::size_t>;  // (fitness, component)
  std::string asks_of(std::vector<Slot>& slots);
  bool collect_needs(const std::vector<std::string>& parts, std::vector<Need>& needs);
  bool own_needs(const std::vector<Slot>& slots, std::vector<Need>& needs);
  std::vector<Unit> units_of(std::vector<Need>& needs, const std::vector<Group>& groups) const;
  void exchange_measures(const std::vector<Unit>& units, std::vector<Need>& needs, TimePoint& t0);
  // The cost model the units are handed out by, costliest first: seconds
  // per operation gone through, by kind of allocator, learned from every
  // process's measures as the search runs (the same on every process).
  struct Rate {
    double seconds = 0, work = 0;
  };
  using CostClass = std::array<int, 8>;
  static std::array<CostClass, 4> cost_classes(const Unit& u);
  double cost_of(const Unit& u) const;
  void learn(const Unit& u, double seconds);
  void assemble(std::vector<Need>& needs, const std::vector<Group>& groups);
  void answer(std::vector<Slot>& slots);

  static Evaluation combined(Fitness& f, std::vector<Evaluation>& leaves, std::size_t& next);
  Evaluation combined_top(unsigned kind, std::vector<Evaluation>& leaves);

  Ring& ring_;
  Fitness* fitness_[2];
  std::vector<Fitness*> leaves_[2];  // what each is made of, down to fitnesses made of none or held by one process
  std::vector<int> holder_[2];       // each leaf's holder (-1: every process)
  std::vector<std::unique_ptr<Proxy>> proxies_[2];
  struct Sync;
  std::unique_ptr<Sync> sync_;
  Slot* slots_ = nullptr;  // run()'s, while it runs
  unsigned threads_;
  bool same_islands_;
  std::vector<int> holders_;  // per component (trace); empty: every process holds every trace
  // What every process knows alike: the measures taken, and the cost model.
  std::unordered_map<std::string, Evaluation> measured_[2];
  std::map<CostClass, Rate> rates_;
  std::uint64_t tickets_ = 0;  // the shared counter's value where this round's tickets start
  Costs costs_;
};

}  // namespace tailor::search
