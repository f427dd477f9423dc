// SPDX-License-Identifier: MIT
// The evolutionary loop (evolution.h). Every random choice comes from one
// generator seeded by the options, in a fixed order, and evaluation results
// depend only on the DMM: the same seed gives the same search.
#include "search/evolution.h"

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <random>
#include <sstream>
#include <stdexcept>

#include "search/phenotype.h"

namespace tailor::search {

namespace {

// The phenotype and spec of a genome (none when the mapping or the spec
// fails), and the codons the mapping read.
void express(Individual& ind, const Grammar& grammar, const std::vector<std::uint64_t>& sizes, unsigned max_wraps) {
  ind.spec.reset();
  ind.phenotype.clear();
  ind.used = ind.genome.size();
  if (auto m = map_genome(grammar, ind.genome, sizes, max_wraps)) {
    ind.phenotype = m->phenotype;
    ind.used = std::min(m->codons_used, ind.genome.size());
    try {
      ind.spec = phenotype_to_spec(m->phenotype);
    } catch (const simulate::SpecError&) {
    }
  }
}

// Exact doubles: their bits (infinity, the measure of an invalid DMM, included).
std::uint64_t bits(double x) { return std::bit_cast<std::uint64_t>(x); }

const nlohmann::json& field(const nlohmann::json& j, const char* name) {
  if (!j.is_object() || !j.contains(name)) throw std::invalid_argument(std::string("missing field '") + name + "'");
  return j.at(name);
}

template <class T>
T get(const nlohmann::json& j, const char* name) {
  const nlohmann::json& v = field(j, name);
  try {
    return v.get<T>();
  } catch (const nlohmann::json::exception&) {
    throw std::invalid_argument(std::string("field '") + name + "' has the wrong type");
  }
}

double get_double(const nlohmann::json& j, const char* name) {
  return std::bit_cast<double>(get<std::uint64_t>(j, name));
}

nlohmann::json metrics_to_json(const simulate::Metrics& m) {
  nlohmann::json j = {{"dmm", m.dmm},
                      {"steps_by_kind", m.steps_by_kind},
                      {"front", {m.front_hits, m.front_misses, m.front_kept, m.front_passed}},
                      {"energy_nj", bits(m.energy_nj)},
                      {"max_in_use", m.max_in_use},
                      {"seconds", bits(m.seconds)}};
  simulate::each_count(m, [&](const char* key, std::uint64_t v) { j[key] = v; });
  return j;
}

simulate::Metrics metrics_from_json(const nlohmann::json& j) {
  simulate::Metrics m;
  m.dmm = get<std::string>(j, "dmm");
  simulate::each_count(m, [&](const char* key, std::uint64_t& v) { v = get<std::uint64_t>(j, key); });
  {
    const auto k = get<std::vector<std::uint64_t>>(j, "steps_by_kind");
    if (k.size() != m.steps_by_kind.size()) throw std::invalid_argument("field 'steps_by_kind' does not hold a count per mechanism");
    std::copy(k.begin(), k.end(), m.steps_by_kind.begin());
  }
  {
    const auto f = get<std::vector<std::uint64_t>>(j, "front");
    if (f.size() != 4) throw std::invalid_argument("field 'front' does not hold 4 counts");
    m.front_hits = f[0], m.front_misses = f[1], m.front_kept = f[2], m.front_passed = f[3];
  }
  m.energy_nj = get_double(j, "energy_nj");
  m.max_in_use = get<std::uint64_t>(j, "max_in_use");
  m.seconds = get_double(j, "seconds");
  return m;
}

std::string to_hex(const Genome& g) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (std::uint8_t c : g) {
    s += digits[c >> 4];
    s += digits[c & 15];
  }
  return s;
}

Genome from_hex(const std::string& s) {
  auto value = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  if (s.size() % 2) throw std::invalid_argument("field 'genome' has an odd number of hex digits");
  Genome g(s.size() / 2);
  for (std::size_t i = 0; i < g.size(); ++i) {
    const int hi = value(s[2 * i]), lo = value(s[2 * i + 1]);
    if (hi < 0 || lo < 0) throw std::invalid_argument("field 'genome' is not lowercase hex");
    g[i] = static_cast<std::uint8_t>(hi * 16 + lo);
  }
  return g;
}

}  // namespace

