// SPDX-License-Identifier: MIT
// TimeModel: the time a DMM takes for real on a trace, predicted from what
// its simulation counted. The DMM simulator paper ranks DMMs by abstract steps; real time
// also pays for the calls themselves, the front of free blocks, metadata
// accesses, first-touched pages and the system's work on released ranges,
// in proportions that are the machine's. So the model is linear in those
// counts, with coefficients (nanoseconds per unit) fitted on this machine
// by `tailor validate --fit` over real replays of the bundled traces
// (least squares on relative errors, coefficients not negative), and kept
// in a small JSON file the simulator reads (share/tailor/time-model.json).
//
//   seconds = sum_k ns[k] x feature_k / 1e9, with features:
//     hits     requests the front served (dmm/front.h)
//     kept     releases the front kept
//     calls    operations that reached a mechanism (the rest)
//     reads    metadata words read
//     writes   metadata words written
//     pages    4 KiB pages that became held (each faulted in when touched)
//     purges   releases that gave whole pages back (madvise)
//     zeroed   KiB of released ranges zeroed by hand
//     misses   loads of metadata in 64-byte lines a 2 MiB direct-mapped
//              cache model did not hold, but for a line just past the
//              previous miss (a prefetcher's stream); stores fill the
//              model's cache (a replay writes each block's first byte)
//              without counting (simulated_memory.h)
//     steps_*  the abstract steps (the DMM simulator paper's time complexity) of each
//              mechanism family apart: a step of a list search is a
//              dependent load, one of a split or a push is not
//
// Without a model (no file, or a bad one) the simulator's time is steps, as
// before; the search then ranks time by steps.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "dmm/allocator.h"
#include "simulate/metrics.h"

namespace tailor::simulate {

struct TimeModel {
  static constexpr std::size_t kFeatures = 9 + dmm::kMechanismKinds;
  using Features = std::array<double, kFeatures>;
  static const std::array<const char*, kFeatures> kNames;

  Features ns{};            ///< nanoseconds per unit of each feature
  std::string machine;      ///< where it was fitted (CPU model, cores)
  std::string fitted_on;    ///< what it was fitted on (traces, DMMs, rounds)
  double median_error = 0;  ///< of the fit: median |predicted - real| / real over its rows
  double worst_normalized_error = 0;  ///< of the fit: largest |real - predicted| / predicted of a time normalized to Kingsley's

  /// A simulation's counts as the model's features.
  static Features features(const Metrics& m);
  /// The predicted real time of a simulated run, in seconds.
  double seconds(const Metrics& m) const;
};

/// The model in `path`; std::nullopt with `error` set ("FILE: why") if the
/// file is missing or malformed.
std::optional<TimeModel> load_time_model(const std::string& path, std::string& error);
/// The model as the file holds it.
std::string to_json_text(const TimeModel& model);

/// One row of a fit: a DMM simulated and run for real on a trace.
struct FitRow {
  std::string trace, dmm;
  TimeModel::Features features{};
  double real_seconds = 0;
};

/// Least squares on relative errors with non-negative coefficients
/// (Lawson and Hanson's active set): the coefficients that make each row's
/// predicted time over its trace's Kingsley row (else the trace's first
/// row) closest to the real ratio, the mean of predicted / real over the
/// rows 1, and each row's predicted / real near 1 with a tenth of the
/// weight; each row weighs as much as any other whatever its length. A
/// feature counted in fewer than a quarter of the rows gets 0. Throws
/// std::invalid_argument for no rows.
TimeModel fit_time_model(const std::vector<FitRow>& rows);

}  // namespace tailor::simulate
