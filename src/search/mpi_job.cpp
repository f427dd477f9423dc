// SPDX-License-Identifier: MIT
// Loading the MPI plugin (mpi_job.h).
//
// RTLD_GLOBAL: Open MPI loads components of its own with dlopen, and they
// look for libmpi's and OPAL's symbols in the global scope; a plugin opened
// with RTLD_LOCAL would hide them (mpi4py and others open libmpi globally
// for the same reason). The plugin itself exports only its entry point.
#include "search/mpi_job.h"

#include <dlfcn.h>

#include <stdexcept>

namespace tailor::search::mpi {

std::unique_ptr<Job> open_job(const std::string& plugin) {
  void* handle = dlopen(plugin.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (handle == nullptr) {
    const char* err = dlerror();
    const std::string why = err ? err : "unknown error";
    const bool no_mpi = why.find("libmpi") != std::string::npos || why.find("libopen-") != std::string::npos;
    throw std::runtime_error("cannot load the MPI plugin " + plugin + ": " + why +
                             (no_mpi ? " (Open MPI's libraries come with Debian's libopenmpi3)" : ""));
  }
  auto open = reinterpret_cast<OpenJob>(dlsym(handle, kOpenJobSymbol));
  if (open == nullptr)
    throw std::runtime_error("the MPI plugin " + plugin + " has no " + kOpenJobSymbol +
                             " (a plugin of another version of tailor?)");
  std::string error;
  std::unique_ptr<Job> job(open(&error));
  if (!job) throw std::runtime_error("the MPI plugin " + plugin + ": " + error);
  return job;
}

}  // namespace tailor::search::mpi
