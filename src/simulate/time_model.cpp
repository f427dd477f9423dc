// SPDX-License-Identifier: MIT
// The time model (time_model.h): features, prediction, the model file, and
// the fit.
#include "simulate/time_model.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace tailor::simulate {

const std::array<const char*, TimeModel::kFeatures> TimeModel::kNames = {
    "hits",           "kept",
    "calls",          "reads",
    "writes",         "pages",
    "purges",         "zeroed_kib",
    "misses",         "steps_kingsley",
    "steps_lea",      "steps_binary_buddy",
    "steps_fibonacci_buddy", "steps_segregated_lists",
    "steps_segregated_fit",  "steps_simple_segregated_storage",
    "steps_other"};

TimeModel::Features TimeModel::features(const Metrics& m) {
  const auto d = [](std::uint64_t v) { return static_cast<double>(v); };
  const double front = d(m.front_hits) + d(m.front_kept);
  Features f = {d(m.front_hits), d(m.front_kept), d(m.operations) - front, d(m.reads),      d(m.writes),
                d(m.pages_gained) / 4096.0, d(m.purges), d(m.zeroed_bytes) / 1024.0, d(m.line_misses)};
  for (std::size_t k = 0; k < dmm::kMechanismKinds; ++k) f[9 + k] = d(m.steps_by_kind[k]);
  return f;
}

double TimeModel::seconds(const Metrics& m) const {
  const Features f = features(m);
  double ns_total = 0;
  for (std::size_t k = 0; k < kFeatures; ++k) ns_total += ns[k] * f[k];
  return ns_total * 1e-9;
}

std::optional<TimeModel> load_time_model(const std::string& path, std::string& error) {
  std::ifstream in(path);
  if (!in) {
    error = path + ": cannot be read";
    return std::nullopt;
  }
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    error = path + ": not JSON (" + std::string(e.what()) + ")";
    return std::nullopt;
  }
  if (!j.is_object() || j.value("format", "") != "tailor-time-model") {
    error = path + ": not a time model (field 'format' is not \"tailor-time-model\")";
    return std::nullopt;
  }
  const auto* ns = j.contains("ns_per_unit") ? &j["ns_per_unit"] : nullptr;
  if (ns == nullptr || !ns->is_object()) {
    error = path + ": field 'ns_per_unit' is missing or not an object";
    return std::nullopt;
  }
  TimeModel m;
  for (std::size_t k = 0; k < TimeModel::kFeatures; ++k) {
    const char* name = TimeModel::kNames[k];
    if (!ns->contains(name) || !(*ns)[name].is_number()) {
      error = path + ": field 'ns_per_unit." + name + "' is missing or not a number";
      return std::nullopt;
    }
    m.ns[k] = (*ns)[name].get<double>();
    if (!std::isfinite(m.ns[k]) || m.ns[k] < 0) {
      error = path + ": field 'ns_per_unit." + name + "' is negative or not finite";
      return std::nullopt;
    }
  }
  if (std::all_of(m.ns.begin(), m.ns.end(), [](double v) { return v == 0; })) {
    error = path + ": every coefficient is 0";
    return std::nullopt;
  }
  m.machine = j.value("machine", "");
  m.fitted_on = j.value("fitted_on", "");
  m.median_error = j.value("median_error", 0.0);
  m.worst_normalized_error = j.value("worst_normalized_error", 0.0);
  return m;
}

std::string to_json_text(const TimeModel& m) {
  nlohmann::ordered_json j;
  j["format"] = "tailor-time-model";
  j["version"] = 1;
  j["what"] = "real seconds of a DMM run = sum of ns_per_unit x the simulation's counts / 1e9 (docs/deploy.md)";
  j["machine"] = m.machine;
  j["fitted_on"] = m.fitted_on;
  j["median_error"] = m.median_error;
  j["worst_normalized_error"] = m.worst_normalized_error;
  for (std::size_t k = 0; k < TimeModel::kFeatures; ++k) j["ns_per_unit"][TimeModel::kNames[k]] = m.ns[k];
  return j.dump(2) + "\n";
}

