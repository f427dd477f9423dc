// SPDX-License-Identifier: MIT
// The entry point of libtailor-mpi.so (mpi_job.h): a Job over MPI_COMM_WORLD.
// Everything else in the plugin is hidden; it links MPI, `tailor` does not.
#include <exception>
#include <type_traits>

#include "search/mpi_job.h"
#include "search/mpi_ring.h"

namespace tailor::search::mpi {
namespace {

class WorldJob final : public Job {
 public:
  Ring& world() override { return ring_; }
  [[noreturn]] void abort(const std::string& message) override { session_.abort(message); }

 private:
  Session session_;  // before the ring: MPI is up while the ring lives
  WorldRing ring_;
};

}  // namespace
}  // namespace tailor::search::mpi

extern "C" __attribute__((visibility("default"))) tailor::search::mpi::Job* tailor_mpi_open_job_v1(std::string* error) {
  try {
    return new tailor::search::mpi::WorldJob();
  } catch (const std::exception& e) {
    *error = e.what();
    return nullptr;
  }
}

static_assert(std::is_same_v<decltype(&tailor_mpi_open_job_v1), tailor::search::mpi::OpenJob>,
              "the entry point has the type open_job() calls it with");
