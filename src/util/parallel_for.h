// SPDX-License-Identifier: MIT
// Parallel loops over independent jobs: fn(i) for every i in [0, n), on a
// few threads that each take the next index until none is left (so a long
// job does not hold up the others, as a fixed split would).
//
// Every fan-out of tailor uses this one: the simulations of `tailor
// simulate` and `tailor report`, the search's evaluator runs, its
// comparison with the built-ins, and the islands' threads. The exception a
// job lets out is kept (the lowest index's, if several) and rethrown by
// join() once every thread has stopped; the other jobs still run.
//
// ParallelFor starts its threads and returns, so that the caller can work
// meanwhile (load the trace the jobs read, drive the islands' rounds);
// parallel_for is the same followed by join(). Header-only, std only.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace tailor::util {

class ParallelFor {
 public:
  // fn(i) for i in [0, n) on min(threads, n) threads (at least one when
  // n > 0); threads == 0 means one thread per job.
  ParallelFor(std::size_t n, unsigned threads, std::function<void(std::size_t)> fn)
      : n_(n), fn_(std::move(fn)) {
    const std::size_t count = threads == 0 ? n : std::min<std::size_t>(threads, n);
    threads_.reserve(count);
    for (std::size_t t = 0; t < count; ++t) threads_.emplace_back([this] { work(); });
  }
  ParallelFor(const ParallelFor&) = delete;
  ParallelFor& operator=(const ParallelFor&) = delete;
  // Waits for the jobs; an exception left unclaimed is dropped (call join()).
  ~ParallelFor() { wait(); }

  // Waits for every job, then rethrows the first failed job's exception.
  void join() {
    wait();
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
  }

 private:
  void work() {
    for (std::size_t i; (i = next_.fetch_add(1, std::memory_order_relaxed)) < n_;) {
      try {
        fn_(i);
      } catch (...) {
        std::lock_guard lock(mu_);
        if (!error_ || i < error_index_) error_ = std::current_exception(), error_index_ = i;
      }
    }
  }
  void wait() {
    for (std::thread& t : threads_)
      if (t.joinable()) t.join();
  }

  const std::size_t n_;
  const std::function<void(std::size_t)> fn_;
  std::atomic<std::size_t> next_{0};
  std::mutex mu_;
  std::exception_ptr error_;
  std::size_t error_index_ = 0;
  std::vector<std::thread> threads_;  // last: started once the members above exist
};

// fn(i) for every i in [0, n) on up to `threads` threads; rethrows the first
// failed job's exception after all have run. One thread's worth of jobs
// runs on the caller's thread, with no thread started.
inline void parallel_for(std::size_t n, unsigned threads, std::function<void(std::size_t)> fn) {
  if (n <= 1 || threads == 1) {
    std::exception_ptr error;
    for (std::size_t i = 0; i < n; ++i) try {
        fn(i);
      } catch (...) {
        if (!error) error = std::current_exception();
      }
    if (error) std::rethrow_exception(error);
    return;
  }
  ParallelFor(n, threads, std::move(fn)).join();
}

}  // namespace tailor::util
