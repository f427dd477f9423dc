// SPDX-License-Identifier: MIT
// The Ring over an MPI communicator (mpi_ring.h): MPI_COMM_WORLD, or a
// group split from it. Errors end the job (MPI's default handler,
// MPI_ERRORS_ARE_FATAL): a rank that dies takes the job
// with it, and mpirun names the rank. A rank waiting for a slower neighbour
// sleeps between tests of its requests instead of spinning in a blocking
// call (Open MPI busy-polls there), so that on a shared or oversubscribed
// machine the wait does not take the core the neighbour needs.
#include "search/mpi_ring.h"

#include <mpi.h>

#include <sched.h>
#include <time.h>

#include <algorithm>
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

// Completes the requests: testing them, yielding the core between tests,
// for the first 2 ms (ranks that finish a round together exchange in a few
// microseconds, and a nap would add its length to every exchange), then
// napping between tests, so that on an oversubscribed machine a rank that
// waits long does not take the core the one it waits for needs.
void wait_all(MPI_Request* requests, int count) {
  timespec start{}, now{};
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (bool eager = true;;) {
    int done = 0;
    MPI_Testall(count, requests, &done, MPI_STATUSES_IGNORE);
    if (done) return;
    if (eager) {
      clock_gettime(CLOCK_MONOTONIC, &now);
      eager = (now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) < 2000000;
    }
    if (eager) sched_yield();
    else nap();
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

struct CommRing::Comm {
  MPI_Comm comm = MPI_COMM_WORLD;
  bool owned = false;  // a group's, freed with the ring
  // The tickets' counter: one word at rank 0, locked for passive-target
  // access by every rank for the ring's lifetime.
  MPI_Win tickets = MPI_WIN_NULL;
  std::uint64_t* counter = nullptr;
};

CommRing::CommRing(std::unique_ptr<Comm> comm) : comm_(std::move(comm)) {
  int r = 0, n = 1;
  MPI_Comm_rank(comm_->comm, &r);
  MPI_Comm_size(comm_->comm, &n);
  rank_ = static_cast<unsigned>(r);
  size_ = static_cast<unsigned>(n);
  const MPI_Aint bytes = rank_ == 0 ? sizeof(std::uint64_t) : 0;
  MPI_Win_allocate(bytes, sizeof(std::uint64_t), MPI_INFO_NULL, comm_->comm, &comm_->counter, &comm_->tickets);
  if (rank_ == 0) *comm_->counter = 0;
  MPI_Barrier(comm_->comm);  // the counter is 0 before anyone takes a ticket
  MPI_Win_lock_all(MPI_MODE_NOCHECK, comm_->tickets);
}

WorldRing::WorldRing() : CommRing(std::make_unique<Comm>()) {}

struct CommRing::Sending {
  std::string bytes;
  MPI_Request request = MPI_REQUEST_NULL;
};

CommRing::~CommRing() {
  for (auto& s : sending_) wait_all(&s->request, 1);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm_->tickets != MPI_WIN_NULL) {
    MPI_Win_unlock_all(comm_->tickets);
    MPI_Win_free(&comm_->tickets);
  }
  if (comm_->owned && !finalized) MPI_Comm_free(&comm_->comm);
}

std::uint64_t CommRing::ticket(std::uint64_t count) {
  std::uint64_t before = 0;
  MPI_Fetch_and_op(&count, &before, MPI_UINT64_T, 0, 0, MPI_SUM, comm_->tickets);
  MPI_Win_flush(0, comm_->tickets);
  return before;
}


std::unique_ptr<Ring> CommRing::split(unsigned group_size) {
  auto group = std::make_unique<Comm>();
  const int color = static_cast<int>(rank_ / std::max(1u, group_size));
  MPI_Comm_split(comm_->comm, color, static_cast<int>(rank_), &group->comm);
  group->owned = true;
  return std::unique_ptr<Ring>(new CommRing(std::move(group)));
}

// A message is one send of its bytes (tag 2); the receiver learns its length
// by probing. MPI keeps messages between two ranks with one tag in order.
void CommRing::post(const std::string& message) {
  // Forget the messages already sent.
  std::erase_if(sending_, [](const std::unique_ptr<Sending>& s) {
    int done = 0;
    MPI_Test(&s->request, &done, MPI_STATUS_IGNORE);
    return done != 0;
  });
  auto s = std::make_unique<Sending>();
  s->bytes = message;
  const int next = static_cast<int>((rank_ + 1) % size_);
  MPI_Isend(s->bytes.data(), length_of(s->bytes), MPI_CHAR, next, 2, comm_->comm, &s->request);
  sending_.push_back(std::move(s));
}

std::string CommRing::take() {
  const int prev = static_cast<int>((rank_ + size_ - 1) % size_);
  MPI_Status status;
  for (;;) {
    int arrived = 0;
    MPI_Iprobe(prev, 2, comm_->comm, &arrived, &status);
    if (arrived) break;
    nap();
  }
  int length = 0;
  MPI_Get_count(&status, MPI_CHAR, &length);
  std::string received(static_cast<std::size_t>(length), '\0');
  MPI_Recv(received.data(), length, MPI_CHAR, prev, 2, comm_->comm, MPI_STATUS_IGNORE);
  return received;
}

std::vector<std::string> CommRing::gather(const std::string& message) {
  const int mine = length_of(message);
  std::vector<int> lengths(rank_ == 0 ? size_ : 0), offsets(rank_ == 0 ? size_ : 0);
  MPI_Request request;
  MPI_Igather(&mine, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, comm_->comm, &request);
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
  MPI_Igatherv(message.data(), mine, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0, comm_->comm,
               &request);
  wait_all(&request, 1);
  std::vector<std::string> parts;
  if (rank_ == 0)
    for (unsigned r = 0; r < size_; ++r) parts.push_back(all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r])));
  return parts;
}

std::vector<std::string> CommRing::allgather(const std::string& message) {
  const int mine = length_of(message);
  std::vector<int> lengths(size_), offsets(size_);
  MPI_Request request;
  MPI_Iallgather(&mine, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm_->comm, &request);
  wait_all(&request, 1);
  long long total = 0;
  for (unsigned r = 0; r < size_; ++r) {
    offsets[r] = static_cast<int>(total);
    total += lengths[r];
  }
  if (total > INT_MAX) throw std::length_error("MPI allgather over 2 GiB");
  std::string all(static_cast<std::size_t>(total), '\0');
  MPI_Iallgatherv(message.data(), mine, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, comm_->comm,
                  &request);
  wait_all(&request, 1);
  std::vector<std::string> parts;
  for (unsigned r = 0; r < size_; ++r)
    parts.push_back(all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r])));
  return parts;
}

}  // namespace tailor::search::mpi
