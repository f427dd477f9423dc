// SPDX-License-Identifier: MIT
// The island model's Ring over MPI (in the plugin libtailor-mpi.so, built
// when TAILOR_MPI is on; mpi_job.h): MPI_COMM_WORLD, messages as bytes. Only
// the main thread calls MPI (MPI_THREAD_FUNNELED); the evaluator's worker
// threads never do. mpi.h stays in the .cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "search/ring.h"

namespace tailor::search::mpi {

/// MPI initialized for the session's lifetime (MPI_Init_thread, FUNNELED), finalized after.
class Session {
 public:
  Session();
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  /// Prints "tailor: rank R: MESSAGE" on stderr and ends the whole job (MPI_Abort).
  [[noreturn]] void abort(const std::string& message);
};

/// The ring of a communicator: MPI_COMM_WORLD's (WorldRing) or a group's (split).
class CommRing : public Ring {
 public:
  /// Waits until every posted message has been received; frees a group's communicator.
  ~CommRing() override;
  CommRing(const CommRing&) = delete;
  CommRing& operator=(const CommRing&) = delete;
  unsigned rank() const override { return rank_; }
  unsigned size() const override { return size_; }
  void post(const std::string& message) override;
  std::string take() override;
  std::vector<std::string> gather(const std::string& message) override;
  std::vector<std::string> allgather(const std::string& message) override;
  /// MPI_Fetch_and_op on a window at the communicator's rank 0 (passive
  /// target: rank 0 need not be in an MPI call for another to take one).
  std::uint64_t ticket(std::uint64_t count) override;
  std::unique_ptr<Ring> split(unsigned group_size) override;

 protected:
  struct Comm;  // the communicator (mpi.h stays in the .cpp)
  explicit CommRing(std::unique_ptr<Comm> comm);

 private:
  struct Sending;  // a posted message and its MPI request, alive until sent
  std::unique_ptr<Comm> comm_;
  unsigned rank_ = 0, size_ = 1;
  std::vector<std::unique_ptr<Sending>> sending_;
};

class WorldRing : public CommRing {
 public:
  WorldRing();
};

}  // namespace tailor::search::mpi
