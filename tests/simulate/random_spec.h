// SPDX-License-Identifier: MIT
// Random DMM specs for tests: 1 to 4 allocators over random ranges, random
// mechanisms and parameters. Some break the model's rules (parse_dmm_spec
// rejects them); the simulator tests check the accepted ones against the
// checker, the allocator tests run them for real (TAILOR_DMM).
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

namespace tailor::test {

inline nlohmann::json random_allocator(std::mt19937_64& rng, std::uint64_t min, nlohmann::json max) {
  using json = nlohmann::json;
  static const char* const mechs[] = {"segregated_free_lists", "simple_segregated_storage", "segregated_fit",
                                      "exact_segregated_fit", "strict_segregated_fit", "binary_buddy",
                                      "fibonacci_buddy"};
  static const char* const structures[] = {"sll", "dll", "btree"};
  static const char* const fits[] = {"first", "best", "exact", "farthest"};
  static const char* const classes[] = {"single", "powers_of_two", "exact"};
  json a = {{"sizes", {{"min", min}, {"max", max}}}, {"mechanism", mechs[rng() % 7]}};
  const std::string m = a["mechanism"];
  if (m.find("buddy") == std::string::npos) {
    a["structure"] = structures[rng() % 3];
    a["fit"] = fits[rng() % 4];
    a["policy"] = rng() % 2 ? "fifo" : "lifo";
    if (m == "segregated_free_lists" || m == "segregated_fit" || m == "simple_segregated_storage")
      a["classes"] = classes[rng() % 3];
    if (m == "segregated_free_lists" || m == "segregated_fit") {
      a["split"] = rng() % 2 == 0;
      a["coalesce"] = rng() % 2 == 0;
      a["system"]["returns"] = a["coalesce"] && rng() % 2 == 0;
      a["header"] = 8 * (1 + rng() % 2);
    }
    if (m == "simple_segregated_storage") {
      a["system"]["chunk"] = 1 << (16 + rng() % 2);
      if (rng() % 3 == 0) {  // a free list per area: singly linked, first, LIFO
        a["lists"] = "area";
        a["structure"] = "sll";
        a["fit"] = "first";
        a["policy"] = "lifo";
      }
    }
    a["alignment"] = 8 << (rng() % 2);
  } else {
    a["split"] = rng() % 4 != 0;
    a["coalesce"] = a["split"] && rng() % 2 == 0;
    a["system"]["chunk"] = std::uint64_t{1} << (12 + rng() % 9);
  }
  return a;
}

/// The allocators of a random spec (the last one without a max).
inline nlohmann::json random_allocators(std::mt19937_64& rng) {
  nlohmann::json allocators = nlohmann::json::array();
  const int parts = 1 + static_cast<int>(rng() % 4);
  std::uint64_t min = 0;
  for (int i = 0; i < parts; ++i) {
    const bool last = i == parts - 1;
    const std::uint64_t max = min + 8 + rng() % (i == 0 ? 256 : 8192);
    allocators.push_back(random_allocator(rng, min, last ? nlohmann::json(nullptr) : nlohmann::json(max)));
    min = max;
  }
  return allocators;
}

}  // namespace tailor::test
