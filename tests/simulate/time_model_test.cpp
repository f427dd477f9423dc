// SPDX-License-Identifier: MIT
// The time model (src/simulate/time_model.h): a fit recovers known costs
// and never makes one negative; a model file round-trips; a missing or
// malformed file is one message naming the file and the field.
#include "simulate/time_model.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <string>

namespace sim = tailor::simulate;

namespace {

std::string write_temp(const std::string& text) {
  char path[] = "/tmp/tailor-time-model-XXXXXX";
  const int fd = mkstemp(path);
  if (fd >= 0) ::close(fd);
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST(TimeModel, AFitRecoversTheCostsThatMadeTheTimes) {
  // Runs whose time is 10 ns per call, 3 ns per read and 2 us per page,
  // on varied counts: the fit finds those costs and no others.
  std::mt19937_64 rng(7);
  std::vector<sim::FitRow> rows;
  for (int i = 0; i < 40; ++i) {
    sim::FitRow r;
    r.trace = "t" + std::to_string(i / 5);
    r.dmm = i % 5 == 0 ? "kng" : "d" + std::to_string(i % 5);
    r.features[2] = 1e6 + static_cast<double>(rng() % 1000000);    // calls
    r.features[3] = 1e6 + static_cast<double>(rng() % 5000000);    // reads
    r.features[5] = static_cast<double>(rng() % 4000);             // pages
    r.features[4] = static_cast<double>(rng() % 3000000);          // writes: cost nothing
    r.real_seconds = (10 * r.features[2] + 3 * r.features[3] + 2000 * r.features[5]) * 1e-9;
    rows.push_back(r);
  }
  const sim::TimeModel m = sim::fit_time_model(rows);
  EXPECT_NEAR(m.ns[2], 10, 0.01);
  EXPECT_NEAR(m.ns[3], 3, 0.01);
  EXPECT_NEAR(m.ns[5], 2000, 1);
  EXPECT_NEAR(m.ns[4], 0, 1e-3);
  for (double c : m.ns) EXPECT_GE(c, 0);
  EXPECT_LT(m.median_error, 1e-6);
  EXPECT_LT(m.worst_normalized_error, 1e-6);
}

TEST(TimeModel, ATraceThatSlowsEveryDmmAlikeDoesNotBendTheCosts) {
  // Each trace's runs are slowed by a factor of the trace's own (0.5-3x),
  // the same for every DMM on it (what its rounds met on the machine, its
  // cache footprint): the fit, on times over the trace's Kingsley run, finds
  // the costs' proportions, and every ratio as for real, within half a percent.
  std::mt19937_64 rng(11);
  std::vector<sim::FitRow> rows;
  for (int t = 0; t < 8; ++t) {
    const double slow = 0.5 + 1e-3 * static_cast<double>(rng() % 2500);
    for (int d = 0; d < 5; ++d) {
      sim::FitRow r;
      r.trace = "t" + std::to_string(t);
      r.dmm = d == 0 ? "kng" : "d" + std::to_string(d);
      r.features[2] = 1e6 + static_cast<double>(rng() % 4000000);  // calls
      r.features[3] = 1e6 + static_cast<double>(rng() % 5000000);  // reads
      r.real_seconds = slow * (40 * r.features[2] + 10 * r.features[3]) * 1e-9;
      rows.push_back(r);
    }
  }
  const sim::TimeModel m = sim::fit_time_model(rows);
  EXPECT_NEAR(m.ns[2] / m.ns[3], 4.0, 0.02);  // the light per-run equations pull a little
  auto predict = [&](const sim::FitRow& r) { return m.ns[2] * r.features[2] + m.ns[3] * r.features[3]; };
  for (int t = 0; t < 8; ++t) {
    const sim::FitRow& k = rows[5 * t];
    for (int d = 1; d < 5; ++d) {
      const sim::FitRow& r = rows[5 * t + d];
      EXPECT_NEAR(predict(r) / predict(k) / (r.real_seconds / k.real_seconds), 1.0, 0.005) << r.trace << " " << r.dmm;
    }
  }
  EXPECT_LT(m.worst_normalized_error, 0.005);
}

TEST(TimeModel, CostsAreNeverNegative) {
  // Times that fall as writes grow: least squares alone would give writes
  // a negative cost; the fit gives 0.
  std::vector<sim::FitRow> rows;
  for (int i = 0; i < 10; ++i) {
    sim::FitRow r;
    r.trace = "t";
    r.dmm = i == 0 ? "kng" : "d";
    r.features[2] = 1e6;
    r.features[4] = 1e5 * i;
    r.real_seconds = (10 * 1e6 - 20 * 1e5 * i) * 1e-9 + 0.001;
    rows.push_back(r);
  }
  const sim::TimeModel m = sim::fit_time_model(rows);
  for (double c : m.ns) EXPECT_GE(c, 0);
  EXPECT_EQ(m.ns[4], 0);
  EXPECT_THROW(sim::fit_time_model({}), std::invalid_argument);
}

TEST(TimeModel, TheFileRoundTrips) {
  sim::TimeModel m;
  for (std::size_t k = 0; k < sim::TimeModel::kFeatures; ++k) m.ns[k] = 0.5 * static_cast<double>(k + 1);
  m.machine = "a machine";
  m.fitted_on = "some runs";
  m.median_error = 0.03;
  const std::string path = write_temp(sim::to_json_text(m));
  std::string why;
  const auto back = sim::load_time_model(path, why);
  ASSERT_TRUE(back) << why;
  EXPECT_EQ(back->ns, m.ns);
  EXPECT_EQ(back->machine, "a machine");
  sim::Metrics metrics;
  metrics.operations = 1000;
  metrics.reads = 400;
  EXPECT_DOUBLE_EQ(back->seconds(metrics), m.seconds(metrics));
  EXPECT_GT(back->seconds(metrics), 0);
  std::remove(path.c_str());
}

TEST(TimeModel, ABadFileIsOneMessageNamingIt) {
  std::string why;
  EXPECT_FALSE(sim::load_time_model("/nonexistent/model.json", why));
  EXPECT_EQ(why, "/nonexistent/model.json: cannot be read");
  const std::pair<std::string, std::string> bad[] = {
      {"{\"format\": \"tailor-time-model\", \"ns_per_unit\": ", "not JSON"},
      {"{\"format\": \"other\"}", "not a time model (field 'format' is not \"tailor-time-model\")"},
      {"{\"format\": \"tailor-time-model\"}", "field 'ns_per_unit' is missing or not an object"},
      {"{\"format\": \"tailor-time-model\", \"ns_per_unit\": {\"hits\": 1}}", "field 'ns_per_unit.kept' is missing"},
  };
  for (const auto& [text, want] : bad) {
    const std::string path = write_temp(text);
    EXPECT_FALSE(sim::load_time_model(path, why)) << text;
    EXPECT_EQ(why.rfind(path + ": " + want, 0), 0u) << why;
    std::remove(path.c_str());
  }
  sim::TimeModel negative;
  negative.ns[0] = -1;
  const std::string path = write_temp(sim::to_json_text(negative));
  EXPECT_FALSE(sim::load_time_model(path, why));
  EXPECT_NE(why.find("field 'ns_per_unit.hits' is negative"), std::string::npos) << why;
  std::remove(path.c_str());
}
