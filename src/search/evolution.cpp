// SPDX-License-Identifier: MIT
// The evolutionary loop (evolution.h). Every random choice comes from one
// generator seeded by the options, in a fixed order, and evaluation results
// depend only on the DMM: the same seed gives the same search.
#include "evolution.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <random>

#include "phenotype.h"

namespace tailor::search {

namespace {

class Engine {
 public:
  Engine(const Grammar& g, const std::vector<std::uint64_t>& sizes, Evaluator& ev, const SearchOptions& o)
      : grammar_(g), sizes_(sizes), evaluator_(ev), o_(o), rng_(o.seed) {}

  Genome random_genome() {
    const unsigned len = o_.min_length + static_cast<unsigned>(rng_() % (o_.max_length - o_.min_length + 1));
    Genome g(len);
    for (auto& c : g) c = static_cast<std::uint8_t>(rng_());
    return g;
  }

  // Maps and evaluates a batch (in parallel inside the evaluator).
  void evaluate(std::vector<Individual>& batch) {
    for (auto& ind : batch) {
      ind.spec.reset();
      ind.phenotype.clear();
      ind.used = ind.genome.size();
      if (auto m = map_genome(grammar_, ind.genome, sizes_, o_.max_wraps)) {
        ind.phenotype = m->phenotype;
        ind.used = std::min(m->codons_used, ind.genome.size());
        try {
          ind.spec = phenotype_to_spec(m->phenotype);
        } catch (const simulate::SpecError&) {
        }
      }
    }
    std::vector<const simulate::DmmSpec*> specs;
    for (auto& ind : batch) specs.push_back(ind.spec ? &*ind.spec : nullptr);
    std::vector<Evaluation> evals = evaluator_.evaluate(specs);
    for (std::size_t i = 0; i < batch.size(); ++i) batch[i].eval = std::move(evals[i]);
    const std::vector<bool> measured = o_.validator ? validate(batch) : std::vector<bool>(batch.size(), true);
    for (std::size_t i = 0; i < batch.size(); ++i) {
      if (!batch[i].eval.valid) batch[i].spec.reset();
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
      kids.push_back({std::move(c), {}, {}, {}, 0, 0, 0});
      if (kids.size() < count) kids.push_back({std::move(d), {}, {}, {}, 0, 0, 0});
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

  SearchResult run() {
    const auto start = std::chrono::steady_clock::now();
    std::vector<Individual> pop(o_.population);
    for (auto& ind : pop) ind.genome = random_genome();
    evaluate(pop);
    if (o_.pareto) rank(pop);
    report(0, start);
    for (unsigned gen = 1; gen <= o_.generations; ++gen) {
      if (o_.pareto) {
        std::vector<Individual> all = pop;
        std::vector<Individual> kids = offspring(pop, pop.size());
        all.insert(all.end(), std::make_move_iterator(kids.begin()), std::make_move_iterator(kids.end()));
        rank(all);
        std::stable_sort(all.begin(), all.end(), [&](const Individual& a, const Individual& b) { return better(a, b); });
        all.resize(pop.size());
        pop = std::move(all);
        rank(pop);
      } else {
        std::stable_sort(pop.begin(), pop.end(), [&](const Individual& a, const Individual& b) { return better(a, b); });
        const std::size_t elite = std::min<std::size_t>(o_.elite, pop.size());
        std::vector<Individual> next(pop.begin(), pop.begin() + static_cast<std::ptrdiff_t>(elite));
        std::vector<Individual> kids = offspring(pop, pop.size() - elite);
        next.insert(next.end(), std::make_move_iterator(kids.begin()), std::make_move_iterator(kids.end()));
        pop = std::move(next);
      }
      report(gen, start);
      if (o_.stop && o_.stop()) break;
    }
    SearchResult r;
    r.best = best_;
    r.validations = validations_;
    if (o_.pareto) {
      for (const auto& ind : pop)
        if (ind.rank == 0 && ind.eval.valid) r.front.push_back(ind);
      std::sort(r.front.begin(), r.front.end(), [](const Individual& a, const Individual& b) { return a.eval.fitness < b.eval.fitness; });
      r.front.erase(std::unique(r.front.begin(), r.front.end(), [](const Individual& a, const Individual& b) {
                      return a.spec && b.spec && *a.spec == *b.spec;
                    }), r.front.end());
      if (o_.validator) r.front = measured_front(std::move(r.front));
    }
    r.evaluations = evaluations_;
    r.simulations = evaluator_.simulations();
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
  }

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
    SearchResult r;
    r.best = best_;
    r.evaluations = evaluations_;
    r.simulations = evaluator_.simulations();
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
  }

 private:
  // A sample can flatter a DMM whose costs grow with the heap (coalescing
  // without splitting, say), so candidates for the best are measured by the
  // validator (on the whole trace) first, and carry that measure from then
  // on, which also takes flattered DMMs out of the elite. A candidate is one
  // whose ranked fitness beats the best's ranked fitness, or the best's
  // measured one when the sample flattered the best; at most kValidated per
  // batch, the best ranked first (measured together, in parallel).
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
    std::vector<std::size_t> picked;
    std::vector<const simulate::DmmSpec*> specs;
    for (std::size_t i : candidates) {
      if (picked.size() == kValidated) break;
      if (std::any_of(picked.begin(), picked.end(), [&](std::size_t p) { return batch[p].phenotype == batch[i].phenotype; }))
        continue;
      picked.push_back(i);
      specs.push_back(&*batch[i].spec);
    }
    if (picked.empty()) return measured;
    const std::vector<Evaluation> evals = o_.validator->evaluate(specs);
    validations_ += evals.size();
    double best = best_.eval.valid ? best_.eval.fitness : std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < picked.size(); ++k) {
      const double ranked = batch[picked[k]].eval.fitness;
      validated_.emplace(batch[picked[k]].phenotype, evals[k]);
      if (evals[k].valid && evals[k].fitness < best) {
        best = evals[k].fitness;
        best_ranked_ = ranked;
      }
    }
    for (std::size_t i : candidates)  // the picked ones and their twins in the batch
      if (auto it = validated_.find(batch[i].phenotype); it != validated_.end()) {
        batch[i].eval = it->second;
        measured[i] = true;
      }
    return measured;
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
    if (ind.eval.valid && (!best_.eval.valid || ind.eval.fitness < best_.eval.fitness)) best_ = ind;
  }
  void report(unsigned gen, std::chrono::steady_clock::time_point start) {
    if (!o_.progress) return;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    o_.progress(gen, best_.eval.fitness, s > 0 ? static_cast<double>(evaluations_) / s : 0);
  }

  const Grammar& grammar_;
  const std::vector<std::uint64_t>& sizes_;
  Evaluator& evaluator_;
  const SearchOptions& o_;
  std::mt19937_64 rng_;
  Individual best_;
  double best_ranked_ = std::numeric_limits<double>::infinity();  // the best's fitness on the evaluator's trace
  std::map<std::string, Evaluation> validated_;                    // phenotype -> the validator's measure
  std::uint64_t evaluations_ = 0, validations_ = 0;
};

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

SearchResult evolve(const Grammar& grammar, const std::vector<std::uint64_t>& trace_sizes, Evaluator& evaluator,
                    const SearchOptions& options) {
  check(options);
  return Engine(grammar, trace_sizes, evaluator, options).run();
}

SearchResult random_sampling(const Grammar& grammar, const std::vector<std::uint64_t>& trace_sizes,
                             Evaluator& evaluator, const SearchOptions& options) {
  check(options);
  return Engine(grammar, trace_sizes, evaluator, options).sample();
}

}  // namespace tailor::search
