// SPDX-License-Identifier: MIT
// A DMM simulated on a trace twice, with the checker and without: the checked
// run must hold at least the trace's peak in use and measure exactly what the
// plain one does. Each simulator's "the checker passes on a random trace" test
// asks this of its DMMs, so it is written once here.
#pragma once

#include <gtest/gtest.h>

#include <string_view>

#include "simulate/replay_trace.h"
#include "simulate/simulator.h"

namespace tailor::test {

struct CheckedAndPlain {
  simulate::Metrics checked, plain;
};

/// Simulates `dmm` on `t` checked and plain, expects the two to agree, and returns both for further checks.
inline CheckedAndPlain expect_checked_run_as_plain(const simulate::ReplayTrace& t, std::string_view dmm) {
  simulate::SimulateOptions o;
  o.check = true;
  CheckedAndPlain r;
  r.checked = simulate::simulate(t, dmm, o);
  EXPECT_GE(r.checked.memory_usage, t.summary.max_in_use_bytes);
  // A checked run measures exactly what an unchecked one does.
  r.plain = simulate::simulate(t, dmm);
  EXPECT_EQ(r.plain.steps, r.checked.steps);
  EXPECT_EQ(r.plain.reads, r.checked.reads);
  EXPECT_EQ(r.plain.writes, r.checked.writes);
  EXPECT_EQ(r.plain.memory_usage, r.checked.memory_usage);
  EXPECT_EQ(r.plain.internal_fragmentation + r.plain.external_fragmentation + r.plain.requested_at_peak,
            r.plain.held_usage);
  return r;
}

}  // namespace tailor::test
