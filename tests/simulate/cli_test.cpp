// SPDX-License-Identifier: MIT
// `tailor simulate` as a user runs it: JSON fields, normalization to
// Kingsley, and the error for an unknown DMM.
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <sys/wait.h>

#include "common/temp_dir.h"
#include "common/trace_file.h"

namespace {

namespace tr = tailor::trace;

struct Output {
  int status = -1;
  std::string text;
};

Output run(const std::string& command) {
  Output o;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (!p) return o;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) o.text.append(buf, n);
  int st = pclose(p);
  o.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return o;
}

// Blocks of several sizes allocated, half freed, reallocated: enough for the
// DMMs to differ in steps and memory.
std::string small_trace(const tailor::test::TempDir& dir) {
  std::vector<tr::Event> v;
  std::uint64_t t = 1;
  auto ev = [&](tr::Op op, std::uint64_t size, std::uint64_t address) {
    v.push_back(tailor::test::event(0, t++, op, size, address));
  };
  for (std::uint64_t i = 0; i < 2000; ++i) ev(tr::Op::Malloc, 8 + (i * 37) % 3000, 0x100000 + i * 0x1000);
  for (std::uint64_t i = 0; i < 2000; i += 2) ev(tr::Op::Free, 0, 0x100000 + i * 0x1000);
  for (std::uint64_t i = 0; i < 1000; ++i) ev(tr::Op::Malloc, 24, 0x9000000 + i * 0x100);
  std::string path = dir.file("small.trace");
  tailor::test::write_trace(path, v);
  return path;
}

TEST(SimulateCli, JsonNormalizesToKingsley) {
  tailor::test::TempDir dir;
  std::string trace = small_trace(dir);
  Output o = run(std::string(TAILOR_BIN) + " simulate " + trace + " --dmm kng,lea,s10 --json");
  ASSERT_EQ(o.status, 0) << o.text;
  auto j = nlohmann::json::parse(o.text);
  ASSERT_EQ(j["dmms"].size(), 3u);
  const auto& kng = j["dmms"][0];
  EXPECT_EQ(kng["dmm"], "kng");
  EXPECT_DOUBLE_EQ(kng["normalized_to_kng"]["memory_usage"].get<double>(), 1.0);
  for (const auto& m : j["dmms"]) {
    double usage = static_cast<double>(kng["memory_usage_bytes"].get<std::uint64_t>()) /
                   static_cast<double>(m["memory_usage_bytes"].get<std::uint64_t>());
    double steps = static_cast<double>(kng["steps"].get<std::uint64_t>()) / static_cast<double>(m["steps"].get<std::uint64_t>());
    EXPECT_DOUBLE_EQ(m["normalized_to_kng"]["memory_usage"].get<double>(), usage) << m["dmm"];
    EXPECT_DOUBLE_EQ(m["normalized_to_kng"]["steps"].get<double>(), steps) << m["dmm"];
  }
  EXPECT_EQ(j["replay"]["allocations"], 3000u);
  EXPECT_EQ(j["replay"]["releases"], 1000u);
}

TEST(SimulateCli, TextHasTheNormalizedTableOnlyWithKingsley) {
  tailor::test::TempDir dir;
  std::string trace = small_trace(dir);
  Output with = run(std::string(TAILOR_BIN) + " simulate " + trace + " --dmm kng,fib");
  ASSERT_EQ(with.status, 0) << with.text;
  EXPECT_NE(with.text.find("normalized to kng"), std::string::npos) << with.text;
  Output without = run(std::string(TAILOR_BIN) + " simulate " + trace + " --dmm fib,s10");
  ASSERT_EQ(without.status, 0) << without.text;
  EXPECT_EQ(without.text.find("normalized to kng"), std::string::npos) << without.text;
}

TEST(SimulateCli, UnknownDmmIsAnErrorNamingTheKnownOnes) {
  tailor::test::TempDir dir;
  std::string trace = small_trace(dir);
  Output o = run(std::string(TAILOR_BIN) + " simulate " + trace + " --dmm kng,nope");
  EXPECT_NE(o.status, 0);
  EXPECT_NE(o.text.find("unknown DMM 'nope'"), std::string::npos) << o.text;
  EXPECT_NE(o.text.find("lea"), std::string::npos) << o.text;
}

