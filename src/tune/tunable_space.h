// SPDX-License-Identifier: MIT
// The space of libtailor's own tunables that `tailor tune` searches (seed
// 001: a few parameters tuned per program), and a point of it written as
// the config file libtailor reads (docs/allocator.md, "Tunables").
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tune/objective.h"

namespace tailor::tune {

/// A point of the space: config-file names (class_spacing, ...) to values
/// as written in the file ("8", "16K", "-1"); a name left out keeps
/// libtailor's default. `dmm`, when set, is a DMM spec's path (or a
/// built-in's name) that serves malloc instead.
struct Settings {
  std::map<std::string, std::string> values;
  std::string dmm;
  std::string given;  ///< a config file given as is (--candidate): values and dmm unused
  bool operator==(const Settings&) const = default;
};

/// One tunable and the values tried for it, its default first.
struct Dimension {
  std::string name;                 ///< config-file name
  std::vector<std::string> values;  ///< values[0] is libtailor's default
  std::string why;                  ///< what it trades, one line
};

/// What the trace says about the program, to leave out the dimensions that
/// cannot change anything (cross-thread batches in a one-thread program,
/// the huge cache in one that never maps a huge block).
struct TraceTraits {
  unsigned threads = 1;
  bool cross_thread_frees = false;
  bool huge_blocks = false;   ///< blocks above 32 MiB
  bool large_blocks = false;  ///< blocks above 128 KiB
  std::string classes;        ///< classes proposed from the trace (class_proposal.h), "" if none
};

/// The dimensions, in the order the coordinate search visits them (the ones
/// that move most first), for an objective and a program.
std::vector<Dimension> tunable_space(Objective o, const TraceTraits& traits);

/// "class_spacing=8 page_size=16K" (or "defaults"), and the DMM.
std::string describe(const Settings& s);

/// The config file: a comment header (`header`, one or more lines without
/// the '#'), then the settings as `name = value` lines, under `[program
/// KEY]` when `section_key` is not empty.
std::string config_text(const Settings& s, const std::string& header, const std::string& section_key = {});

}  // namespace tailor::tune
