// SPDX-License-Identifier: MIT
// What a rank of an MPI search says when the job ends under it. When one
// rank dies (killed, out of memory), mpirun (Open MPI) stops every other
// rank with SIGTERM and prints its own notice; a user then needs to know
// which rank went and where the search can resume from. JobWatch installs
// a SIGTERM handler that finds which ranks on this machine are gone (every
// rank's host and pid are exchanged at the start) and prints, from the
// lowest rank still alive on the machine, one line naming them and the
// last checkpoint written, with how to resume it (on any number of ranks:
// the search does not depend on them), then dies of the signal as before.
// The handler only reads what was formatted beforehand and calls
// async-signal-safe functions (kill, write, signal, raise).
#pragma once

#include <string>

#include "search/ring.h"

namespace tailor::search {

class JobWatch {
 public:
  /// Collective on `world` (every rank calls it): exchanges the ranks'
  /// hosts and pids and installs the handler, until destroyed.
  explicit JobWatch(Ring& world);
  ~JobWatch();
  JobWatch(const JobWatch&) = delete;
  JobWatch& operator=(const JobWatch&) = delete;
};

/// The search writes checkpoints to `path` every `every` generations (empty
/// path: none): what the message says before the first is written.
void note_checkpoint_plan(const std::string& path, unsigned every);
/// The checkpoint of `generation` has been written to `path`.
void note_checkpoint(const std::string& path, unsigned generation);

}  // namespace tailor::search