namespace {

using Vec = std::vector<double>;
using Mat = std::vector<Vec>;  // rows

// Least squares on the columns in `cols`: the normal equations, solved by
// Gaussian elimination with partial pivoting (a handful of columns).
Vec solve_subset(const Mat& a, const Vec& b, const std::vector<std::size_t>& cols, std::size_t n) {
  const std::size_t p = cols.size();
  Mat g(p, Vec(p + 1, 0.0));
  for (std::size_t r = 0; r < a.size(); ++r)
    for (std::size_t i = 0; i < p; ++i) {
      for (std::size_t j = 0; j < p; ++j) g[i][j] += a[r][cols[i]] * a[r][cols[j]];
      g[i][p] += a[r][cols[i]] * b[r];
    }
  for (std::size_t i = 0; i < p; ++i) g[i][i] += 1e-12;  // a column of zeros stays solvable
  for (std::size_t c = 0; c < p; ++c) {
    std::size_t piv = c;
    for (std::size_t r = c + 1; r < p; ++r)
      if (std::fabs(g[r][c]) > std::fabs(g[piv][c])) piv = r;
    std::swap(g[c], g[piv]);
    for (std::size_t r = 0; r < p; ++r) {
      if (r == c || g[c][c] == 0) continue;
      const double f = g[r][c] / g[c][c];
      for (std::size_t k = c; k <= p; ++k) g[r][k] -= f * g[c][k];
    }
  }
  Vec z(n, 0.0);
  for (std::size_t i = 0; i < p; ++i) z[cols[i]] = g[i][i] != 0 ? g[i][p] / g[i][i] : 0;
  return z;
}

// min |a x - b|^2 subject to x >= 0 (Lawson and Hanson, "Solving Least
// Squares Problems", chapter 23).
Vec nnls(const Mat& a, const Vec& b, std::size_t n) {
  Vec x(n, 0.0);
  std::vector<bool> in_p(n, false);
  auto gradient = [&] {
    Vec w(n, 0.0);
    for (std::size_t r = 0; r < a.size(); ++r) {
      double res = b[r];
      for (std::size_t k = 0; k < n; ++k) res -= a[r][k] * x[k];
      for (std::size_t k = 0; k < n; ++k) w[k] += a[r][k] * res;
    }
    return w;
  };
  constexpr double kTol = 1e-10;
  for (std::size_t outer = 0; outer < 3 * n; ++outer) {
    const Vec w = gradient();
    std::size_t t = n;
    for (std::size_t k = 0; k < n; ++k)
      if (!in_p[k] && w[k] > kTol && (t == n || w[k] > w[t])) t = k;
    if (t == n) break;
    in_p[t] = true;
    for (std::size_t inner = 0; inner < 3 * n; ++inner) {
      std::vector<std::size_t> cols;
      for (std::size_t k = 0; k < n; ++k)
        if (in_p[k]) cols.push_back(k);
      const Vec z = solve_subset(a, b, cols, n);
      bool positive = true;
      for (std::size_t k : cols) positive = positive && z[k] > kTol;
      if (positive) {
        x = z;
        break;
      }
      double alpha = 1;
      for (std::size_t k : cols)
        if (z[k] <= kTol) alpha = std::min(alpha, x[k] / (x[k] - z[k]));
      for (std::size_t k = 0; k < n; ++k) x[k] += alpha * (z[k] - x[k]);
      for (std::size_t k : cols)
        if (x[k] <= kTol) {
          x[k] = 0;
          in_p[k] = false;
        }
    }
  }
  return x;
}

}  // namespace

