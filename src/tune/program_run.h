// SPDX-License-Identifier: MIT
// Runs the program being tuned, once, in a fresh process, and measures it as
// time(1) does: wall time from fork to exit, peak RSS (ru_maxrss of the
// program's process, started by the tailor-run helper), exit status. The environment is this process's with some variables
// set or removed; the program's output can pass through or be discarded.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tailor::tune {

struct RunSpec {
  std::vector<std::string> argv;   ///< argv[0] looked up in PATH
  std::vector<std::string> set;    ///< NAME=VALUE, replacing inherited ones
  std::vector<std::string> unset;  ///< names removed from the environment
  bool quiet = false;              ///< stdout and stderr to /dev/null, stdin from /dev/null
  /// With quiet: stdout to a temporary file, hashed after the run (RunResult::output_hash).
  bool capture_stdout = false;
  bool stdout_to_stderr = false;   ///< the program's stdout goes to stderr (ours is JSON)
  /// If set, a variable of that name holds the started process's pid (the
  /// recorder's TAILOR_RECORD_ROOT_PID: which process writes the main trace).
  std::string pid_variable;
  /// tailor-run (run_helper.c), through which the program is started so that
  /// its peak RSS is its own; empty: started directly (peak RSS then counts
  /// this process's RSS at fork, see run_helper.c). Not with pid_variable.
  std::string helper;
};

struct RunResult {
  int status = 0;         ///< exit status, or 128 + signal
  bool signaled = false;
  double seconds = 0;     ///< wall time
  double peak_rss = 0;    ///< bytes
  std::uint64_t output_hash = 0;   ///< of the program's stdout (capture_stdout)
  std::uint64_t output_bytes = 0;
};

/// Throws std::runtime_error if the process cannot be started at all
/// (status 127/126 from exec is reported as such).
RunResult run_program(const RunSpec& spec);

/// The executable a command name runs: a path as given, else the first
/// executable file of that name in PATH, symlinks resolved (what the
/// program's /proc/self/exe says, and so what libtailor's [program ...]
/// sections match). Throws std::runtime_error if there is none.
std::string resolve_executable(const std::string& program);

/// "exited with status 3", "was killed by signal 11 (Segmentation fault)".
std::string describe_status(const RunResult& r);

}  // namespace tailor::tune
