// SPDX-License-Identifier: MIT
// Evaluator: the fitness of a DMM on one trace, as the DMM simulator paper's search
// computes it: the DMM is simulated (src/simulate) and its execution time
// (steps), memory usage and energy are divided by Kingsley's on the same
// trace, so that 1 is Kingsley and lower is better; the weighted fitness is
// the weighted mean of the three. A DMM is assembled from its allocators'
// runs on their shares of the trace (src/simulate/part_simulation.h: exact,
// since allocators own disjoint ranges and memories), and both allocators
// and phenotypes are cached, so an allocator is simulated once however many
// candidate DMMs contain it; batches of new allocators are simulated in
// parallel, and the results do not depend on the number of threads.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "simulate/dmm_spec.h"
#include "simulate/metrics.h"
#include "simulate/part_simulation.h"
#include "simulate/time_model.h"
#include "simulate/replay_trace.h"

namespace tailor::search {

struct Weights {
  double time = 1, memory = 1, energy = 1;
};

/// Parses "time=1,memory=2,energy=0" (any subset; missing keys keep their
/// default of 1). Throws std::invalid_argument naming the bad item.
Weights parse_weights(const std::string& text);

struct Evaluation {
  bool valid = false;
  /// Over several traces (MultiEvaluator): each trace's own evaluation, in
  /// the traces' order; `metrics` is then empty and the ratios aggregate them.
  std::vector<Evaluation> per_trace;
  simulate::Metrics metrics;
  double time = std::numeric_limits<double>::infinity();    ///< steps / KNG's
  double memory = std::numeric_limits<double>::infinity();  ///< memory usage / KNG's
  double energy = std::numeric_limits<double>::infinity();  ///< energy / KNG's
  double fitness = std::numeric_limits<double>::infinity(); ///< weighted mean of the three
};

/// What the evolution ranks and measures candidates with: one trace
/// (Evaluator) or several (MultiEvaluator). Results depend only on the DMM.
class Fitness {
 public:
  virtual ~Fitness() = default;
  /// Evaluates every spec (nullptr: an invalid phenotype).
  virtual std::vector<Evaluation> evaluate(const std::vector<const simulate::DmmSpec*>& specs) = 0;
  /// Evaluates `specs` with this fitness and `other_specs` with `other` (a
  /// search's validator beside its ranking fitness): two calls here; a
  /// shared evaluation (shared_evaluation.h) serves both in one round, so
  /// that a few long validation runs share it with many short ones.
  virtual std::pair<std::vector<Evaluation>, std::vector<Evaluation>> evaluate_with(
      const std::vector<const simulate::DmmSpec*>& specs, Fitness& other,
      const std::vector<const simulate::DmmSpec*>& other_specs) {
    std::vector<Evaluation> mine = evaluate(specs);
    return {std::move(mine), other.evaluate(other_specs)};
  }
  /// Allocator simulations run so far (each on its share of a trace).
  virtual std::uint64_t simulations() const noexcept = 0;
  /// What simulating allocator `a` costs, in operations gone through: how a
  /// scheduler shares simulations out (shared_evaluation.h). Relative, not a time.
  virtual double work(const simulate::AllocatorSpec&) const { return 1; }
  /// A fitness made of others (MultiEvaluator): how many, each, and how
  /// their evaluations of one DMM make its own, so that a scheduler can
  /// measure the components apart. 0 components: a fitness of its own.
  virtual std::size_t components() const noexcept { return 0; }
  virtual Fitness& component(std::size_t) { return *this; }
  virtual Evaluation combine(std::vector<Evaluation> per_component) const { return per_component.at(0); }
};

class Evaluator : public Fitness {
 public:
  /// `exact_sizes`: the sizes exact classes are made of (default: the
  /// trace's own; a search over several traces gives every trace the union,
  /// the classes the written spec carries). `model`: the time a DMM is
  /// ranked by, the time model's prediction of its real time
  /// (time_model.h; kept by the caller); nullptr: its steps.
  Evaluator(const simulate::ReplayTrace& trace, Weights weights, unsigned threads,
            const std::vector<std::uint64_t>* exact_sizes = nullptr, const simulate::TimeModel* model = nullptr);

  const simulate::Metrics& kingsley() const noexcept { return kng_; }
  /// The sizes the trace requests (sizes_of), which <TRACE_SIZE> and exact classes draw on.
  const std::vector<std::uint64_t>& trace_sizes() const noexcept { return sizes_; }
  const Weights& weights() const noexcept { return weights_; }
  /// For a Pareto front, where a DMM worse than Kingsley in the weighted sum
  /// may still stand for its time: allocators are kept up to kLargest x
  /// Kingsley's memory usage, whatever the weights.
  void bound_memory_for_front();