nlohmann::json evaluation_to_json(const Evaluation& e) {
  nlohmann::json per = nlohmann::json::array();
  for (const Evaluation& t : e.per_trace) per.push_back(evaluation_to_json(t));
  return {{"valid", e.valid},   {"time", bits(e.time)},         {"memory", bits(e.memory)},
          {"energy", bits(e.energy)}, {"fitness", bits(e.fitness)}, {"metrics", metrics_to_json(e.metrics)},
          {"per_trace", per}};
}

Evaluation evaluation_from_json(const nlohmann::json& j) {
  Evaluation e;
  e.valid = get<bool>(j, "valid");
  e.time = get_double(j, "time");
  e.memory = get_double(j, "memory");
  e.energy = get_double(j, "energy");
  e.fitness = get_double(j, "fitness");
  e.metrics = metrics_from_json(field(j, "metrics"));
  const nlohmann::json& per = field(j, "per_trace");
  if (!per.is_array()) throw std::invalid_argument("field 'per_trace' is not an array");
  for (const auto& t : per) e.per_trace.push_back(evaluation_from_json(t));
  return e;
}

class Island::Engine {
 public:
  Engine(const Grammar& g, const std::vector<std::uint64_t>& sizes, Fitness& ev, const SearchOptions& o)
      : grammar_(g), sizes_(sizes), evaluator_(ev), o_(o), rng_(o.seed), start_(std::chrono::steady_clock::now()) {}

  Genome random_genome() {
    const unsigned len = o_.min_length + static_cast<unsigned>(rng_() % (o_.max_length - o_.min_length + 1));
    Genome g(len);
    for (auto& c : g) c = static_cast<std::uint8_t>(rng_());
    return g;
  }

  // Maps and evaluates a batch (in parallel inside the evaluator), and
  // measures the previous batch's candidates for the best with the
  // validator in the same request (validate()).
  void evaluate(std::vector<Individual>& batch) {
    for (auto& ind : batch) express(ind, grammar_, sizes_, o_.max_wraps);
    std::vector<const simulate::DmmSpec*> specs;
    for (auto& ind : batch) specs.push_back(ind.spec ? &*ind.spec : nullptr);
    std::vector<Evaluation> evals;
    if (o_.validator && !pending_.empty()) {
      auto [ranked, measures] = evaluator_.evaluate_with(specs, *o_.validator, pending_specs());
      evals = std::move(ranked);
      settle(measures);
    } else {
      evals = evaluator_.evaluate(specs);
    }
    for (std::size_t i = 0; i < batch.size(); ++i) batch[i].eval = std::move(evals[i]);
    const std::vector<bool> measured = o_.validator ? validate(batch) : std::vector<bool>(batch.size(), true);
    for (std::size_t i = 0; i < batch.size(); ++i) {
      if (!batch[i].eval.valid) batch[i].spec.reset();
      batch[i].measured = measured[i];
      if (measured[i]) consider(batch[i]);
    }
    evaluations_ += batch.size();
  }

  // Tournament: the better of `tournament` random individuals (by fitness, or
  // by rank then crowding in Pareto mode).
  const Individual& select(const std::vector<Individual>& pop) {
    const Individual* best = &pop[rng_() % pop.size()];
    for (unsigned k = 1; k < o_.tournament; ++k) {
      const Individual& c = pop[rng_() % pop.size()];
      if (better(c, *best)) best = &c;
    }
    return *best;
  }

  bool better(const Individual& a, const Individual& b) const {
    if (o_.pareto) return a.rank != b.rank ? a.rank < b.rank : a.crowding > b.crowding;
    return a.eval.fitness < b.eval.fitness;
  }

  // One-point crossover with the points inside each parent's effective
  // part (the codons its mapping read): a cut in the unread tail would only
  // copy a parent.
  std::pair<Genome, Genome> crossover(const Individual& x, const Individual& y) {
    const Genome& a = x.genome;
    const Genome& b = y.genome;
    if (std::uniform_real_distribution<double>(0, 1)(rng_) >= o_.crossover) return {a, b};
    const std::size_t pa = rng_() % (x.used + 1), pb = rng_() % (y.used + 1);
    Genome c(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(pa));
    c.insert(c.end(), b.begin() + static_cast<std::ptrdiff_t>(pb), b.end());
    Genome d(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(pb));
    d.insert(d.end(), a.begin() + static_cast<std::ptrdiff_t>(pa), a.end());
    constexpr std::size_t kLongest = 1024;
    if (c.empty()) c = a;
    if (d.empty()) d = b;
    if (c.size() > kLongest) c.resize(kLongest);
    if (d.size() > kLongest) d.resize(kLongest);
    return {c, d};
  }

