// SPDX-License-Identifier: MIT
#include "tune/objective.h"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace tailor::tune {

Objective parse_objective(const std::string& name) {
  if (name == "time") return Objective::kTime;
  if (name == "memory") return Objective::kMemory;
  if (name == "balanced") return Objective::kBalanced;
  throw std::invalid_argument("--objective: '" + name + "' is not one of time, memory, balanced");
}

const char* to_string(Objective o) {
  switch (o) {
    case Objective::kTime: return "time";
    case Objective::kMemory: return "memory";
    default: return "balanced";
  }
}

bool too_slow(const Ratios& r, double max_slowdown) { return r.time > max_slowdown && r.fastest_time > max_slowdown; }

double measure(Objective o, const Ratios& r) {
  switch (o) {
    case Objective::kTime: return r.time;
    case Objective::kMemory: return r.memory;
    default: return std::sqrt(r.time * r.memory);
  }
}

double score(Objective o, const Ratios& r, double max_slowdown) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  switch (o) {
    case Objective::kTime: return r.memory > kOtherLimit ? inf : r.time;
    case Objective::kMemory: return too_slow(r, max_slowdown) ? inf : r.memory;
    default: return measure(o, r);
  }
}

}  // namespace tailor::tune
