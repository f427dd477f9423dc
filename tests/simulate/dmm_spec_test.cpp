// SPDX-License-Identifier: MIT
// DMM specs: the shipped specs (share/dmm) read, write and read back equal;
// every rule of the model rejects a bad spec with an error naming the field;
// a spec must cover the trace's largest request.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "common/temp_dir.h"
#include "simulate/dmm_spec.h"

namespace {

namespace sim = tailor::simulate;
using nlohmann::json;

TEST(DmmSpec, ShippedSpecsRoundTrip) {
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(TAILOR_SHARE_DIR) + "/dmm")) {
    SCOPED_TRACE(entry.path().string());
    const sim::DmmSpec spec = sim::load_dmm_spec(entry.path().string());
    EXPECT_FALSE(spec.name.empty());
    EXPECT_EQ(sim::parse_dmm_spec(sim::to_json(spec)), spec);
    ++n;
  }
  EXPECT_GE(n, 6);
}

// An enum field set to another of its values.
template <typename E>
void flip(E& e) {
  e = static_cast<E>(static_cast<int>(e) == 0 ? 1 : 0);
}

// identity() is a cache key: equal exactly when the specs are (here: the
// shipped specs against each other, and each against itself changed in one
// field at a time).
TEST(DmmSpec, IdentityIsEqualExactlyWhenTheSpecsAre) {
  std::vector<sim::DmmSpec> specs;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(TAILOR_SHARE_DIR) + "/dmm"))
    specs.push_back(sim::load_dmm_spec(entry.path().string()));
  ASSERT_GE(specs.size(), 6u);
  for (const auto& a : specs)
    for (const auto& b : specs) EXPECT_EQ(sim::identity(a) == sim::identity(b), a == b) << a.name << " " << b.name;
  const sim::DmmSpec base = specs.front();
  EXPECT_EQ(sim::identity(sim::parse_dmm_spec(sim::to_json(base))), sim::identity(base));
  std::vector<std::function<void(sim::DmmSpec&)>> changes = {
      [](sim::DmmSpec& s) { s.name += "x"; },
      [](sim::DmmSpec& s) { s.exact_sizes.push_back(8); },
      [](sim::DmmSpec& s) { s.allocators.push_back(s.allocators.back()); },
      [](sim::DmmSpec& s) { s.allocators[0].min += 1; },
      [](sim::DmmSpec& s) { s.allocators[0].max = s.allocators[0].max ? std::nullopt : std::optional<std::uint64_t>(64); },
      [](sim::DmmSpec& s) { flip(s.allocators[0].mechanism); },
      [](sim::DmmSpec& s) { flip(s.allocators[0].structure); },
      [](sim::DmmSpec& s) { flip(s.allocators[0].fit); },
      [](sim::DmmSpec& s) { flip(s.allocators[0].policy); },
      [](sim::DmmSpec& s) { s.allocators[0].split = !s.allocators[0].split; },
      [](sim::DmmSpec& s) { s.allocators[0].coalesce = !s.allocators[0].coalesce; },
      [](sim::DmmSpec& s) { s.allocators[0].classes.bounds.push_back(4096); },
      [](sim::DmmSpec& s) { s.allocators[0].header += 8; },
      [](sim::DmmSpec& s) { s.allocators[0].alignment *= 2; },
      [](sim::DmmSpec& s) { s.allocators[0].granularity *= 2; },
      [](sim::DmmSpec& s) { s.allocators[0].chunk *= 2; },
      [](sim::DmmSpec& s) { s.allocators[0].returns = !s.allocators[0].returns; },
      [](sim::DmmSpec& s) { s.allocators[0].area_lists = !s.allocators[0].area_lists; },
  };
  for (std::size_t i = 0; i < changes.size(); ++i) {
    sim::DmmSpec changed = base;
    changes[i](changed);
    EXPECT_FALSE(changed == base) << "change " << i;
    EXPECT_NE(sim::identity(changed), sim::identity(base)) << "change " << i;
    const bool same_first = changed.allocators[0] == base.allocators[0];  // the first three changes keep it
    EXPECT_EQ(same_first, i < 3) << "change " << i;
    EXPECT_EQ(sim::identity(changed.allocators[0]) == sim::identity(base.allocators[0]), same_first) << "change " << i;
  }
}

TEST(DmmSpec, DefaultsFollowTheMechanism) {
  const sim::DmmSpec s = sim::parse_dmm_spec(json::parse(R"({"allocators": [
      {"sizes": {"min": 0, "max": 256}, "mechanism": "exact_segregated_fit"},
      {"sizes": {"min": 256, "max": null}, "mechanism": "segregated_fit"}]})"));
  ASSERT_EQ(s.allocators.size(), 2u);
  EXPECT_EQ(s.allocators[0].fit, sim::Fit::kExact);
  EXPECT_EQ(s.allocators[0].policy, sim::Policy::kFifo);
  EXPECT_EQ(s.allocators[0].classes.kind, sim::ClassesSpec::Kind::kExact);
  EXPECT_TRUE(s.allocators[1].split);
  EXPECT_TRUE(s.allocators[1].coalesce);
  EXPECT_FALSE(s.allocators[1].max.has_value());
  EXPECT_EQ(sim::allocator_for(s, 0), 0u);
  EXPECT_EQ(sim::allocator_for(s, 256), 0u);
  EXPECT_EQ(sim::allocator_for(s, 257), 1u);
}

// A spec with one allocator `a` (merged into a valid segregated_fit), or the whole spec.
std::string error_of(const json& whole) {
  try {
    sim::parse_dmm_spec(whole, "x.json");
  } catch (const sim::SpecError& e) {
    return e.what();
  }
  return "";
}
std::string error_of_allocator(const json& patch) {
  json a = {{"sizes", {{"min", 0}, {"max", nullptr}}}, {"mechanism", "segregated_fit"}};
  a.merge_patch(patch);
  return error_of({{"allocators", {a}}});
}

