// SPDX-License-Identifier: MIT
// Grammatical evolution over the DMM grammar (the DMM simulator paper section 3 and its
// group's GECCO'09 work): variable-length chromosomes of 8-bit codons mapped
// through the grammar (mapper.h) to DMM specs (phenotype.h), evaluated by
// simulation (evaluator.h). Tournament selection, variable-length one-point
// crossover and per-codon mutation within the codons the mapping read (the
// effective part, as GE implementations do), elitism; a weighted-sum mode and a Pareto
// mode (NSGA-II: non-dominated sorting with crowding distance) over time,
// memory and energy. Deterministic for a seed, whatever the thread count.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <vector>

#include "simulate/dmm_spec.h"
#include "search/evaluator.h"
#include "search/grammar.h"
#include "search/mapper.h"

namespace tailor::search {

struct SearchOptions {
  std::uint64_t seed = 1;
  unsigned population = 60;
  unsigned generations = 100;
  double crossover = 0.8;    ///< probability that two parents cross
  double mutation = 0.02;    ///< probability that a codon mutates
  unsigned tournament = 3;
  unsigned elite = 6;        ///< best individuals copied into the next generation (weighted mode)
  unsigned min_length = 20, max_length = 120;  ///< codons of an initial chromosome
  unsigned max_wraps = 3;
  bool pareto = false;
  /// After each generation: (generation, best fitness so far, evaluations per second).
  std::function<void(unsigned, double, double)> progress;
  /// Asked after each generation: true ends the evolution there, with the
  /// best so far (a caller's time budget).
  std::function<bool()> stop;
  /// When set (the evaluator ranks on a sample of the trace), a DMM whose
  /// ranked fitness beats the best's is measured by the validator (on the
  /// whole trace) before it can become the best, and carries that measure
  /// from then on; so `best` is always measured by the validator.
  Fitness* validator = nullptr;
  /// The best few DMMs (distinct, by the validator's measure, or the
  /// evaluator's without one) kept in SearchResult::finalists, so that a
  /// caller can measure them once more on the whole trace.
  unsigned finalists = 8;
};

struct Individual {
  Genome genome;
  std::optional<simulate::DmmSpec> spec;  ///< none: the phenotype is invalid
  std::string phenotype;
  Evaluation eval;
  unsigned rank = 0;      ///< Pareto front (0 = non-dominated)
  double crowding = 0;
  std::size_t used = 0;   ///< codons the mapping read (at most the genome's length)
  bool measured = false;  ///< `eval` is the validator's (or there is no validator)
};

/// The island model on several processes (shared_evaluation.h): where a
/// process's time went while its islands' evaluations were shared out.
struct SharingCosts {
  std::uint64_t rounds = 0;    ///< rounds of exchange
  std::uint64_t measured = 0;  ///< DMMs this process measured (for every process's islands)
  std::uint64_t bytes = 0;     ///< bytes this process sent (asks and measures)
  double waiting = 0;          ///< for its islands to ask (breeding, selection)
  double exchanging = 0;       ///< in the exchanges (waiting for the other processes included)
  double measuring = 0;        ///< measuring its share
  double assembling = 0;       ///< assembling every DMM from the runs (every process assembles all)
  double bookkeeping = 0;      ///< writing and reading the messages, sharing out
};

struct SearchResult {
  Individual best;                 ///< lowest weighted fitness seen
  std::vector<Individual> front;   ///< Pareto mode: the final non-dominated DMMs
  std::vector<Individual> finalists;  ///< the best SearchOptions::finalists DMMs seen, best first (best included)
  std::uint64_t validations = 0;   ///< DMMs the validator measured
  std::uint64_t evaluations = 0;   ///< individuals evaluated (cache hits included)
  std::uint64_t simulations = 0;   ///< distinct DMMs simulated
  double seconds = 0;
  /// Island model (islands.h), on this process: wall time in migrations
  /// (waiting for the ring's neighbour included) and in checkpoints (gather
  /// and write), and the bytes of the last checkpoint written.
  double migration_seconds = 0, checkpoint_seconds = 0;
  std::uint64_t checkpoint_bytes = 0;
  SharingCosts sharing;  ///< this process's, over several processes
};

/// Pareto dominance over (time, memory, energy): no worse in any, better in one.
bool dominates(const Evaluation& a, const Evaluation& b) noexcept;

/// Grammatical evolution of a DMM for the evaluator's trace(s).
SearchResult evolve(const Grammar& grammar, const std::vector<std::uint64_t>& trace_sizes, Fitness& evaluator,
                    const SearchOptions& options);

/// Random sampling of as many random chromosomes as evolve() evaluates with
/// the same options: the baseline the search must beat.
SearchResult random_sampling(const Grammar& grammar, const std::vector<std::uint64_t>& trace_sizes,
                             Fitness& evaluator, const SearchOptions& options);

/// One population evolving generation by generation: evolve() is start(),
/// options.generations x step() and finish(). The island model (islands.h)
/// runs several, moves individuals between them, and saves and restores
/// their whole state for checkpoints (a restored island continues exactly as
/// the saved one would have).
class Island {
 public:
  Island(const Grammar& grammar, const std::vector<std::uint64_t>& trace_sizes, Fitness& evaluator,
         const SearchOptions& options);
  ~Island();
  Island(Island&&) noexcept;
  Island& operator=(Island&&) = delete;

  void start();  ///< generation 0: a random population, evaluated
  void step();   ///< the next generation
  unsigned generation() const noexcept;
  double best_fitness() const noexcept;        ///< of the best seen (infinity before any valid DMM)
  std::uint64_t evaluations() const noexcept;  ///< individuals evaluated so far
  /// Copies of the `count` best individuals (by fitness, or by Pareto rank then crowding).
  std::vector<Individual> emigrants(std::size_t count) const;
  /// The arrivals replace the worst individuals; measured ones may become the best.
  void immigrate(std::vector<Individual> arrivals);
  /// The best seen, the final front (Pareto mode, measured by the validator), counters.
  SearchResult finish();

  /// The island's whole state (generator, population, best, measures) as JSON.
  nlohmann::json save() const;
  /// Continues from a saved state; throws std::invalid_argument naming the
  /// field of a malformed one.
  void restore(const nlohmann::json& state);

  class Engine;  ///< the evolutionary loop (evolution.cpp)

 private:
  std::unique_ptr<Engine> engine_;
};

/// Adds a valid `ind` to `finalists` (best fitness first, one per phenotype,
/// at most `keep`; the earlier stays ahead on a tie).
void keep_finalist(std::vector<Individual>& finalists, const Individual& ind, std::size_t keep);

/// JSON of individuals and evaluations, exact (doubles as their bits), for
/// checkpoints and migration; from_json rebuilds the phenotype and spec from
/// the genome. Both throw std::invalid_argument naming a missing or bad field.
nlohmann::json individual_to_json(const Individual& ind);
nlohmann::json individuals_to_json(const std::vector<Individual>& list);
Individual individual_from_json(const nlohmann::json& j, const Grammar& grammar,
                                const std::vector<std::uint64_t>& trace_sizes, unsigned max_wraps);
/// An evaluation, exact (doubles as their bits, per-trace evaluations
/// included); from_json throws std::invalid_argument naming a bad field.
nlohmann::json evaluation_to_json(const Evaluation& e);
Evaluation evaluation_from_json(const nlohmann::json& j);
/// Every element of the array `list` by individual_from_json.
std::vector<Individual> individuals_from_json(const nlohmann::json& list, const Grammar& grammar,
                                              const std::vector<std::uint64_t>& trace_sizes, unsigned max_wraps);

}  // namespace tailor::search
