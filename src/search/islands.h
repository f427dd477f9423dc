// SPDX-License-Identifier: MIT
// The island model: several populations (islands, evolution.h's Island)
// evolve side by side and every few generations each sends copies of its
// best individuals to the next island of a ring, where they replace the
// worst one migration later: an island takes, at each migration, the
// migrants its neighbour sent at the previous one, so that a process waits
// for its neighbour only when that one is a whole epoch behind (with
// same-generation exchange every process waited for the slowest at every
// migration). The islands may live in one process (run in turn) or be spread over
// processes (MPI ranks, through a Ring that the caller provides: this
// library does not depend on MPI), in contiguous blocks; the result depends
// only on the seed and the number of islands, not on how many processes run
// them. The whole state can be written to a checkpoint file at generation
// boundaries and a search resumed from it continues exactly as the
// uninterrupted one.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "search/evolution.h"
#include "search/ring.h"

namespace tailor::search {

struct IslandOptions {
  unsigned islands = 1;         ///< the population (SearchOptions::population) is shared out among them
  unsigned migrate_every = 10;  ///< generations between migrations (0: never)
  unsigned migrants = 2;        ///< individuals each island sends to the next
  /// Processes that share their islands' evaluations out (shared_evaluation.h)
  /// form groups of this many consecutive ranks; every process of a group
  /// reads every other's requests each round, so larger groups cost more.
  unsigned share_among = 16;
  /// The units of work this process takes at once from the shared queue
  /// (shared_evaluation.h), run in parallel: its evaluators' threads.
  unsigned threads = 1;
  /// A search over several traces divided among the processes of each
  /// sharing group: each trace's holder, its rank in the group (-1: every
  /// process holds it); empty: every process holds every trace. The
  /// fitnesses' components (one per trace) are placeholders on the others.
  std::vector<int> trace_holders;
  std::string checkpoint;       ///< file the state is written to (empty: none)
  unsigned checkpoint_every = 0;  ///< generations between checkpoints
  /// What the search was started with (traces, seed, ...), written into
  /// checkpoints; resume_checkpoint() requires the same.
  nlohmann::json settings = nlohmann::json::object();
  const nlohmann::json* resume = nullptr;  ///< a checkpoint (read_checkpoint) to continue from
  std::string resume_path;                 ///< its file, for messages
  /// After every generation, on rank 0: (generation, best fitness of rank 0's islands, their evaluations per second).
  std::function<void(unsigned, double, double)> progress;
};

/// The seed of island `i` (island 0 has the search's own, so one island is evolve()).
std::uint64_t island_seed(std::uint64_t seed, unsigned island) noexcept;

/// Runs the island model; options.stop ends it after a generation in one
/// process (over several it is not asked: they would stop apart). The result (best, front, counters summed over the
/// islands) is complete on rank 0 (and without a ring); on other ranks it is
/// their own islands'. `fitness` (and options.validator) evaluate on this
/// process. With one island and no checkpoint it is evolve().
SearchResult run_islands(const Grammar& grammar, const std::vector<std::uint64_t>& trace_sizes, Fitness& fitness,
                         const SearchOptions& options, const IslandOptions& islands, Ring* ring = nullptr);

/// Parses the checkpoint `text` read from `path` and checks it against this
/// search: its format, its settings (each must equal `settings`'), its
/// generation (at most `generations`), its islands. Throws
/// std::runtime_error "PATH: ..." naming the field at fault.
nlohmann::json read_checkpoint(const std::string& path, const std::string& text, const nlohmann::json& settings,
                               unsigned generations);

}  // namespace tailor::search
