// SPDX-License-Identifier: MIT
// Composed DMMs: requests routed by size range, releases by address space,
// memory and metrics summed over the allocators; every shipped spec and
// hundreds of random valid specs pass the checker on a random trace, and
// their metrics assembled from per-allocator runs (part_simulation.h) equal
// those of the whole DMM.
#include <gtest/gtest.h>

#include "simulate/recorded_cfrac.h"

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "common/temp_dir.h"
#include "tailor/trace/reader.h"

#include "simulate/dmm.h"
#include "simulate/part_simulation.h"
#include "dmm/segregated_lists.h"
#include "simulate/dmm.h"
#include "simulate/random_spec.h"
#include "simulate/random_trace.h"
#include "simulate/simulator.h"

namespace {

namespace sim = tailor::simulate;
using nlohmann::json;

TEST(Dmm, RoutesBySizeAndSumsMemory) {
  const sim::DmmSpec spec = sim::parse_dmm_spec(json::parse(R"({"name": "two", "allocators": [
      {"sizes": {"min": 0, "max": 64}, "mechanism": "strict_segregated_fit"},
      {"sizes": {"min": 64, "max": null}, "mechanism": "binary_buddy", "system": {"chunk": 65536}}]})"));
  sim::Dmm d(spec, {});
  ASSERT_EQ(d.parts(), 2u);
  const sim::Block small = d.allocate(64);
  const sim::Block large = d.allocate(65);
  EXPECT_EQ(small.address >> 40, 1u);  // allocator 0's address space
  EXPECT_EQ(large.address >> 40, 2u);
  EXPECT_EQ(large.bytes, 128u);        // 65 + 16 -> the 128-byte buddy
  EXPECT_EQ(d.memory().held(), 4096u + 65536u);
  EXPECT_EQ(d.release(large.address), 128u);
  EXPECT_EQ(d.release(small.address), small.bytes);
  EXPECT_EQ(d.memory().held_high_water(), 4096u + 65536u);
  EXPECT_EQ(d.min_alignment(), 16u);
  EXPECT_GT(d.steps(), 0u);
}

TEST(Dmm, ShippedSpecsPassTheChecker) {
  const sim::ReplayTrace t = sim::build_replay(tailor::test::random_events(3, 20000));
  for (const char* name : {"kng", "s10", "exa", "fib", "buddy", "simulator-paper-table4", "lea-like"}) {
    SCOPED_TRACE(name);
    const sim::DmmSpec spec = sim::load_dmm_spec(std::string(TAILOR_SHARE_DIR) + "/dmm/" + name + ".json");
    sim::SimulateOptions o;
    o.check = true;
    const sim::Metrics m = sim::simulate(t, spec, o);
    EXPECT_GE(m.memory_usage, t.summary.max_in_use_bytes);
    EXPECT_GT(m.energy_nj, 0);
    const sim::Metrics plain = sim::simulate(t, spec);
    EXPECT_EQ(plain.steps, m.steps);
    EXPECT_EQ(plain.memory_usage, m.memory_usage);
  }
}

TEST(Dmm, ShippedSpecsPassTheCheckerOnARecordedWorkload) {
  TAILOR_SKIP_UNLESS_CFRAC();
  tailor::test::TempDir dir;
  const std::string path = tailor::test::record_cfrac(dir);
  ASSERT_FALSE(path.empty());
  tailor::trace::Reader reader(path);
  const sim::ReplayTrace t = sim::load_replay(reader);
  for (const char* name : {"kng", "s10", "exa", "fib", "buddy", "simulator-paper-table4", "lea-like"}) {
    SCOPED_TRACE(name);
    sim::SimulateOptions o;
    o.check = true;
    sim::Metrics m;
    ASSERT_NO_THROW(m = sim::simulate(t, sim::load_dmm_spec(std::string(TAILOR_SHARE_DIR) + "/dmm/" + name + ".json"), o));
    EXPECT_GE(m.memory_usage, t.summary.max_in_use_bytes);
  }
}