TEST(SimulateCli, SpecFilesRunInParallelWithTheBuiltIns) {
  tailor::test::TempDir dir;
  std::string trace = small_trace(dir);
  const std::string share = std::string(TAILOR_SHARE_DIR) + "/dmm/";
  Output o = run(std::string(TAILOR_BIN) + " simulate " + trace + " --threads 3 --json --dmm kng," + share +
                 "simulator-paper-table4.json,buddy," + share + "buddy.json");
  ASSERT_EQ(o.status, 0) << o.text;
  auto j = nlohmann::json::parse(o.text);
  ASSERT_EQ(j["dmms"].size(), 4u);
  EXPECT_EQ(j["dmms"][1]["dmm"], "table4");  // in the order given, named by the spec
  EXPECT_GT(j["dmms"][1]["energy_nj"].get<double>(), 0);
  EXPECT_GT(j["dmms"][1]["normalized_to_kng"]["energy"].get<double>(), 0);
  // The buddy spec is the built-in buddy.
  EXPECT_EQ(j["dmms"][2]["steps"], j["dmms"][3]["steps"]);
  EXPECT_EQ(j["dmms"][2]["memory_usage_bytes"], j["dmms"][3]["memory_usage_bytes"]);
  EXPECT_EQ(j["dmms"][2]["splits"], j["dmms"][3]["splits"]);
  EXPECT_GT(j["dmms"][2]["splits"].get<std::uint64_t>(), 0u);
}

TEST(SimulateCli, BadSpecIsAnErrorNamingFileAndField) {
  tailor::test::TempDir dir;
  std::string trace = small_trace(dir);
  const std::string spec = dir.file("bad.json");
  {
    FILE* f = std::fopen(spec.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(R"({"allocators": [{"sizes": {"min": 0, "max": 64}, "mechanism": "segregated_fit"},
                                  {"sizes": {"min": 32}, "mechanism": "segregated_fit"}]})", f);
    std::fclose(f);
  }
  Output o = run(std::string(TAILOR_BIN) + " simulate " + trace + " --dmm kng," + spec);
  EXPECT_NE(o.status, 0);
  EXPECT_NE(o.text.find(spec + ": allocators[1].sizes.min: overlaps allocators[0]"), std::string::npos) << o.text;
}

// `tailor search --pareto --front-dir`: every DMM of the front is written as
// a spec, and simulating those specs gives the front's reported measures.
TEST(SearchCli, ParetoFrontIsWrittenAsSpecsThatSimulateAsReported) {
  tailor::test::TempDir dir;
  std::string trace = small_trace(dir);
  const std::string front_dir = dir.file("front");
  Output o = run(std::string(TAILOR_BIN) + " search " + trace +
                 " --pareto --generations 4 --population 12 --threads 2 --json --front-dir " + front_dir);
  ASSERT_EQ(o.status, 0) << o.text;
  const std::size_t json_at = o.text.find('{');  // after the progress lines on stderr
  ASSERT_NE(json_at, std::string::npos) << o.text;
  auto j = nlohmann::json::parse(o.text.substr(json_at));
  const auto& front = j["pareto_front"];
  ASSERT_GE(front.size(), 1u);
  std::string dmms = "kng";
  for (std::size_t i = 0; i < front.size(); ++i) {
    const std::string file = front[i]["file"].get<std::string>();
    char want[64];
    std::snprintf(want, sizeof want, "/front-%02zu.json", i);
    EXPECT_EQ(file, front_dir + want);
    dmms += "," + file;
  }
  Output s = run(std::string(TAILOR_BIN) + " simulate " + trace + " --json --dmm " + dmms);
  ASSERT_EQ(s.status, 0) << s.text;
  auto sj = nlohmann::json::parse(s.text);
  ASSERT_EQ(sj["dmms"].size(), front.size() + 1);
  for (std::size_t i = 0; i < front.size(); ++i) {
    const auto& row = sj["dmms"][i + 1];
    char name[64];
    std::snprintf(name, sizeof name, "front-%02zu", i);
    EXPECT_EQ(row["dmm"], name);
    // simulate gives Kingsley's measure over the DMM's (higher is better),
    // search the DMM's over Kingsley's (lower is better).
    EXPECT_NEAR(row["normalized_to_kng"]["memory_usage"].get<double>() * front[i]["memory"].get<double>(), 1.0, 1e-9)
        << name;
    // Time: the time model's prediction when there is one (share/time-model.json), else steps.
    const char* time = row["normalized_to_kng"].contains("predicted_time") ? "predicted_time" : "steps";
    EXPECT_NEAR(row["normalized_to_kng"][time].get<double>() * front[i]["time"].get<double>(), 1.0, 1e-9) << name;
  }
}

TEST(SearchCli, FrontDirNeedsPareto) {
  tailor::test::TempDir dir;
  Output o = run(std::string(TAILOR_BIN) + " search " + small_trace(dir) + " --front-dir " + dir.file("f"));
  EXPECT_NE(o.status, 0);
  EXPECT_NE(o.text.find("--front-dir requires --pareto"), std::string::npos) << o.text;
}

}  // namespace
