// SPDX-License-Identifier: MIT
// Evaluator: the fitness of a DMM on one trace, as seed 002's search
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
#include <optional>
#include <string>
#include <vector>

#include "dmm_spec.h"
#include "metrics.h"
#include "part_simulation.h"
#include "replay_trace.h"

namespace tailor::search {

struct Weights {
  double time = 1, memory = 1, energy = 1;
};

/// Parses "time=1,memory=2,energy=0" (any subset; missing keys keep their
/// default of 1). Throws std::invalid_argument naming the bad item.
Weights parse_weights(const std::string& text);

struct Evaluation {
  bool valid = false;
  simulate::Metrics metrics;
  double time = std::numeric_limits<double>::infinity();    ///< steps / KNG's
  double memory = std::numeric_limits<double>::infinity();  ///< memory usage / KNG's
  double energy = std::numeric_limits<double>::infinity();  ///< energy / KNG's
  double fitness = std::numeric_limits<double>::infinity(); ///< weighted mean of the three
};

class Evaluator {
 public:
  Evaluator(const simulate::ReplayTrace& trace, Weights weights, unsigned threads);

  const simulate::Metrics& kingsley() const noexcept { return kng_; }
  /// The sizes the trace requests (sizes_of), which <TRACE_SIZE> and exact classes draw on.
  const std::vector<std::uint64_t>& trace_sizes() const noexcept { return sizes_; }
  const Weights& weights() const noexcept { return weights_; }

  /// Evaluates every spec (std::nullopt: an invalid phenotype), simulating
  /// the ones not in the cache in parallel.
  std::vector<Evaluation> evaluate(const std::vector<const simulate::DmmSpec*>& specs);
  /// Normalizes metrics of any DMM (a built-in) as a search result is.
  Evaluation normalize(const simulate::Metrics& m) const;

  /// Allocator simulations run so far (each on its share of the trace).
  std::uint64_t simulations() const noexcept { return simulations_; }
  std::uint64_t lookups() const noexcept { return lookups_; }

 private:
  const simulate::ReplayTrace& trace_;
  Weights weights_;
  unsigned threads_;
  simulate::Metrics kng_;
  static std::string part_key(const simulate::AllocatorSpec& a);

  /// An allocator taking more steps than a DMM can take and still beat
  /// Kingsley (sum of weights / time weight x Kingsley's steps, at most
  /// kSlowest x) is abandoned and its DMMs are invalid: a search has no use
  /// for them, and quadratic ones (farthest fit on long lists) would take hours.
  static constexpr std::uint64_t kSlowest = 20;
  std::uint64_t max_steps_ = 0;
  std::vector<std::uint64_t> routing_;  // routing size of every operation
  std::vector<std::uint64_t> sizes_;    // the trace's sizes (exact classes)
  std::map<std::string, Evaluation> cache_;
  std::map<std::string, std::optional<simulate::PartResult>> parts_;  // none: cannot be built
  std::uint64_t simulations_ = 0, lookups_ = 0;
};

}  // namespace tailor::search