  // Each codon of the effective part (as long as the parent's, a fair
  // estimate for the child) mutates with the mutation probability.
  void mutate(Genome& g, std::size_t used) {
    std::uniform_real_distribution<double> u(0, 1);
    for (std::size_t i = 0; i < std::min(used, g.size()); ++i)
      if (u(rng_) < o_.mutation) g[i] = static_cast<std::uint8_t>(rng_());
  }

  std::vector<Individual> offspring(const std::vector<Individual>& pop, std::size_t count) {
    std::vector<Individual> kids;
    while (kids.size() < count) {
      const Individual& a = select(pop);
      const Individual& b = select(pop);
      auto [c, d] = crossover(a, b);
      mutate(c, std::max(a.used, b.used));
      mutate(d, std::max(a.used, b.used));
      kids.push_back({std::move(c), {}, {}, {}, 0, 0, 0, false});
      if (kids.size() < count) kids.push_back({std::move(d), {}, {}, {}, 0, 0, 0, false});
    }
    evaluate(kids);
    return kids;
  }

  // Non-dominated sorting with crowding distance (NSGA-II) over time, memory, energy.
  static void rank(std::vector<Individual>& pop) {
    const std::size_t n = pop.size();
    auto objectives = [](const Individual& x) { return std::array<double, 3>{x.eval.time, x.eval.memory, x.eval.energy}; };
    auto dominates = [](const Individual& a, const Individual& b) { return search::dominates(a.eval, b.eval); };
    std::vector<std::vector<std::size_t>> dominated(n);
    std::vector<unsigned> count(n, 0);
    std::vector<std::size_t> current;
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) {
        if (i == j) continue;
        if (dominates(pop[i], pop[j])) dominated[i].push_back(j);
        else if (dominates(pop[j], pop[i])) ++count[i];
      }
      if (count[i] == 0) current.push_back(i);
    }
    for (unsigned r = 0; !current.empty(); ++r) {
      std::vector<std::size_t> next;
      for (std::size_t i : current) {
        pop[i].rank = r;
        for (std::size_t j : dominated[i])
          if (--count[j] == 0) next.push_back(j);
      }
      // Crowding distance within the front.
      for (std::size_t i : current) pop[i].crowding = 0;
      for (int k = 0; k < 3; ++k) {
        std::vector<std::size_t> f = current;
        std::sort(f.begin(), f.end(), [&](std::size_t a, std::size_t b) { return objectives(pop[a])[k] < objectives(pop[b])[k]; });
        const double lo = objectives(pop[f.front()])[k], hi = objectives(pop[f.back()])[k];
        pop[f.front()].crowding = pop[f.back()].crowding = std::numeric_limits<double>::infinity();
        if (!(hi > lo) || !std::isfinite(hi - lo)) continue;
        for (std::size_t m = 1; m + 1 < f.size(); ++m)
          pop[f[m]].crowding += (objectives(pop[f[m + 1]])[k] - objectives(pop[f[m - 1]])[k]) / (hi - lo);
      }
      current = std::move(next);
    }
  }

  void start() {
    pop_.assign(o_.population, Individual{});
    for (auto& ind : pop_) ind.genome = random_genome();
    evaluate(pop_);
    if (o_.pareto) rank(pop_);
    generation_ = 0;
    report(0);
  }

  void step() {
    ++generation_;
    if (o_.pareto) {
      std::vector<Individual> all = pop_;
      std::vector<Individual> kids = offspring(pop_, pop_.size());
      all.insert(all.end(), std::make_move_iterator(kids.begin()), std::make_move_iterator(kids.end()));
      refresh(all);
      rank(all);
      std::stable_sort(all.begin(), all.end(), [&](const Individual& a, const Individual& b) { return better(a, b); });
      all.resize(pop_.size());
      pop_ = std::move(all);
      rank(pop_);
    } else {
      std::stable_sort(pop_.begin(), pop_.end(), [&](const Individual& a, const Individual& b) { return better(a, b); });
      const std::size_t elite = std::min<std::size_t>(o_.elite, pop_.size());
      // The elite is the best `elite` distinct DMMs (by phenotype), copies
      // only when there are fewer: copies of one DMM filled it within a
      // few generations (one seed of boolean_sets: six of 0.8076 from
      // generation 11 on, none better found in 90 more), and the search
      // stopped exploring.
      std::vector<Individual> next;
      std::vector<const Individual*> twins;
      for (const Individual& ind : pop_) {
        if (next.size() == elite) break;
        if (std::any_of(next.begin(), next.end(), [&](const Individual& e) { return e.phenotype == ind.phenotype; }))
          twins.push_back(&ind);
        else
          next.push_back(ind);
      }
      for (std::size_t i = 0; i < twins.size() && next.size() < elite; ++i) next.push_back(*twins[i]);
      std::vector<Individual> kids = offspring(pop_, pop_.size() - elite);
      next.insert(next.end(), std::make_move_iterator(kids.begin()), std::make_move_iterator(kids.end()));
      pop_ = std::move(next);
      refresh(pop_);
    }
    report(generation_);
  }

  SearchResult run() {
    start();
    while (generation_ < o_.generations) {
      step();
      if (o_.stop && o_.stop()) break;  // the caller's budget (SearchOptions::stop)
    }
    return finish();
  }

  SearchResult finish() {
    settle_pending();
    refresh(pop_);
    if (o_.pareto) rank(pop_);
    SearchResult r;
    r.best = best_;
    r.finalists = finalists_;
    r.validations = validations_;
    if (o_.pareto) {
      for (const auto& ind : pop_)
        if (ind.rank == 0 && ind.eval.valid) r.front.push_back(ind);
      std::sort(r.front.begin(), r.front.end(), [](const Individual& a, const Individual& b) { return a.eval.fitness < b.eval.fitness; });
      r.front.erase(std::unique(r.front.begin(), r.front.end(), [](const Individual& a, const Individual& b) {
                      return a.spec && b.spec && *a.spec == *b.spec;
                    }), r.front.end());
      if (o_.validator) r.front = measured_front(std::move(r.front));
    }
    r.evaluations = evaluations_;
    r.simulations = evaluator_.simulations();
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    return r;
  }

  unsigned generation() const noexcept { return generation_; }
  double best_fitness() const noexcept { return best_.eval.fitness; }
  std::uint64_t evaluations() const noexcept { return evaluations_; }

  // Copies of the best `count` individuals, best first.
  std::vector<Individual> emigrants(std::size_t count) const {
    std::vector<Individual> sorted = pop_;
    std::stable_sort(sorted.begin(), sorted.end(), [&](const Individual& a, const Individual& b) { return better(a, b); });
    sorted.resize(std::min(count, sorted.size()));
    return sorted;
  }

  // The arrivals take the places of the worst; a measured arrival may become
  // the best, and its measure is known from then on.
  void immigrate(std::vector<Individual> arrivals) {
    std::stable_sort(pop_.begin(), pop_.end(), [&](const Individual& a, const Individual& b) { return better(a, b); });
    const std::size_t n = std::min(arrivals.size(), pop_.size());
    for (std::size_t k = 0; k < n; ++k) {
      Individual& a = arrivals[k];
      if (a.measured && a.eval.valid) {
        if (o_.validator) validated_.emplace(a.phenotype, a.eval);
        consider(a);
      }
      pop_[pop_.size() - n + k] = std::move(a);
    }
    if (o_.pareto) rank(pop_);
  }

  nlohmann::json save() const {
    std::ostringstream rng;
    rng << rng_;
    nlohmann::json pop = nlohmann::json::array();
    for (const auto& ind : pop_) pop.push_back(individual_to_json(ind));
    nlohmann::json validated = nlohmann::json::array();
    for (const auto& [phenotype, eval] : validated_)
      validated.push_back({{"phenotype", phenotype}, {"eval", evaluation_to_json(eval)}});
    return {{"generation", generation_},
            {"rng", rng.str()},
            {"population", pop},
            {"best", individual_to_json(best_)},
            {"finalists", individuals_to_json(finalists_)},
            {"best_ranked", std::bit_cast<std::uint64_t>(best_ranked_)},
            {"validated", validated},
            {"pending", individuals_to_json(pending_)},
            {"evaluations", evaluations_},
            {"validations", validations_}};
  }

  void restore(const nlohmann::json& j);
  // Evaluations the evolution makes: the first population, then each
  // generation's offspring (all of them in Pareto mode, all but the elite otherwise).
  std::uint64_t budget() const {
    const std::uint64_t per = o_.pareto ? o_.population : o_.population - std::min(o_.elite, o_.population);
    return o_.population + std::uint64_t{o_.generations} * per;
  }

  SearchResult sample() {
    const auto start = std::chrono::steady_clock::now();
    for (std::uint64_t left = budget(); left > 0;) {
      std::vector<Individual> batch(std::min<std::uint64_t>(left, o_.population));
      for (auto& ind : batch) ind.genome = random_genome();
      evaluate(batch);
      left -= batch.size();
    }
    settle_pending();
    SearchResult r;
    r.best = best_;
    r.finalists = finalists_;
    r.evaluations = evaluations_;
    r.simulations = evaluator_.simulations();
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
  }

 private:
  // A sample can flatter a DMM whose costs grow with the heap (coalescing
  // without splitting, say), so candidates for the best are measured by the
  // validator (on the whole trace, or its validation sample and prefix)
  // before they can become the best, and carry that measure from then on,
  // which also takes flattered DMMs out of the elite. A candidate is one
  // whose ranked fitness beats the best's ranked fitness, or the best's
  // measured one when the sample flattered the best; at most kValidated per
  // batch, the best ranked first. They are measured with the next batch
  // (pending_, settle()), in one request with its ranked evaluations: a
  // few long validation runs alone would leave the other processes of a
  // shared evaluation (shared_evaluation.h) idle for a round, beside the
  // many short ones they even out. A candidate thus ranks by its sampled
  // fitness for one generation; finish() measures the last ones.
  // Returns, for each individual, whether it carries the validator's measure.
  static constexpr std::size_t kValidated = 4;
  std::vector<bool> validate(std::vector<Individual>& batch) {
    std::vector<bool> measured(batch.size(), false);
    const double threshold = best_.eval.valid ? std::max(best_ranked_, best_.eval.fitness) : best_ranked_;
    std::vector<std::size_t> candidates;
    for (std::size_t i = 0; i < batch.size(); ++i) {
      if (!batch[i].eval.valid) continue;
      if (auto it = validated_.find(batch[i].phenotype); it != validated_.end()) {
        batch[i].eval = it->second;
        measured[i] = true;
      } else if (batch[i].eval.fitness < threshold) {
        candidates.push_back(i);
      }
    }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [&](std::size_t a, std::size_t b) { return batch[a].eval.fitness < batch[b].eval.fitness; });
    for (std::size_t i : candidates) {
      if (pending_.size() == kValidated) break;
      if (std::none_of(pending_.begin(), pending_.end(), [&](const Individual& p) { return p.phenotype == batch[i].phenotype; }))
        pending_.push_back(batch[i]);
    }
    return measured;
  }

  std::vector<const simulate::DmmSpec*> pending_specs() const {
    std::vector<const simulate::DmmSpec*> specs;
    for (const Individual& p : pending_) specs.push_back(&*p.spec);
    return specs;
  }

  // The validator's measures of the pending candidates: known from now on
  // (validate() gives them to their twins), the best among them may become
  // the best, and the population's copies carry them (refresh()).
  void settle(const std::vector<Evaluation>& measures) {
    validations_ += measures.size();
    for (std::size_t k = 0; k < pending_.size(); ++k) {
      Individual& p = pending_[k];
      validated_.emplace(p.phenotype, measures[k]);
      const double ranked = p.eval.fitness;
      p.eval = measures[k];
      p.measured = true;
      if (p.eval.valid && (!best_.eval.valid || p.eval.fitness < best_.eval.fitness)) best_ranked_ = ranked;
      consider(p);
    }
    pending_.clear();
  }

  // Measures the candidates still pending (the end of a search).
  void settle_pending() {
    if (o_.validator && !pending_.empty()) settle(o_.validator->evaluate(pending_specs()));
  }

  // Individuals whose measure the validator has taken since they were ranked carry it.
  void refresh(std::vector<Individual>& pop) const {
    if (!o_.validator) return;
    for (Individual& ind : pop)
      if (!ind.measured && ind.eval.valid)
        if (auto it = validated_.find(ind.phenotype); it != validated_.end()) {
          ind.eval = it->second;
          ind.measured = true;
          if (!ind.eval.valid) ind.spec.reset();
        }
  }

  // The final front measured by the validator: the ones the others dominate
  // there dropped, best weighted fitness first.
  std::vector<Individual> measured_front(std::vector<Individual> front) {
    std::vector<const simulate::DmmSpec*> specs;
    for (const auto& ind : front) specs.push_back(&*ind.spec);
    const std::vector<Evaluation> evals = o_.validator->evaluate(specs);
    validations_ += evals.size();
    std::vector<Individual> measured, kept;
    for (std::size_t i = 0; i < front.size(); ++i)
      if (evals[i].valid) {
        front[i].eval = evals[i];
        measured.push_back(std::move(front[i]));
      }
    for (const auto& a : measured)
      if (std::none_of(measured.begin(), measured.end(), [&](const Individual& b) { return dominates(b.eval, a.eval); }))
        kept.push_back(a);
    std::stable_sort(kept.begin(), kept.end(),
                     [](const Individual& a, const Individual& b) { return a.eval.fitness < b.eval.fitness; });
    return kept;
  }

  void consider(const Individual& ind) {
    if (!ind.eval.valid) return;
    if (!best_.eval.valid || ind.eval.fitness < best_.eval.fitness) best_ = ind;
    keep_finalist(finalists_, ind, o_.finalists);
  }
  void report(unsigned gen) {
    if (!o_.progress) return;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    o_.progress(gen, best_.eval.fitness, s > 0 ? static_cast<double>(evaluations_) / s : 0);
  }

  const Grammar& grammar_;
  const std::vector<std::uint64_t>& sizes_;
  Fitness& evaluator_;
  const SearchOptions o_;
  std::mt19937_64 rng_;
  std::chrono::steady_clock::time_point start_;
  std::vector<Individual> pop_;
  unsigned generation_ = 0;
  Individual best_;
  std::vector<Individual> finalists_;  // SearchOptions::finalists, best first
  double best_ranked_ = std::numeric_limits<double>::infinity();  // the best's fitness on the evaluator's trace
  std::map<std::string, Evaluation> validated_;                    // phenotype -> the validator's measure
  std::vector<Individual> pending_;  // candidates for the best, measured with the next batch (validate())
  std::uint64_t evaluations_ = 0, validations_ = 0;
};

