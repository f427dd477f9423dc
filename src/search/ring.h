// SPDX-License-Identifier: MIT
// How the processes of a distributed search reach each other: the island
// model (islands.h) and the shared evaluations (shared_evaluation.h) talk
// through this interface only. Implemented over MPI by the plugin
// (mpi_ring.h) and in one process by the tests; nothing here depends on MPI.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tailor::search {

/// How the processes of a search reach each other (an MPI communicator, say).
/// Every process calls each function in the same order.
class Ring {
 public:
  virtual ~Ring() = default;
  virtual unsigned rank() const = 0;
  virtual unsigned size() const = 0;
  /// Sends `message` to the next process (rank + 1, wrapping) without waiting for it to be received.
  virtual void post(const std::string& message) = 0;
  /// The oldest message the previous process posted that this one has not taken yet; waits for it.
  virtual std::string take() = 0;
  /// At rank 0 every process's message in rank order; elsewhere nothing.
  virtual std::vector<std::string> gather(const std::string& message) = 0;
  /// Every process's message in rank order, on every process.
  virtual std::vector<std::string> allgather(const std::string& message) = 0;
  /// A counter the processes share, for handing work out as it is done
  /// (shared_evaluation.h): adds `count` to it and returns its value before,
  /// without waiting for the other processes (one-sided). Starts at 0 and
  /// only grows.
  virtual std::uint64_t ticket(std::uint64_t count) = 0;
  /// The processes of this one's group (ranks [g x size, (g + 1) x size),
  /// the last group possibly smaller) as a ring of their own. Every process
  /// calls it.
  virtual std::unique_ptr<Ring> split(unsigned group_size) = 0;
};

}  // namespace tailor::search
