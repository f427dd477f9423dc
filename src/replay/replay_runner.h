// SPDX-License-Identifier: MIT
// Runs a replay plan on real allocators: resolves an allocator's name to how
// the driver runs under it, runs tailor-replay-driver once per run in a fresh
// process, checks it ran on the allocator it was meant to, and takes medians
// over interleaved rounds. Shared by `tailor replay` and the commands that
// will measure found DMMs for real.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "replay/plan_format.h"

namespace tailor::replay {

/// Where the driver and libtailor are: relative to the running `tailor`
/// (layout.h: PREFIX/libexec/tailor/tailor-replay-driver and
/// PREFIX/lib/libtailor.so), unless TAILOR_REPLAY_DRIVER and TAILOR_LIB name them.
struct Tools {
  std::string driver;
  std::string libtailor;  ///< checked only when an allocator needs it
};
/// Throws std::runtime_error if the driver is not found.
Tools find_tools();

/// How the driver runs under one allocator.
struct Allocator {
  std::string name;     ///< as given: "glibc", "jemalloc", "kng", "my.json", ...
  std::string preload;  ///< LD_PRELOAD, empty for glibc
  std::string dmm;      ///< TAILOR_DMM (a DMM name or a spec's absolute path), empty if none
  std::string expect;   ///< the allocator the driver must find itself on
  /// More variables for the driver, NAME=VALUE (e.g. TAILOR_CONFIG=FILE for
  /// a tuned libtailor), each replacing an inherited variable of that name;
  /// a NAME alone removes that variable.
  std::vector<std::string> env;
};

/// The allocators known by name (DMMs and spec files aside).
const std::vector<std::string>& allocator_names();

/// glibc (nothing preloaded), libtailor, mimalloc, jemalloc, tcmalloc (the
/// Debian libraries), one of `dmm_names` or a DMM spec file (a name ending in
/// .json or holding a '/'), which run on libtailor with TAILOR_DMM set.
/// Throws std::invalid_argument naming an unknown allocator, or a library or
/// spec file that does not exist.
Allocator resolve_allocator(const std::string& name, const Tools& tools, const std::vector<std::string>& dmm_names);

/// The header of a plan file. Throws std::runtime_error if it is not one.
plan::PlanHeader read_plan_header(const std::string& path);

/// Runs the driver on `plan_path` once, in a fresh process; returns its JSON
/// report. Throws std::runtime_error (with the driver's stderr) if it fails,
/// made another number of calls than the plan holds, or ran on another
/// allocator than `a.expect` (a preload that did not take).
nlohmann::json run_driver(const Tools& tools, const Allocator& a, const std::string& plan_path);

/// Medians over the runs of one allocator (os_bytes: NaN if the allocator
/// does not count them).
struct Medians {
  double seconds = 0, seconds_min = 0, seconds_max = 0;
  double peak_rss_bytes = 0;        ///< VmHWM
  double peak_rss_delta_bytes = 0;  ///< VmHWM - VmRSS just before the loop
  double os_bytes = 0;
  double minor_faults = 0;
};
Medians medians(const std::vector<nlohmann::json>& runs);

struct AllocatorResult {
  Allocator allocator;
  std::vector<nlohmann::json> runs;  ///< the driver's reports, in round order
  Medians median;
};

/// `runs` interleaved rounds: round r runs every allocator once, so that
/// drift of the machine hits all alike; the first round in the given order,
/// each later one in a shuffled order (a fixed seed), so that interference
/// that comes back with the period of a round (seen on shared hosts) does
/// not fall on the same allocator every round. `progress(round, index)` is
/// called before each run.
std::vector<AllocatorResult> run_rounds(const Tools& tools, const std::vector<Allocator>& allocators,
                                        const std::string& plan_path, unsigned runs,
                                        const std::function<void(unsigned, std::size_t)>& progress = {});

}  // namespace tailor::replay