namespace {

void check(const SearchOptions& o) {
  if (o.population < 2) throw std::invalid_argument("--population: at least 2");
  if (o.min_length == 0 || o.max_length < o.min_length) throw std::invalid_argument("chromosome lengths: 1 <= min <= max");
  if (o.tournament == 0) throw std::invalid_argument("tournament size: at least 1");
  if (o.crossover < 0 || o.crossover > 1 || o.mutation < 0 || o.mutation > 1)
    throw std::invalid_argument("crossover and mutation are probabilities in [0, 1]");
}

}  // namespace

bool dominates(const Evaluation& a, const Evaluation& b) noexcept {
  const std::array<double, 3> oa{a.time, a.memory, a.energy}, ob{b.time, b.memory, b.energy};
  bool strictly = false;
  for (int k = 0; k < 3; ++k) {
    if (oa[k] > ob[k]) return false;
    strictly |= oa[k] < ob[k];
  }
  return strictly;
}

SearchResult evolve(const Grammar& grammar, const std::vector<std::uint64_t>& trace_sizes, Fitness& evaluator,
                    const SearchOptions& options) {
  check(options);
  return Island::Engine(grammar, trace_sizes, evaluator, options).run();
}

SearchResult random_sampling(const Grammar& grammar, const std::vector<std::uint64_t>& trace_sizes,
                             Fitness& evaluator, const SearchOptions& options) {
  check(options);
  return Island::Engine(grammar, trace_sizes, evaluator, options).sample();
}

