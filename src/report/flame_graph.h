// SPDX-License-Identifier: MIT
// The report's flame graphs of a trace recorded with stacks: the stack tree
// (trace::StackTable) weighed by analyze::StackProfile, outermost frame at
// the bottom, as the nested {name, value, children} that d3-flame-graph draws.
// Frames are named by function (file and line dropped), and a node's
// children of one name are merged, as flame graphs do: a function called
// from two lines of its caller is one box. Nodes under 1/2000 of the total
// are left out (their bytes stay in their parent's width), so that a trace
// of millions of distinct stacks still gives a page of a few thousand boxes.
#pragma once

#include <nlohmann/json.hpp>

#include "analyze/stack_profile.h"
#include "tailor/trace/reader.h"

namespace tailor::report {

/// {"allocated": tree, "peak": tree, "allocated_bytes", "peak_bytes"};
/// `symbols` false names frames by address.
nlohmann::json flame_graphs(const trace::Reader& reader, const analyze::StackProfile& profile, bool symbols);

}  // namespace tailor::report
