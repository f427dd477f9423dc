// SPDX-License-Identifier: MIT
// Fuzz target: a DMM spec file as the simulator and libtailor read it
// (src/dmm: parse_json, then read_spec), on arbitrary text.
#include <cstdint>
#include <vector>

#include "dmm/json_reader.h"
#include "dmm/spec_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const char* text = reinterpret_cast<const char*>(data);
  std::vector<unsigned char> arena(tailor::dmm::json_arena_bound(size));
  const tailor::dmm::JsonResult doc = tailor::dmm::parse_json(text, size, arena.data(), arena.size());
  if (doc.failed()) return 0;
  tailor::dmm::SpecStorage storage;
  std::vector<std::uint64_t> pool(tailor::dmm::spec_pool_words(size));
  tailor::dmm::SpecProblem problem;
  (void)tailor::dmm::read_spec(*doc.root(), storage, pool.data(), pool.size(), problem);
  return 0;
}