  /// Evaluates every spec (std::nullopt: an invalid phenotype), simulating
  /// the ones not in the cache in parallel.
  std::vector<Evaluation> evaluate(const std::vector<const simulate::DmmSpec*>& specs) override;
  /// Normalizes metrics of any DMM (a built-in) as a search result is.
  Evaluation normalize(const simulate::Metrics& m) const;

  /// Allocator simulations run so far (each on its share of the trace).
  std::uint64_t simulations() const noexcept override { return simulations_; }
  /// The operations routed to `a` (a run goes through them), plus a scan of the trace.
  double work(const simulate::AllocatorSpec& a) const override;
  std::uint64_t lookups() const noexcept { return lookups_; }
  /// The key an allocator's run is cached under: DMMs with an allocator of
  /// the same key share its run.
  static std::string part_key(const simulate::AllocatorSpec& a);

  /// Runs shared between evaluators of the same trace on several processes
  /// (shared_evaluation.h): the allocators `specs` need that this evaluator
  /// has not run (each once, in the specs' order); runs of them, made in
  /// parallel and kept, encoded as bytes; and the adding of another's.
  std::vector<simulate::AllocatorSpec> missing_runs(const std::vector<const simulate::DmmSpec*>& specs) const;
  std::vector<std::string> make_runs(const std::vector<simulate::AllocatorSpec>& allocators);
  /// Throws std::invalid_argument if `encoded` is not a run.
  void add_run(const simulate::AllocatorSpec& a, const std::string& encoded);

 private:
  const simulate::ReplayTrace& trace_;
  Weights weights_;
  unsigned threads_;
  const simulate::TimeModel* model_;
  simulate::Metrics kng_;

  /// An allocator taking more steps than a DMM can take and still beat
  /// Kingsley (sum of weights / time weight x Kingsley's steps, at most
  /// kSlowest x) is abandoned and its DMMs are invalid: a search has no use
  /// for them, and quadratic ones (farthest fit on long lists) would take
  /// hours. The same holds of an allocator whose resident bytes pass (sum of
  /// weights / memory weight) x Kingsley's memory usage (at most kLargest x):
  /// a DMM's memory usage is at least each of its allocators' resident bytes
  /// at any time. Random candidates can hold hundreds of times Kingsley's
  /// memory, and simulating them would cost as much host memory.
  static constexpr std::uint64_t kSlowest = 20;
  static constexpr std::uint64_t kLargest = 20;
  simulate::PartLimits limits_;
  /// (sum of weights / weight) x `kingsley`, at most `most` x (weight 0: `most` x), plus one.
  std::uint64_t bound(double weight, std::uint64_t most, std::uint64_t kingsley) const;
  std::vector<std::uint64_t> sizes_;    // the trace's sizes (<TRACE_SIZE>)
  std::vector<std::uint64_t> exact_;    // the sizes of exact classes
  // (routing size, operations with a routing size up to it), by size: work()'s
  // counts, made on its first call.
  mutable std::once_flag routed_once_;
  mutable std::vector<std::pair<std::uint64_t, std::uint64_t>> routed_;
  std::map<std::string, Evaluation> cache_;
  std::map<std::string, std::optional<simulate::PartResult>> parts_;  // none: cannot be built
  // Runs the allocators (in parallel) into parts_.
  void run(const std::vector<std::pair<std::string, const simulate::AllocatorSpec*>>& todo);
  std::uint64_t simulations_ = 0, lookups_ = 0;
};

/// How a DMM's measures over several traces (each normalized to Kingsley on
/// its own trace) make one: their mean, or the worst of them.
enum class Aggregate { kMean, kWorst };
Aggregate parse_aggregate(const std::string& text);  ///< "mean" or "worst"; throws std::invalid_argument
const char* to_string(Aggregate a) noexcept;

/// Combines per-trace evaluations: valid when every one is; time, memory,
/// energy and fitness are each the mean (or the maximum) of the traces'.
Evaluation aggregate(std::vector<Evaluation> per_trace, Aggregate how);

/// The fitness of a DMM over several traces: each trace's Evaluator (each
/// normalized to Kingsley on its trace), aggregated. Also over several views
/// of one trace (its validation sample and its prefix: the worst of them).
class MultiEvaluator : public Fitness {
 public:
  MultiEvaluator(std::vector<Fitness*> traces, Aggregate how) : traces_(std::move(traces)), how_(how) {}
  std::vector<Evaluation> evaluate(const std::vector<const simulate::DmmSpec*>& specs) override;
  std::uint64_t simulations() const noexcept override;
  double work(const simulate::AllocatorSpec& a) const override;  ///< the traces' summed
  std::size_t components() const noexcept override { return traces_.size(); }
  Fitness& component(std::size_t i) override { return *traces_.at(i); }
  Evaluation combine(std::vector<Evaluation> per_trace) const override { return aggregate(std::move(per_trace), how_); }

 private:
  std::vector<Fitness*> traces_;
  Aggregate how_;
};

}  // namespace tailor::search
