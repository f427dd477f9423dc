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
// exchange the DMMs their islands ask for, each simulates a share of the
// ones no process has measured yet, and the measures are exchanged back.
// A measure depends only on the DMM, so the islands evolve exactly as they
// would alone; only where the simulations run changes.
//
// The units of work are allocator runs where the fitness is an Evaluator
// (every process then gets every run and assembles the DMMs itself), DMMs
// otherwise. Costs are in proportion to the operations each allocator is
// routed (Fitness::work). Runs go costliest first to the least loaded
// process; a DMM goes where it adds least: a run of each of its allocators
// that process has not run (which follows from the shares every process
// computes the same way) plus the assembly.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
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
  /// `ranked` and `validator` (may be null) evaluate on this process; every
  /// process has the same, over the same traces. `islands`: this process's.
  SharedEvaluation(Ring& ring, Fitness& ranked, Fitness* validator, std::size_t islands);
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
  std::vector<Evaluation> ask(std::size_t island, unsigned kind, const std::vector<const simulate::DmmSpec*>& specs);
  bool round(std::vector<Slot>& slots);  // false once every process's islands are through
  // The phases of a round (t0: a lap timer the costs are taken from).
  using TimePoint = std::chrono::steady_clock::time_point;
  struct Need;                                      // a DMM no process has measured
  struct Unit;                                      // one process's share of a round's work
  using Group = std::pair<unsigned, std::size_t>;  // (fitness, component)
  std::string asks_of(std::vector<Slot>& slots);
  bool collect_needs(const std::vector<std::string>& parts, std::vector<Need>& needs);
  std::vector<Unit> plan_units(std::vector<Need>& needs, const std::vector<Group>& groups);
  void exchange_measures(const std::vector<Unit>& units, std::vector<Need>& needs, const std::vector<Group>& groups,
                         TimePoint& t0);
  void assemble(std::vector<Need>& needs, const std::vector<Group>& groups);
  void answer(std::vector<Slot>& slots);

  static Evaluation combined(Fitness& f, std::vector<Evaluation>& leaves, std::size_t& next);

  Ring& ring_;
  Fitness* fitness_[2];
  std::vector<Fitness*> leaves_[2];  // what each is made of, down to fitnesses made of none
  std::vector<std::unique_ptr<Proxy>> proxies_[2];
  struct Sync;
  std::unique_ptr<Sync> sync_;
  Slot* slots_ = nullptr;  // run()'s, while it runs
  // What every process knows alike: the measures taken, and which process
  // has run which allocator (per fitness).
  std::unordered_map<std::string, Evaluation> measured_[2];
  std::unordered_map<std::string, std::vector<bool>> ran_;  // "fitness/component/allocator" -> processes
  Costs costs_;
};

}  // namespace tailor::search
