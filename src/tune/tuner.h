// SPDX-License-Identifier: MIT
// `tailor tune`: from a program to the allocator configuration tailored to
// it, checked on the program itself. The phases, each within its share of
// the budget:
//   1. record the program (tailor record's recorder);
//   2. search libtailor's tunables (tunable_space.h) by coordinate descent,
//      each candidate ranked by the real replay of the trace against the
//      incumbent in interleaved rounds (the tunable allocator paper's evaluation);
//   3. search DMM structures by grammatical evolution on the simulator
//      (the DMM simulator paper), the best few of the final front kept;
//   4. replay the finalists and glibc against default libtailor, more rounds;
//   5. run the program itself, interleaved rounds, under glibc, default
//      libtailor and the finalists that beat it on the replay, and keep the
//      best finalist that does not lose to default libtailor there.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tune/objective.h"
#include "tune/tunable_space.h"

namespace tailor::tune {

struct TuneOptions {
  std::vector<std::string> command;
  Objective objective = Objective::kTime;
  double budget_seconds = 120;
  unsigned runs = 5;                    ///< interleaved rounds of the real runs, at most
  std::vector<std::string> candidates;  ///< config files verified as well (--candidate)
  bool search = true;                   ///< false: only the candidates given
  std::string work_dir;                 ///< kept if set; else a temporary directory, removed
  std::uint64_t seed = 1;
  bool program_output_to_stderr = false;  ///< the recorded run's stdout to stderr (--json)
  /// The memory objective's limit on the program's own time against
  /// default libtailor (--max-slowdown).
  double max_slowdown = kOtherLimit;
};

/// A failure that is the program's or the input's, not tailor's: printed as
/// is, with no config written.
struct TuneError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Progress {
  std::string phase;   ///< "record", "tunables", "dmm search", "finalists", "real runs"
  std::string detail;  ///< what is being measured
  unsigned replays = 0;
  double seconds_left = 0;
};

/// A configuration that made it to the end, measured.
struct Finalist {
  std::string label;     ///< "tuned", "dmm-1", or the --candidate file's name
  std::string origin;    ///< "tunables", "dmm", "given"
  Settings settings;
  std::string config;    ///< its config file in the work directory
  std::optional<Ratios> replay;  ///< replay vs default libtailor
  std::optional<Ratios> real;    ///< real runs vs default libtailor
  double real_seconds = 0, real_peak_rss = 0;  ///< medians
  bool verified = false;         ///< ran on the program
  std::string why_not;           ///< why it is not the winner (empty for the winner)
  std::string gives_up;          ///< what it trades away besides time and memory (exact classes: alignment)
  std::string dmm_spec;          ///< a DMM finalist's spec (JSON): the work directory may be gone when it is written
};

struct Row {  ///< a configuration's medians
  std::string label;
  double seconds = 0, seconds_min = 0, seconds_max = 0, peak = 0;
  Ratios vs_default;
};

struct TuneResult {
  std::string executable;  ///< the executable of the process tuned (the one that made the allocation calls)
  unsigned processes = 1;  ///< processes the command ran that the recorder saw
  std::string process;     ///< the process tuned: "pid N: its command line"
  double record_seconds = 0;
  std::uint64_t events = 0, calls = 0;
  unsigned threads = 0;
  std::vector<Row> replay_rows;  ///< glibc, default libtailor, finalists (phase 4)
  unsigned replay_rounds = 0;
  std::vector<Row> real_rows;    ///< glibc, default libtailor, verified finalists
  unsigned real_rounds = 0;
  std::vector<Finalist> finalists;
  int winner = -1;               ///< index in finalists
  unsigned replays = 0;          ///< driver runs in all
  unsigned tunables_tried = 0;   ///< configurations of phase 2
  unsigned generations = 0;      ///< of phase 3
  std::vector<std::string> notes;
  double seconds = 0;
};

TuneResult tune(const TuneOptions& options, const std::function<void(const Progress&)>& progress);

/// Whether a finalist measured on the real program beats default libtailor
/// for the objective (the memory objective's time limit: max_slowdown); if
/// not, `why` says which rule it broke and by how much.
bool wins_real(Objective o, const Ratios& real, std::string& why, double max_slowdown = kOtherLimit);

}  // namespace tailor::tune