// The binary buddy spec and the built-in buddy are the same mechanism with the same chunk.
TEST(Dmm, BuddySpecEqualsTheBuiltIn) {
  const sim::ReplayTrace t = sim::build_replay(tailor::test::random_events(4, 20000));
  const sim::Metrics spec = sim::simulate(t, sim::load_dmm_spec(std::string(TAILOR_SHARE_DIR) + "/dmm/buddy.json"));
  const sim::Metrics built_in = sim::simulate(t, "buddy");
  EXPECT_EQ(spec.steps, built_in.steps);
  EXPECT_EQ(spec.reads, built_in.reads);
  EXPECT_EQ(spec.writes, built_in.writes);
  EXPECT_EQ(spec.memory_usage, built_in.memory_usage);
  EXPECT_EQ(spec.splits, built_in.splits);
  EXPECT_EQ(spec.coalesces, built_in.coalesces);
}

TEST(Dmm, UncoveredSizesAreAnErrorNamingTheField) {
  const sim::ReplayTrace t = sim::build_replay(tailor::test::random_events(3, 2000));
  const sim::DmmSpec spec = sim::parse_dmm_spec(
      json{{"allocators", {{{"sizes", {{"min", 0}, {"max", 4096}}}, {"mechanism", "segregated_fit"}}}}});
  EXPECT_THROW(sim::simulate(t, spec), sim::SpecError);
}


TEST(Dmm, RandomValidSpecsPassTheChecker) {
  const sim::ReplayTrace t = sim::build_replay(tailor::test::random_events(6, 6000));
  const std::vector<std::uint64_t> sizes = sim::sizes_of(t);
  std::mt19937_64 rng(99);
  int valid = 0, tried = 0;
  while (valid < 150 && tried < 5000) {
    ++tried;
    json allocators = json::array();
    const int parts = 1 + static_cast<int>(rng() % 4);
    std::uint64_t min = 0;
    for (int i = 0; i < parts; ++i) {
      const bool last = i == parts - 1;
      const std::uint64_t max = min + 8 + rng() % (i == 0 ? 256 : 8192);
      allocators.push_back(tailor::test::random_allocator(rng, min, last ? json(nullptr) : json(max)));
      min = max;
    }
    sim::DmmSpec spec;
    try {
      spec = sim::parse_dmm_spec(json{{"allocators", allocators}});
    } catch (const sim::SpecError&) {
      continue;  // a combination the model rejects
    }
    SCOPED_TRACE(sim::to_json(spec).dump());
    sim::SimulateOptions o;
    o.check = true;
    try {
      const sim::Metrics m = sim::simulate(t, spec, o);
      EXPECT_GE(m.memory_usage, t.summary.max_in_use_bytes);
      // Assembled from the allocators' own runs, the metrics are the same.
      std::vector<sim::PartResult> runs;
      for (const auto& a : spec.allocators) runs.push_back(*sim::simulate_part(t, a, sizes));
      std::vector<const sim::PartResult*> views;
      for (const auto& r : runs) views.push_back(&r);
      const sim::Metrics c = sim::combine_parts(views, t);
      EXPECT_EQ(c.steps, m.steps);
      EXPECT_EQ(c.reads, m.reads);
      EXPECT_EQ(c.writes, m.writes);
      EXPECT_EQ(c.splits, m.splits);
      EXPECT_EQ(c.coalesces, m.coalesces);
      EXPECT_EQ(c.system_requests, m.system_requests);
      EXPECT_EQ(c.memory_usage, m.memory_usage);
      EXPECT_DOUBLE_EQ(c.energy_nj, m.energy_nj);
    } catch (const sim::SpecError&) {
      continue;  // valid in itself, but a part cannot be built for this trace
    } catch (const sim::CheckError& e) {
      ADD_FAILURE() << e.what();
    }
    ++valid;
  }
  EXPECT_EQ(valid, 150);
}

}  // namespace
