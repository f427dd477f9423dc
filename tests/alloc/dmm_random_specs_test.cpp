// SPDX-License-Identifier: MIT
// Random valid DMM specs (the generator the simulator tests use) run for
// real as the program's malloc (TAILOR_DMM, docs/deploy.md): two workloads
// print what they print on glibc, and a program whose threads free each
// other's blocks exits cleanly, each with nothing on stderr (a spec that did
// not load would say so there). The workloads are small: some random designs
// are quadratic (a first fit over thousands of free blocks).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "common/temp_dir.h"
#include "simulate/dmm_spec.h"
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
  const std::string programs[] = {std::string(WL_CFRAC) + " --size 2", std::string(WL_HYPERCUBE_NET) + " --size 20000"};
  std::string on_glibc[2];
  for (int k = 0; k < 2; ++k) {
    const Result g = run(programs[k], dir);
    ASSERT_EQ(g.status, 0) << programs[k];
    on_glibc[k] = g.out;
  }
  std::mt19937_64 rng(2026);
  int valid = 0;
  for (int tried = 0; valid < 8 && tried < 2000; ++tried) {
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
    for (int k = 0; k < 2; ++k) {
      const Result a = run(env + "timeout 300 " + programs[k], dir);
      EXPECT_EQ(a.status, 0) << programs[k];
      EXPECT_EQ(a.err, "") << programs[k];
      EXPECT_EQ(a.out, on_glibc[k]) << programs[k];
    }
    const Result b = run(env + "timeout 300 " + THREADS_CROSS_FREE, dir);
    EXPECT_EQ(b.status, 0);
    EXPECT_EQ(b.err, "");
  }
  EXPECT_EQ(valid, 8);
}

}  // namespace
