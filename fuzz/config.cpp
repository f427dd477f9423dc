// SPDX-License-Identifier: MIT
// Fuzz target: libtailor's configuration parser (config_parse) on an
// arbitrary config file and environment. The input is the file's text up to
// the first NUL, then NUL-separated values given to the TAILOR_* variables in
// table order. Whatever the input, the result must respect the table's
// bounds and the thresholds' order.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "alloc/config.h"

namespace {
std::vector<std::string> g_values;

const char* lookup(const char* name) {
  using namespace tailor::alloc;
  for (int i = 0; i < static_cast<int>(Param::kCount) && i < static_cast<int>(g_values.size()); ++i)
    if (std::strcmp(param_info(static_cast<Param>(i)).env, name) == 0)
      return g_values[static_cast<std::size_t>(i)].empty() ? nullptr : g_values[static_cast<std::size_t>(i)].c_str();
  return nullptr;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tailor::alloc;
  std::string all(reinterpret_cast<const char*>(data), size);
  std::size_t cut = all.find('\0');
  std::string file = all.substr(0, cut);
  g_values.clear();
  while (cut != std::string::npos) {
    std::size_t next = all.find('\0', cut + 1);
    g_values.push_back(all.substr(cut + 1, next == std::string::npos ? std::string::npos : next - cut - 1));
    cut = next;
  }
  Config c{};
  config_parse(c, &lookup, file.c_str());
  // Invariants every accepted configuration keeps.
  if (c.slice_size * 16 > c.segment_size || c.small_max > c.middle_max || c.middle_max > c.large_max ||
      c.large_max > c.segment_size / 2 || (c.segment_size & (c.segment_size - 1)) != 0 ||
      (c.slice_size & (c.slice_size - 1)) != 0)
    std::abort();
  return 0;
}