TimeModel fit_time_model(const std::vector<FitRow>& rows) {
  if (rows.empty()) throw std::invalid_argument("a time model needs at least one measured run to fit");
  constexpr std::size_t n = TimeModel::kFeatures;
  // Relative errors: row r's equation is (features / real) . x = 1. Columns
  // scaled to their largest value, so that counts of millions and of tens
  // weigh alike in the solver.
  Vec scale(n, 0.0);
  for (const FitRow& r : rows)
    for (std::size_t k = 0; k < n; ++k) scale[k] = std::max(scale[k], r.features[k] / std::max(r.real_seconds, 1e-9));
  // A feature counted in fewer than a quarter of the runs (a few purges in
  // one trace) cannot be told from those runs' noise: it gets no cost of
  // its own rather than one that explains a few rows' errors.
  for (std::size_t k = 0; k < n; ++k) {
    const auto present = std::count_if(rows.begin(), rows.end(), [&](const FitRow& r) { return r.features[k] > 0; });
    if (4 * static_cast<std::size_t>(present) < rows.size()) scale[k] = 0;
  }
  auto relative = [&](const FitRow& r) {
    Vec row(n);
    for (std::size_t k = 0; k < n; ++k)
      row[k] = scale[k] > 0 ? r.features[k] / std::max(r.real_seconds, 1e-9) / scale[k] : 0;
    return row;
  };
  // What the model is for is ranking DMMs on one trace, and their times
  // over Kingsley's: so each DMM's time over its trace's reference run
  // (Kingsley's, else the trace's first row) is the main equation,
  // (features / real - reference features / reference real) . x = 0. Those
  // alone hold at x = 0 (they say nothing of scale), so one equation of
  // great weight sets the scale (the mean over the rows of predicted / real
  // is 1), and each row's own predicted / real = 1 weighs kAnchor: enough to
  // keep absolute times near, not so much that what slows every DMM on one
  // trace alike (its cache footprint, what its rounds met on the host)
  // bends the costs' proportions.
  constexpr double kAnchor = 0.1, kScale = 100.0;
  std::map<std::string, const FitRow*> reference;
  for (const FitRow& r : rows)
    if (auto it = reference.find(r.trace); it == reference.end() || (r.dmm == "kng" && it->second->dmm != "kng"))
      reference[r.trace] = &r;
  std::map<const FitRow*, Vec> reference_row;  // each trace's reference, scaled once
  for (const auto& [trace, ref] : reference) reference_row[ref] = relative(*ref);
  Mat a;
  Vec b;
  Vec mean(n, 0.0);
  for (const FitRow& r : rows) {
    Vec row = relative(r);
    for (std::size_t k = 0; k < n; ++k) mean[k] += row[k] / static_cast<double>(rows.size());
    const FitRow* ref = reference.at(r.trace);
    if (ref != &r) {
      const Vec& base = reference_row.at(ref);
      Vec diff(n);
      for (std::size_t k = 0; k < n; ++k) diff[k] = row[k] - base[k];
      a.push_back(std::move(diff));
      b.push_back(0.0);
    }
    for (double& v : row) v *= kAnchor;
    a.push_back(std::move(row));
    b.push_back(kAnchor);
  }
  for (double& v : mean) v *= kScale;
  a.push_back(std::move(mean));
  b.push_back(kScale);
  const Vec x = nnls(a, b, n);
  TimeModel m;
  for (std::size_t k = 0; k < n; ++k) m.ns[k] = scale[k] > 0 ? x[k] / scale[k] * 1e9 : 0;
  // Its errors: each row, and each time normalized to Kingsley's on its trace.
  auto predict = [&](const FitRow& r) {
    double ns = 0;
    for (std::size_t k = 0; k < n; ++k) ns += m.ns[k] * r.features[k];
    return ns * 1e-9;
  };
  std::vector<double> errors;
  std::map<std::string, const FitRow*> kng;
  for (const FitRow& r : rows) {
    errors.push_back(std::fabs(predict(r) - r.real_seconds) / r.real_seconds);
    if (r.dmm == "kng") kng[r.trace] = &r;
  }
  std::sort(errors.begin(), errors.end());
  m.median_error = errors[errors.size() / 2];
  for (const FitRow& r : rows)
    if (auto it = kng.find(r.trace); it != kng.end()) {
      const double real = r.real_seconds / it->second->real_seconds;
      const double sim = predict(r) / predict(*it->second);
      m.worst_normalized_error = std::max(m.worst_normalized_error, std::fabs(real - sim) / sim);
    }
  return m;
}

}  // namespace tailor::simulate