Island::Island(const Grammar& grammar, const std::vector<std::uint64_t>& trace_sizes, Fitness& evaluator,
               const SearchOptions& options) {
  check(options);
  engine_ = std::make_unique<Engine>(grammar, trace_sizes, evaluator, options);
}
Island::~Island() = default;
Island::Island(Island&&) noexcept = default;
void Island::start() { engine_->start(); }
void Island::step() { engine_->step(); }
unsigned Island::generation() const noexcept { return engine_->generation(); }
double Island::best_fitness() const noexcept { return engine_->best_fitness(); }
std::uint64_t Island::evaluations() const noexcept { return engine_->evaluations(); }
std::vector<Individual> Island::emigrants(std::size_t count) const { return engine_->emigrants(count); }
void Island::immigrate(std::vector<Individual> arrivals) { engine_->immigrate(std::move(arrivals)); }
SearchResult Island::finish() { return engine_->finish(); }
nlohmann::json Island::save() const { return engine_->save(); }
void Island::restore(const nlohmann::json& state) { engine_->restore(state); }

void keep_finalist(std::vector<Individual>& finalists, const Individual& ind, std::size_t keep) {
  if (keep == 0 || !ind.eval.valid) return;
  if (std::any_of(finalists.begin(), finalists.end(), [&](const Individual& f) { return f.phenotype == ind.phenotype; }))
    return;
  if (finalists.size() == keep && !(ind.eval.fitness < finalists.back().eval.fitness)) return;
  // After the ones at least as fit: the first seen stays ahead on a tie.
  auto at = std::upper_bound(finalists.begin(), finalists.end(), ind.eval.fitness,
                             [](double f, const Individual& x) { return f < x.eval.fitness; });
  finalists.insert(at, ind);
  if (finalists.size() > keep) finalists.pop_back();
}

