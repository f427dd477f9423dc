// SPDX-License-Identifier: MIT
// Fitness of DMMs on a trace (evaluator.h).
#include "evaluator.h"

#include <algorithm>
#include <atomic>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "simulator.h"

namespace tailor::search {

Weights parse_weights(const std::string& text) {
  Weights w;
  std::istringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    if (item.empty()) continue;
    const auto eq = item.find('=');
    if (eq == std::string::npos) throw std::invalid_argument("--weights: '" + item + "' is not name=value");
    const std::string key = item.substr(0, eq);
    double v;
    try {
      std::size_t used;
      v = std::stod(item.substr(eq + 1), &used);
      if (used != item.size() - eq - 1) throw std::invalid_argument("trailing");
    } catch (const std::exception&) {
      throw std::invalid_argument("--weights: '" + item + "': the value is not a number");
    }
    if (v < 0) throw std::invalid_argument("--weights: '" + item + "': weights are not negative");
    if (key == "time") w.time = v;
    else if (key == "memory") w.memory = v;
    else if (key == "energy") w.energy = v;
    else throw std::invalid_argument("--weights: unknown objective '" + key + "' (known: time, memory, energy)");
  }
  if (w.time + w.memory + w.energy <= 0) throw std::invalid_argument("--weights: at least one weight must be positive");
  return w;
}

Evaluator::Evaluator(const simulate::ReplayTrace& trace, Weights weights, unsigned threads)
    : trace_(trace), weights_(weights), threads_(std::max(1u, threads)), kng_(simulate::simulate(trace, "kng")) {}

Evaluation Evaluator::normalize(const simulate::Metrics& m) const {
  Evaluation e;
  e.valid = true;
  e.metrics = m;
  auto ratio = [](double x, double base) { return base > 0 ? x / base : (x > 0 ? 1e9 : 1.0); };
  e.time = ratio(static_cast<double>(m.steps), static_cast<double>(kng_.steps));
  e.memory = ratio(static_cast<double>(m.memory_usage), static_cast<double>(kng_.memory_usage));
  e.energy = ratio(m.energy_nj, kng_.energy_nj);
  e.fitness = (weights_.time * e.time + weights_.memory * e.memory + weights_.energy * e.energy) /
              (weights_.time + weights_.memory + weights_.energy);
  return e;
}

std::vector<Evaluation> Evaluator::evaluate(const std::vector<const simulate::DmmSpec*>& specs) {
  std::vector<std::string> keys(specs.size());
  std::vector<std::size_t> todo;  // first index of each new key
  std::map<std::string, std::size_t> fresh;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    if (!specs[i]) continue;
    keys[i] = simulate::to_json(*specs[i]).dump();
    ++lookups_;
    if (!cache_.count(keys[i]) && fresh.emplace(keys[i], i).second) todo.push_back(i);
  }
  std::vector<Evaluation> results(todo.size());
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t k; (k = next.fetch_add(1)) < todo.size();) {
      try {
        simulate::Metrics m = simulate::simulate(trace_, *specs[todo[k]], {}, "phenotype");
        m.series.clear();  // 6,000 cached evaluations: keep them small
        m.series.shrink_to_fit();
        results[k] = normalize(m);
      } catch (const std::invalid_argument&) {
        results[k] = Evaluation{};  // the model rejects it for this trace (e.g. an area too small): invalid
      } catch (const std::length_error&) {
        results[k] = Evaluation{};
      }
    }
  };
  std::vector<std::thread> pool;
  const unsigned n = std::min<unsigned>(threads_, static_cast<unsigned>(todo.size()));
  for (unsigned t = 1; t < n; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  simulations_ += todo.size();
  for (std::size_t k = 0; k < todo.size(); ++k) cache_[keys[todo[k]]] = std::move(results[k]);

  std::vector<Evaluation> out(specs.size());
  for (std::size_t i = 0; i < specs.size(); ++i)
    if (specs[i]) out[i] = cache_[keys[i]];
  return out;
}

}  // namespace tailor::search
