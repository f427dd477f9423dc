// SPDX-License-Identifier: MIT
// Random valid DMM specs (the generator the simulator tests use) run for
// real as the program's malloc (TAILOR_DMM, docs/deploy.md): a workload
// gives its golden output and a program whose threads free each other's
// blocks exits cleanly, each with nothing on stderr (a spec that did not
// load would say so there).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "common/temp_dir.h"
#include "dmm_spec.h"
#include "simulate/random_spec.h"

namespace {

namespace sim = tailor::simulate;

struct Result {
  int status = -1;
  std::string out, err;
};

Result run(const std::string& command, const tailor::test::TempDir& dir) {
  const std::string out = dir.file("out"), err = dir.file("err");
  Result r;
  r.status = std::system((command + " > " + out + " 2> " + err).c_str());
  auto slurp = [](const std::string& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  };
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

TEST(DmmForReal, RandomValidSpecsRunProgramsAsGlibcDoes) {
  tailor::test::TempDir dir;
  std::ifstream golden_in(CFRAC_EXPECTED);
  std::stringstream golden;
  golden << golden_in.rdbuf();
  std::mt19937_64 rng(2026);
  int valid = 0;
  for (int tried = 0; valid < 4 && tried < 2000; ++tried) {
    const nlohmann::json spec_json = {{"allocators", tailor::test::random_allocators(rng)}};
    try {
      sim::parse_dmm_spec(spec_json);
    } catch (const sim::SpecError&) {
      continue;  // a combination the model rejects
    }
    // Farthest fit scans every free block: quadratic on a real program's lists.
    if (spec_json.dump().find("farthest") != std::string::npos) continue;
    ++valid;
    const std::string path = dir.file("spec" + std::to_string(valid) + ".json");
    std::ofstream(path) << spec_json.dump(1);
    SCOPED_TRACE(spec_json.dump());
    const std::string env = std::string("LD_PRELOAD=") + LIBTAILOR + " TAILOR_DMM=" + path + " ";
    const auto t0 = std::chrono::steady_clock::now();
    const Result a = run(env + "timeout 300 " + WL_CFRAC + " --seed 1 --size 4", dir);
    std::printf("spec %d: cfrac %.1f s %s\n", valid,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), spec_json.dump().c_str());
    EXPECT_EQ(a.status, 0);
    EXPECT_EQ(a.err, "");
    EXPECT_EQ(a.out, golden.str());
    const Result b = run(env + "timeout 300 " + THREADS_CROSS_FREE, dir);
    EXPECT_EQ(b.status, 0);
    EXPECT_EQ(b.err, "");
  }
  EXPECT_EQ(valid, 4);
}

}  // namespace