nlohmann::json individuals_to_json(const std::vector<Individual>& list) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& ind : list) a.push_back(individual_to_json(ind));
  return a;
}

nlohmann::json individual_to_json(const Individual& ind) {
  return {{"genome", to_hex(ind.genome)}, {"used", ind.used},          {"measured", ind.measured},
          {"rank", ind.rank},             {"crowding", bits(ind.crowding)}, {"eval", evaluation_to_json(ind.eval)}};
}

Individual individual_from_json(const nlohmann::json& j, const Grammar& grammar,
                                const std::vector<std::uint64_t>& trace_sizes, unsigned max_wraps) {
  Individual ind;
  ind.genome = from_hex(get<std::string>(j, "genome"));
  ind.eval = evaluation_from_json(field(j, "eval"));
  if (!ind.genome.empty()) express(ind, grammar, trace_sizes, max_wraps);
  if (!ind.eval.valid) ind.spec.reset();
  else if (!ind.spec) throw std::invalid_argument("a valid individual's genome maps to no DMM (another grammar?)");
  ind.used = get<std::size_t>(j, "used");
  ind.measured = get<bool>(j, "measured");
  ind.rank = get<unsigned>(j, "rank");
  ind.crowding = get_double(j, "crowding");
  return ind;
}

std::vector<Individual> individuals_from_json(const nlohmann::json& list, const Grammar& grammar,
                                              const std::vector<std::uint64_t>& trace_sizes, unsigned max_wraps) {
  if (!list.is_array()) throw std::invalid_argument("not an array of individuals");
  std::vector<Individual> out;
  out.reserve(list.size());
  for (const auto& j : list) out.push_back(individual_from_json(j, grammar, trace_sizes, max_wraps));
  return out;
}

