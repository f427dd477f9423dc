// SPDX-License-Identifier: MIT
// A rank's MPI job, as `tailor search` sees it under mpirun: MPI set up for
// the job's life and the ring of all ranks (islands.h). The implementation
// (mpi_ring.cpp, mpi_plugin.cpp) is a plugin, libtailor-mpi.so, that
// open_job() loads with dlopen.
//
// Why a plugin rather than linking MPI into `tailor`: linked, libmpi and its
// libraries (Open RTE, OPAL, hwloc, libevent, ...) were loaded at every start
// of every subcommand (tailor --version 3.1 ms against 2.2 ms without them),
// and the package depended on Open MPI. Now only a rank of an MPI job loads
// them, the sanitizer builds of `tailor` do not link them, and the plugin
// ships in a package of its own (packaging/debian.cmake).
#pragma once

#include <memory>
#include <string>

#include "search/ring.h"

namespace tailor::search::mpi {

/// MPI initialized when made (MPI_Init_thread, FUNNELED: only the main
/// thread calls MPI), finalized when destroyed.
class Job {
 public:
  virtual ~Job() = default;
  /// MPI_COMM_WORLD as a Ring.
  virtual Ring& world() = 0;
  /// Prints "tailor: rank R: MESSAGE" on stderr and ends the whole job (MPI_Abort).
  [[noreturn]] virtual void abort(const std::string& message) = 0;
};

/// The plugin's entry point: a new Job, or nullptr with *error set. The
/// version in the name changes with the Job interface, so that a plugin of
/// another build is refused by name rather than called wrongly.
using OpenJob = Job* (*)(std::string* error);
inline constexpr const char* kOpenJobSymbol = "tailor_mpi_open_job_v1";

/// Loads the plugin at `plugin` (kept loaded for the process's life) and
/// starts the job. Throws std::runtime_error naming the file and the loader's
/// reason (a missing libmpi among them) if it cannot.
std::unique_ptr<Job> open_job(const std::string& plugin);

}  // namespace tailor::search::mpi