TEST(DmmSpec, BadSpecsNameTheFieldAndWhy) {
  struct Case {
    json patch;
    std::string field, why;
  };
  const Case cases[] = {
      {{{"mechanism", "worst_fit_heap"}}, "allocators[0].mechanism", "unknown mechanism 'worst_fit_heap'"},
      {{{"fit", "worst"}}, "allocators[0].fit", "known: first, best, exact, farthest"},
      {{{"structure", "skiplist"}}, "allocators[0].structure", "unknown structure"},
      {{{"policy", 3}}, "allocators[0].policy", "must be a string"},
      {{{"split", "yes"}}, "allocators[0].split", "true or false"},
      {{{"colour", "red"}}, "allocators[0].colour", "unknown field"},
      {{{"alignment", 12}}, "allocators[0].alignment", "power of two"},
      {{{"header", 4}}, "allocators[0].header", "multiple of 8"},
      {{{"system", {{"granularity", 1000}}}}, "allocators[0].system.granularity", "power of two"},
      {{{"system", {{"returns", true}}}, {"coalesce", false}}, "allocators[0].system.returns", "needs coalesce"},
      {{{"mechanism", "strict_segregated_fit"}, {"split", true}}, "allocators[0].split", "cannot split or coalesce"},
      {{{"mechanism", "exact_segregated_fit"}, {"classes", "single"}}, "allocators[0].classes", "must be \"exact\""},
      {{{"mechanism", "simple_segregated_storage"}}, "allocators[0].sizes.max", "needs bounded classes"},
      {{{"mechanism", "simple_segregated_storage"}, {"sizes", {{"max", 70000}}}},
       "allocators[0].system.chunk", "cannot hold a block"},
      {{{"mechanism", "binary_buddy"}, {"structure", "btree"}}, "allocators[0].structure", "doubly linked LIFO"},
      {{{"mechanism", "binary_buddy"}, {"classes", "exact"}}, "allocators[0].classes", "has its own classes"},
      {{{"mechanism", "binary_buddy"}, {"split", false}}, "allocators[0].coalesce", "no buddies to coalesce"},
      {{{"mechanism", "binary_buddy"}, {"system", {{"chunk", 5000}}}}, "allocators[0].system.chunk", "power of two"},
      {{{"classes", {16, 8}}}, "allocators[0].classes[1]", "increasing"},
      {{{"sizes", {{"min", 0}, {"max", 0}}}}, "allocators[0].sizes.max", "above sizes.min"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.patch.dump());
    const std::string e = error_of_allocator(c.patch);
    EXPECT_NE(e.find("x.json: " + c.field + ": "), std::string::npos) << e;
    EXPECT_NE(e.find(c.why), std::string::npos) << e;
  }
}

TEST(DmmSpec, RangesMustTileTheSizes) {
  auto spec = [](std::uint64_t min0, json max0, std::uint64_t min1) {
    return json{{"allocators",
                 {{{"sizes", {{"min", min0}, {"max", max0}}}, {"mechanism", "segregated_free_lists"}},
                  {{"sizes", {{"min", min1}, {"max", nullptr}}}, {"mechanism", "segregated_free_lists"}}}}};
  };
  EXPECT_NE(error_of(spec(8, 64, 64)).find("allocators[0].sizes.min: the first allocator must start at 0"),
            std::string::npos);
  EXPECT_NE(error_of(spec(0, 64, 128)).find("allocators[1].sizes.min: sizes (64, 128] are covered by none"),
            std::string::npos);
  EXPECT_NE(error_of(spec(0, 64, 32)).find("allocators[1].sizes.min: overlaps allocators[0]: sizes (32, 64]"),
            std::string::npos);
  EXPECT_NE(error_of(spec(0, nullptr, 64)).find("allocators[0].sizes.max: only the last allocator may have no max"),
            std::string::npos);
  EXPECT_EQ(error_of(spec(0, 64, 64)), "");
  EXPECT_NE(error_of(json{{"allocators", json::array()}}).find("allocators: must be a non-empty array"),
            std::string::npos);
  EXPECT_NE(error_of(json{{"name", "x"}, {"allocator", 1}}).find("allocator: unknown field"), std::string::npos);

  const sim::DmmSpec bounded = sim::parse_dmm_spec(json{
      {"allocators", {{{"sizes", {{"min", 0}, {"max", 4096}}}, {"mechanism", "segregated_free_lists"}}}}});
  EXPECT_NO_THROW(sim::check_covers(bounded, 4096));
  try {
    sim::check_covers(bounded, 5000, "x.json");
    ADD_FAILURE() << "no error";
  } catch (const sim::SpecError& e) {
    EXPECT_EQ(e.field(), "allocators[0].sizes.max");
    EXPECT_NE(std::string(e.what()).find("requests 5000 bytes"), std::string::npos);
  }
}

TEST(DmmSpec, FilesNameThemselvesInErrors) {
  tailor::test::TempDir dir;
  const std::string bad = dir.file("bad.json");
  std::ofstream(bad) << "{\"allocators\": [";
  try {
    sim::load_dmm_spec(bad);
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(bad + ": not JSON (at byte"), std::string::npos) << e.what();
  }
  EXPECT_THROW(sim::load_dmm_spec(dir.file("missing.json")), std::runtime_error);
  const std::string named = dir.file("mine.json");
  std::ofstream(named) << R"({"allocators": [{"sizes": {"min": 0}, "mechanism": "segregated_fit"}]})";
  EXPECT_EQ(sim::load_dmm_spec(named).name, "mine");  // named after the file when the spec has no name
}

}  // namespace
