// SPDX-License-Identifier: MIT
// What `tailor tune` optimizes, and how two measured configurations compare.
// Every comparison is a ratio to a reference measured in the same rounds
// (default libtailor, or the incumbent of the search), so that drift of a
// shared machine hits both alike. Lower is better.
#pragma once

#include <string>

namespace tailor::tune {

enum class Objective { kTime, kMemory, kBalanced };

/// "time", "memory", "balanced"; throws std::invalid_argument otherwise.
Objective parse_objective(const std::string& name);
const char* to_string(Objective o);

/// A configuration measured against a reference: time and peak memory,
/// each as a ratio to the reference's (1 = equal).
struct Ratios {
  double time = 1;
  double memory = 1;
};

/// The limits a winner must keep on the objective it does not optimize:
/// time at most 1.1x default libtailor's for `memory`, peak RSS at most
/// 1.1x for `time` (issue 14's targets).
constexpr double kOtherLimit = 1.10;

/// The figure of merit: the time ratio, the memory ratio, or their
/// geometric mean; +infinity when the other objective breaks its limit.
double score(Objective o, const Ratios& r);

}  // namespace tailor::tune
