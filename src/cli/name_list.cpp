// SPDX-License-Identifier: MIT
// Splitting the comma-separated lists of names of options (name_list.h).
#include "cli/name_list.h"

#include <sstream>

namespace tailor::cli {

std::vector<std::string> split_names(const std::string& list) {
  std::vector<std::string> names;
  std::stringstream in(list);
  for (std::string name; std::getline(in, name, ',');)
    if (!name.empty()) names.push_back(name);
  return names;
}

}  // namespace tailor::cli