void Island::Engine::restore(const nlohmann::json& j) {
  generation_ = get<unsigned>(j, "generation");
  std::istringstream rng(get<std::string>(j, "rng"));
  rng >> rng_;
  if (!rng) throw std::invalid_argument("field 'rng' is not a generator's state");
  const nlohmann::json& pop = field(j, "population");
  if (!pop.is_array() || pop.size() != o_.population)
    throw std::invalid_argument("field 'population' does not hold " + std::to_string(o_.population) + " individuals");
  pop_ = individuals_from_json(pop, grammar_, sizes_, o_.max_wraps);
  best_ = individual_from_json(field(j, "best"), grammar_, sizes_, o_.max_wraps);
  const nlohmann::json& finalists = field(j, "finalists");
  if (!finalists.is_array()) throw std::invalid_argument("field 'finalists' is not an array");
  finalists_ = individuals_from_json(finalists, grammar_, sizes_, o_.max_wraps);
  best_ranked_ = get_double(j, "best_ranked");
  validated_.clear();
  const nlohmann::json& validated = field(j, "validated");
  if (!validated.is_array()) throw std::invalid_argument("field 'validated' is not an array");
  for (const auto& v : validated)
    validated_.emplace(get<std::string>(v, "phenotype"), evaluation_from_json(field(v, "eval")));
  const nlohmann::json& pending = field(j, "pending");
  if (!pending.is_array()) throw std::invalid_argument("field 'pending' is not an array");
  pending_ = individuals_from_json(pending, grammar_, sizes_, o_.max_wraps);
  evaluations_ = get<std::uint64_t>(j, "evaluations");
  validations_ = get<std::uint64_t>(j, "validations");
}

}  // namespace tailor::search
