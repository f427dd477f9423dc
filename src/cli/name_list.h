// SPDX-License-Identifier: MIT
// The comma-separated lists of names that options take (--dmm kng,lea,
// --alloc glibc,FILE.json): split the same way by every subcommand.
#pragma once

#include <string>
#include <vector>

namespace tailor::cli {

/// The names of the comma-separated `list`, in order; empty ones ("a,,b",
/// a trailing comma) are left out.
std::vector<std::string> split_names(const std::string& list);

}  // namespace tailor::cli
