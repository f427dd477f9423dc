// SPDX-License-Identifier: MIT
// The simulation of DMMs checked against the same DMMs run for real (seed
// 002's Table 5 for this machine, docs/deploy.md): each DMM is simulated on
// a trace and run for real (libtailor with TAILOR_DMM, replaying the trace
// with tailor replay's driver), and the two memories and the two times are
// compared. One entry point for `tailor validate`, its `--fit` of the time
// model over several traces, and the benchmarks.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "simulate/metrics.h"
#include "simulate/time_model.h"

namespace tailor::deploy {

struct ValidationRequest {
  std::string trace;
  std::vector<std::string> dmms = {"kng", "lea", "fib", "s10", "exa"};  ///< kng is added if missing
  unsigned runs = 3;             ///< interleaved rounds of the real runs (medians)
  unsigned front = 16;           ///< blocks per bin of the front, simulated and real (TAILOR_DMM_FRONT)
  /// Replays too short to time: the trace is played `repeat` times in a
  /// row, or as many times as make at least `repeat_to` events if that is
  /// more, simulated and for real, the blocks live at the end of a pass
  /// freed (in address order) before the next. A trace of one thread only.
  unsigned repeat = 1;
  std::uint64_t repeat_to = 0;
  const simulate::TimeModel* model = nullptr;  ///< the simulated time; nullptr: steps
  /// Called before each simulation and each real run ("simulating lea",
  /// "real: round 2/3, fib").
  std::function<void(const std::string&)> progress;
};

struct ValidationRow {
  std::string dmm;        ///< as the request named it
  std::string shown;      ///< a spec file's name without its directory
  std::string runs_on;    ///< the DMM the real runs reported serving them
  simulate::Metrics sim;
  double sim_time = 0;    ///< the model's seconds, or steps without a model
  double real_seconds = 0, real_held = 0, real_os = 0;  ///< medians of the real runs
  /// The fastest real run: the time the simulation is compared with. On a
  /// shared host a run is slowed, never sped up, by what else runs; the
  /// fastest of the rounds is the least disturbed, and repeats between sets
  /// of rounds far better than their median (docs/deploy.md).
  double real_fastest = 0;
  std::vector<double> real_run_seconds;  ///< every real run's time, round by round
  // Against Kingsley's, simulated and real, and their difference in percent.
  double sim_time_norm = 0, real_time_norm = 0, time_norm_diff_pct = 0;
  double sim_memory_norm = 0, real_memory_norm = 0;
  double memory_diff_pct = 0;  ///< real resident against simulated
  double held_diff_pct = 0;    ///< real held against simulated
};

struct ValidationReport {
  std::string trace;
  std::uint64_t operations = 0;  ///< simulated and replayed, every pass
  unsigned passes = 1;            ///< the trace's, one after another in each run
  unsigned runs = 0;
  bool model = false;  ///< the simulated time is the model's (else steps)
  std::vector<ValidationRow> rows;  ///< kng first if it was added
  double spearman = 0;              ///< of simulated and real time over the DMMs (NaN if undefined)
  double worst_memory_diff_pct = 0, worst_time_norm_diff_pct = 0;
};

/// Simulates and runs every DMM of the request. Throws std::invalid_argument
/// for a name that is not a DMM, std::runtime_error for a failed run.
ValidationReport validate(const ValidationRequest& request);

/// Sets every row's simulated time from `model` (its steps without one),
/// the times normalized to Kingsley's and their differences, and the
/// report's worst time difference and Spearman correlation: what validate
/// does with the request's model, and what a fit's new model redoes.
void score_times(ValidationReport& report, const simulate::TimeModel* model);

/// The time model fitted on the DMMs of every report (their features and
/// real times), with `fitted_on` and `machine` filled.
simulate::TimeModel fit(const std::vector<ValidationReport>& reports);

/// The time model the simulator uses on this machine: TAILOR_TIME_MODEL,
/// else share/tailor/time-model.json. std::nullopt when there is none or it
/// is malformed, with `error` saying which file and why (empty when none
/// was looked for because none exists).
std::optional<simulate::TimeModel> default_time_model(std::string& error);

}  // namespace tailor::deploy
