// SPDX-License-Identifier: MIT
// The island model (islands.h): islands stepped generation by generation,
// ring migration, checkpoints written atomically, results gathered.
#include "search/islands.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <memory>
#include <stdexcept>

#include "search/job_watch.h"
#include "search/shared_evaluation.h"
#include "util/random.h"
#include "util/file.h"

namespace tailor::search {

namespace {

constexpr const char* kFormat = "tailor-search-checkpoint";
// 2: emigrants in flight, taken one migration later; 3: resident memory, time model features;
// 4: byte counts under the outputs' key names, the grammar's digest by XXH3;
// 5: candidates for the best measured with the next generation (an island's "pending").
constexpr int kVersion = 5;

// Islands [first, last) of process `p` of `processes` (contiguous blocks).
std::pair<unsigned, unsigned> block(unsigned islands, unsigned processes, unsigned p) {
  const auto first = static_cast<unsigned>(std::uint64_t{islands} * p / processes);
  const auto last = static_cast<unsigned>(std::uint64_t{islands} * (p + 1) / processes);
  return {first, last};
}

// Island i's options: its seed, its share of the population (the first
// `population mod islands` one more), its share of the elite (at least one).
SearchOptions island_options(const SearchOptions& o, unsigned islands, unsigned i) {
  SearchOptions s = o;
  s.seed = island_seed(o.seed, i);
  s.population = o.population / islands + (i < o.population % islands ? 1 : 0);
  if (islands > 1) s.elite = std::max(1u, static_cast<unsigned>(std::uint64_t{o.elite} * s.population / o.population));
  s.progress = nullptr;
  return s;
}

nlohmann::json result_to_json(const SearchResult& r) {
  nlohmann::json front = nlohmann::json::array();
  for (const auto& ind : r.front) front.push_back(individual_to_json(ind));
  return {{"best", individual_to_json(r.best)},
          {"finalists", individuals_to_json(r.finalists)},
          {"front", front},
          {"validations", r.validations},
          {"evaluations", r.evaluations}};
}

// The islands' results made one: the best of the bests (the first island's
// on a tie), the best `keep` of their finalists, the union of the fronts without the DMMs another dominates or
// repeats, best fitness first; counters summed.
SearchResult combine(const std::vector<SearchResult>& results, std::size_t keep) {
  SearchResult r;
  std::vector<Individual> all;
  for (const SearchResult& x : results) {
    if (x.best.eval.valid && (!r.best.eval.valid || x.best.eval.fitness < r.best.eval.fitness)) r.best = x.best;
    for (const Individual& f : x.finalists) keep_finalist(r.finalists, f, keep);
    all.insert(all.end(), x.front.begin(), x.front.end());
    r.validations += x.validations;
    r.evaluations += x.evaluations;
  }
  for (const auto& a : all) {
    if (std::any_of(all.begin(), all.end(), [&](const Individual& b) { return dominates(b.eval, a.eval); })) continue;
    if (std::any_of(r.front.begin(), r.front.end(), [&](const Individual& b) { return a.spec && b.spec && *a.spec == *b.spec; }))
      continue;
    r.front.push_back(a);
  }
  std::stable_sort(r.front.begin(), r.front.end(),
                   [](const Individual& a, const Individual& b) { return a.eval.fitness < b.eval.fitness; });
  return r;
}

void check_options(const SearchOptions& options, const IslandOptions& io) {
  const unsigned n = io.islands;
  if (n == 0) throw std::invalid_argument("--islands: at least 1");
  if (options.population / n < 2)
    throw std::invalid_argument("--population " + std::to_string(options.population) + ": at least 2 individuals per island (" +
                                std::to_string(n) + " islands)");
  if (n > 1 && io.migrate_every > 0 && io.migrants >= options.population / n)
    throw std::invalid_argument("--migrants " + std::to_string(io.migrants) + ": fewer than an island's population (" +
                                std::to_string(options.population / n) + ")");
  if (io.share_among == 0) throw std::invalid_argument("--share-among: at least 1");
  if (!io.checkpoint.empty() && io.checkpoint_every == 0)
    throw std::invalid_argument("--checkpoint needs --checkpoint-every G (G > 0)");
}

// Restores this process's islands (first, first + 1, ...) from a
// checkpoint; returns the migrants they had sent at its last migration.
std::vector<std::vector<Individual>> restore(const nlohmann::json& checkpoint, const IslandOptions& io,
                                             bool migrating_on, std::vector<Island>& islands, unsigned first,
                                             const Grammar& grammar, const std::vector<std::uint64_t>& trace_sizes,
                                             unsigned max_wraps) {
  std::vector<std::vector<Individual>> sent;
  const nlohmann::json& saved = checkpoint.at("islands");
  const bool migrated = migrating_on && checkpoint.at("generation").get<unsigned>() >= io.migrate_every;
  for (unsigned i = first; i < first + islands.size(); ++i) {
    try {
      islands[i - first].restore(saved.at(i));
      if (migrated) {
        if (!saved.at(i).contains("emigrants")) throw std::invalid_argument("field 'emigrants' is missing");
        if (!saved.at(i).at("emigrants").is_array()) throw std::invalid_argument("field 'emigrants' is not an array");
        sent.push_back(individuals_from_json(saved.at(i).at("emigrants"), grammar, trace_sizes, max_wraps));
      }
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(io.resume_path + ": field 'islands[" + std::to_string(i) + "]': " + e.what());
    }
  }
  return sent;
}

// Writes the checkpoint of generation g: every island's state and the
// migrants in flight, gathered from the processes of `ring` (nullptr: this
// one only) and written by rank `me` 0; returns the bytes written (0 on other ranks).
std::uint64_t write_checkpoint(const std::vector<Island>& islands, const std::vector<std::vector<Individual>>& sent,
                               const IslandOptions& io, Ring* ring, unsigned me, unsigned g) {
  nlohmann::json mine = nlohmann::json::array();
  for (std::size_t k = 0; k < islands.size(); ++k) {
    nlohmann::json state = islands[k].save();
    if (!sent.empty()) state["emigrants"] = individuals_to_json(sent[k]);
    mine.push_back(std::move(state));
  }
  std::vector<std::string> parts;
  if (ring != nullptr) parts = ring->gather(mine.dump());
  else parts.push_back(mine.dump());
  if (me != 0) return 0;
  nlohmann::json all = nlohmann::json::array();
  for (const std::string& p : parts)
    for (auto& island : nlohmann::json::parse(p)) all.push_back(std::move(island));
  const nlohmann::json file = {{"format", kFormat}, {"version", kVersion}, {"settings", io.settings},
                               {"generation", g},   {"islands", all}};
  const std::string text = file.dump() + "\n";
  util::write_file_atomically(io.checkpoint, text, "checkpoint");  // the previous one stays whole until replaced
  return text.size();
}

// The search's result from every island's: combined on this process, or
// over processes that each run a block of islands, gathered on rank 0 (the
// others keep their own islands'). `simulations` becomes the sum over the
// processes where they share the work.
SearchResult gather(std::vector<SearchResult> results, unsigned n, bool everywhere, bool spread, Ring* ring,
                    std::uint64_t& simulations, const Grammar& grammar, const std::vector<std::uint64_t>& trace_sizes,
                    const SearchOptions& options) {
  if (!spread) {
    if (everywhere) {  // every process has the result; the simulations are summed
      const std::uint64_t own = simulations;
      simulations = 0;
      for (const std::string& p : ring->allgather(std::to_string(own))) simulations += std::stoull(p);
    }
    return n == 1 ? results.front() : combine(results, options.finalists);
  }
  nlohmann::json mine = nlohmann::json::array();
  for (const auto& x : results) mine.push_back(result_to_json(x));
  const std::vector<std::string> parts =
      ring->gather(nlohmann::json{{"simulations", simulations}, {"islands", mine}}.dump());
  if (ring->rank() != 0) return combine(results, options.finalists);
  std::vector<SearchResult> everyone;
  simulations = 0;
  for (const std::string& p : parts) {
    const nlohmann::json process = nlohmann::json::parse(p);
    simulations += process.at("simulations").get<std::uint64_t>();
    for (const auto& j : process.at("islands")) {
      SearchResult x;
      x.best = individual_from_json(j.at("best"), grammar, trace_sizes, options.max_wraps);
      x.finalists = individuals_from_json(j.at("finalists"), grammar, trace_sizes, options.max_wraps);
      x.front = individuals_from_json(j.at("front"), grammar, trace_sizes, options.max_wraps);
      x.validations = j.at("validations").get<std::uint64_t>();
      x.evaluations = j.at("evaluations").get<std::uint64_t>();
      everyone.push_back(std::move(x));
    }
  }
  return combine(everyone, options.finalists);
}

// Calls io.progress with generation g, the best fitness of this process's
// islands and their evaluations per second since `start`.
void report_progress(const IslandOptions& io, const std::vector<Island>& islands,
                     std::chrono::steady_clock::time_point start, unsigned g) {
  double best = std::numeric_limits<double>::infinity();
  std::uint64_t evaluations = 0;
  for (const auto& island : islands) {
    best = std::min(best, island.best_fitness());
    evaluations += island.evaluations();
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  io.progress(g, best, s > 0 ? static_cast<double>(evaluations) / s : 0);
}

// Over several processes, the islands' evaluations are shared out among
// the processes of a group of io.share_among consecutive ranks
// (shared_evaluation.h; `group` keeps the group's ring), and this process
// runs its `islands` islands' phases side by side; in one process (or a
// group of one) they run in turn (nullptr).
std::unique_ptr<SharedEvaluation> sharing_of(Fitness& fitness, const SearchOptions& options, const IslandOptions& io,
                                             Ring* ring, std::size_t islands, bool everywhere,
                                             std::unique_ptr<Ring>& group) {
  const unsigned processes = ring ? ring->size() : 1;
  Ring* sharing = ring;
  if (processes > 1 && io.share_among < processes) {
    group = ring->split(io.share_among);
    sharing = group.get();
  }
  const bool shares = processes > 1 && sharing->size() > 1;
  if (!shares && std::any_of(io.trace_holders.begin(), io.trace_holders.end(), [](int h) { return h >= 0; }))
    throw std::invalid_argument("run_islands: traces divided among processes that do not share evaluations");
  if (!shares) return nullptr;
  return std::make_unique<SharedEvaluation>(*sharing, fitness, options.validator, islands,
                                            SharedEvaluation::Sharing{io.threads, everywhere, io.trace_holders});
}

}  // namespace

std::uint64_t island_seed(std::uint64_t seed, unsigned island) noexcept {
  if (island == 0) return seed;
  return util::splitmix64_mix(seed + util::kGoldenGamma * island);
}

SearchResult run_islands(const Grammar& grammar, const std::vector<std::uint64_t>& trace_sizes, Fitness& fitness,
                         const SearchOptions& options, const IslandOptions& io, Ring* ring) {
  const auto start = std::chrono::steady_clock::now();
  const unsigned processes = ring ? ring->size() : 1, me = ring ? ring->rank() : 0;
  check_options(options, io);
  const unsigned n = io.islands;
  // With fewer islands than processes, every process runs every island (the
  // same steps everywhere: breeding is cheap) and only the evaluations are
  // shared out; migration, checkpoints and results are then local, as in
  // one process. Otherwise each process has its own block of islands.
  const bool everywhere = processes > 1 && n < processes;
  const bool spread = processes > 1 && !everywhere;  // islands on several processes
  const auto [first, last] = everywhere ? std::pair<unsigned, unsigned>{0, n} : block(n, processes, me);

  std::unique_ptr<Ring> group;
  const std::unique_ptr<SharedEvaluation> shared =
      sharing_of(fitness, options, io, ring, last - first, everywhere, group);
  std::vector<SearchOptions> opts;
  std::vector<Island> islands;
  opts.reserve(last - first);
  for (unsigned i = first; i < last; ++i) {
    opts.push_back(island_options(options, n, i));
    if (shared) opts.back().validator = shared->validator(i - first);
  }
  for (unsigned i = first; i < last; ++i)
    islands.emplace_back(grammar, trace_sizes, shared ? shared->ranked(i - first) : fitness, opts[i - first]);
  auto each = [&](const std::function<void(std::size_t)>& phase) {
    if (shared) shared->run(phase);
    else for (std::size_t k = 0; k < islands.size(); ++k) phase(k);
  };

  // Migration k (generation k x migrate_every) sends each island's best to
  // the next island and hands each island what its neighbour sent at
  // migration k - 1 (nothing at the first). Island i's emigrants go to island
  // i + 1; the last island of this block sends to the first of the next
  // process's (or to island 0 around the ring). `sent` holds what this
  // block's islands sent at the last migration: the next migration's
  // arrivals, and part of a checkpoint's state.
  const bool migrating_on = n > 1 && io.migrate_every > 0 && io.migrants > 0;
  std::vector<std::vector<Individual>> sent;

  unsigned generation = 0;
  if (io.resume) {
    sent = restore(*io.resume, io, migrating_on, islands, first, grammar, trace_sizes, options.max_wraps);
    generation = io.resume->at("generation").get<unsigned>();
  } else {
    each([&](std::size_t k) { islands[k].start(); });
  }

  auto report = [&](unsigned g) {
    if (io.progress && me == 0) report_progress(io, islands, start, g);
  };

  auto post_last = [&] { ring->post(individuals_to_json(sent.back()).dump()); };
  auto take_first = [&] {
    return individuals_from_json(nlohmann::json::parse(ring->take()), grammar, trace_sizes, options.max_wraps);
  };
  auto migrate = [&] {
    std::vector<std::vector<Individual>> out;
    for (const auto& island : islands) out.push_back(island.emigrants(io.migrants));
    std::swap(sent, out);  // out: the previous migration's, if any
    if (spread) post_last();
    if (out.empty()) return;
    islands.front().immigrate(spread ? take_first() : std::move(out.back()));
    for (std::size_t k = 1; k < islands.size(); ++k) islands[k].immigrate(std::move(out[k - 1]));
  };

  std::uint64_t checkpoint_bytes = 0;
  auto checkpoint = [&](unsigned g) {
    const std::uint64_t bytes = write_checkpoint(islands, sent, io, spread ? ring : nullptr, me, g);
    if (bytes != 0) checkpoint_bytes = bytes;
  };

  double migrating = 0, checkpointing = 0;
  auto timed = [](double& total, auto&& f) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    total += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  // A resumed search sends again what was in flight at its checkpoint.
  if (!sent.empty() && spread) post_last();
  report(generation);
  while (generation < options.generations) {
    ++generation;
    each([&](std::size_t k) { islands[k].step(); });
    if (migrating_on && generation % io.migrate_every == 0) timed(migrating, migrate);
    if (!io.checkpoint.empty() && generation % io.checkpoint_every == 0)
      timed(checkpointing, [&] {
        checkpoint(generation);
        note_checkpoint(io.checkpoint, generation);  // for a rank's last words (job_watch.h)
      });
    report(generation);
    if (ring == nullptr && options.stop && options.stop()) break;  // the caller's budget (SearchOptions::stop)
  }

  // The last migrants sent have no next migration: taken and dropped, so
  // that every message posted is received.
  if (!sent.empty() && spread) timed(migrating, [&] { ring->take(); });

  std::vector<SearchResult> results(islands.size());
  each([&](std::size_t k) { results[k] = islands[k].finish(); });
  std::uint64_t simulations = fitness.simulations();
  SearchResult r = gather(std::move(results), n, everywhere, spread, ring, simulations, grammar, trace_sizes, options);
  r.simulations = simulations;  // on every process of the search
  r.migration_seconds = migrating;
  if (shared) r.sharing = shared->costs();
  r.checkpoint_seconds = checkpointing;
  r.checkpoint_bytes = checkpoint_bytes;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

nlohmann::json read_checkpoint(const std::string& path, const std::string& text, const nlohmann::json& settings,
                               unsigned generations) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw std::runtime_error(path + ": not a checkpoint (not JSON: " + e.what() + ")");
  }
  if (!j.is_object() || !j.contains("format") || j["format"] != kFormat)
    throw std::runtime_error(path + ": not a checkpoint (field 'format' is not \"" + kFormat + "\")");
  if (!j.contains("version") || j["version"] != kVersion)
    throw std::runtime_error(path + ": field 'version' is " + (j.contains("version") ? j["version"].dump() : "missing") +
                             ", this tailor reads version " + std::to_string(kVersion));
  if (!j.contains("settings") || !j["settings"].is_object()) throw std::runtime_error(path + ": field 'settings' is missing");
  const nlohmann::json& saved = j["settings"];
  for (const auto& [key, value] : settings.items()) {
    if (!saved.contains(key))
      throw std::runtime_error(path + ": field 'settings." + key + "' is missing");
    if (saved[key] != value)
      throw std::runtime_error(path + ": field 'settings." + key + "' is " + saved[key].dump() +
                               " in the checkpoint but " + value.dump() + " in this search; resume with the same");
  }
  for (const auto& [key, value] : saved.items())
    if (!settings.contains(key)) throw std::runtime_error(path + ": field 'settings." + key + "' is unknown to this search");
  if (!j.contains("generation") || !j["generation"].is_number_unsigned())
    throw std::runtime_error(path + ": field 'generation' is missing or not a count");
  if (j["generation"].get<std::uint64_t>() > generations)
    throw std::runtime_error(path + ": field 'generation' is " + j["generation"].dump() + ", past --generations " +
                             std::to_string(generations));
  const unsigned islands = settings.contains("islands") ? settings["islands"].get<unsigned>() : 1;
  if (!j.contains("islands") || !j["islands"].is_array() || j["islands"].size() != islands)
    throw std::runtime_error(path + ": field 'islands' does not hold " + std::to_string(islands) + " islands");
  return j;
}

}  // namespace tailor::search
