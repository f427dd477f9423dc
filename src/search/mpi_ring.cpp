// SPDX-License-Identifier: MIT
// The Ring over MPI_COMM_WORLD (mpi_ring.h). Errors end the job (MPI's
// default handler, MPI_ERRORS_ARE_FATAL): a rank that dies takes the job
// with it, and mpirun names the rank. A rank waiting for a slower neighbour
// sleeps between tests of its requests instead of spinning in a blocking
// call (Open MPI busy-polls there), so that on a shared or oversubscribed
// machine the wait does not take the core the neighbour needs.
#include "mpi_ring.h"

#include <mpi.h>

#include <time.h>

#include <climits>
#include <cstdio>
#include <stdexcept>

namespace tailor::search::mpi {

namespace {

// What a rank waiting for another does between two tests: sleep 0.2 ms.
void nap() {
  const timespec pause{0, 200000};
  nanosleep(&pause, nullptr);
}

// Completes the requests, napping between tests.
void wait_all(MPI_Request* requests, int count) {
  for (;;) {
    int done = 0;
    MPI_Testall(count, requests, &done, MPI_STATUSES_IGNORE);
    if (done) return;
    nap();
  }
}

int length_of(const std::string& s) {
  if (s.size() > static_cast<std::size_t>(INT_MAX)) throw std::length_error("MPI message over 2 GiB");
  return static_cast<int>(s.size());
}

}  // namespace

Session::Session() {
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  if (provided < MPI_THREAD_FUNNELED) abort("MPI does not provide MPI_THREAD_FUNNELED");
}

Session::~Session() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

void Session::abort(const std::string& message) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::fprintf(stderr, "tailor: rank %d: %s\n", rank, message.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();  // not reached
}

WorldRing::WorldRing() {
  int r = 0, n = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  rank_ = static_cast<unsigned>(r);
  size_ = static_cast<unsigned>(n);
}

struct WorldRing::Sending {
  std::string bytes;
  MPI_Request request = MPI_REQUEST_NULL;
};

WorldRing::~WorldRing() {
  for (auto& s : sending_) wait_all(&s->request, 1);
}

// A message is one send of its bytes (tag 2); the receiver learns its length
// by probing. MPI keeps messages between two ranks with one tag in order.
void WorldRing::post(const std::string& message) {
  // Forget the messages already sent.
  std::erase_if(sending_, [](const std::unique_ptr<Sending>& s) {
    int done = 0;
    MPI_Test(&s->request, &done, MPI_STATUS_IGNORE);
    return done != 0;
  });
  auto s = std::make_unique<Sending>();
  s->bytes = message;
  const int next = static_cast<int>((rank_ + 1) % size_);
  MPI_Isend(s->bytes.data(), length_of(s->bytes), MPI_CHAR, next, 2, MPI_COMM_WORLD, &s->request);
  sending_.push_back(std::move(s));
}

std::string WorldRing::take() {
  const int prev = static_cast<int>((rank_ + size_ - 1) % size_);
  MPI_Status status;
  for (;;) {
    int arrived = 0;
    MPI_Iprobe(prev, 2, MPI_COMM_WORLD, &arrived, &status);
    if (arrived) break;
    nap();
  }
  int length = 0;
  MPI_Get_count(&status, MPI_CHAR, &length);
  std::string received(static_cast<std::size_t>(length), '\0');
  MPI_Recv(received.data(), length, MPI_CHAR, prev, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return received;
}

std::vector<std::string> WorldRing::gather(const std::string& message) {
  const int mine = length_of(message);
  std::vector<int> lengths(rank_ == 0 ? size_ : 0), offsets(rank_ == 0 ? size_ : 0);
  MPI_Request request;
  MPI_Igather(&mine, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD, &request);
  wait_all(&request, 1);
  std::string all;
  if (rank_ == 0) {
    long long total = 0;
    for (unsigned r = 0; r < size_; ++r) {
      offsets[r] = static_cast<int>(total);
      total += lengths[r];
    }
    if (total > INT_MAX) throw std::length_error("MPI gather over 2 GiB");
    all.resize(static_cast<std::size_t>(total));
  }
  MPI_Igatherv(message.data(), mine, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD,
               &request);
  wait_all(&request, 1);
  std::vector<std::string> parts;
  if (rank_ == 0)
    for (unsigned r = 0; r < size_; ++r) parts.push_back(all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r])));
  return parts;
}

std::vector<std::string> WorldRing::allgather(const std::string& message) {
  const int mine = length_of(message);
  std::vector<int> lengths(size_), offsets(size_);
  MPI_Request request;
  MPI_Iallgather(&mine, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD, &request);
  wait_all(&request, 1);
  long long total = 0;
  for (unsigned r = 0; r < size_; ++r) {
    offsets[r] = static_cast<int>(total);
    total += lengths[r];
  }
  if (total > INT_MAX) throw std::length_error("MPI allgather over 2 GiB");
  std::string all(static_cast<std::size_t>(total), '\0');
  MPI_Iallgatherv(message.data(), mine, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, MPI_COMM_WORLD,
                  &request);
  wait_all(&request, 1);
  std::vector<std::string> parts;
  for (unsigned r = 0; r < size_; ++r)
    parts.push_back(all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r])));
  return parts;
}

}  // namespace tailor::search::mpi
