// SPDX-License-Identifier: MIT
// util::parallel_for and ParallelFor: every index once, the lowest failed
// index's exception after all jobs ran, the caller free while they run.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "util/parallel_for.h"

namespace {

using tailor::util::parallel_for;
using tailor::util::ParallelFor;

TEST(ParallelFor, EveryIndexRunsOnceWhateverTheThreads) {
  for (unsigned threads : {0u, 1u, 2u, 3u, 16u}) {
    std::vector<std::atomic<int>> runs(100);
    parallel_for(runs.size(), threads, [&](std::size_t i) { runs[i].fetch_add(1); });
    for (std::size_t i = 0; i < runs.size(); ++i) EXPECT_EQ(runs[i].load(), 1) << "index " << i << ", threads " << threads;
  }
  parallel_for(0, 4, [](std::size_t) { FAIL() << "no job to run"; });
}

TEST(ParallelFor, TheLowestFailedIndexIsRethrownAfterTheOthersRan) {
  for (unsigned threads : {1u, 4u}) {
    std::atomic<int> ran{0};
    try {
      parallel_for(50, threads, [&](std::size_t i) {
        ran.fetch_add(1);
        if (i == 7 || i == 30) throw std::runtime_error("job " + std::to_string(i));
      });
      ADD_FAILURE() << "nothing thrown";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "job 7");
    }
    EXPECT_EQ(ran.load(), 50) << threads;
  }
}

TEST(ParallelFor, UsesSeveralThreadsAndLeavesTheCallerFree) {
  // Each job waits until both have started and the caller has gone on: one
  // thread taking both jobs would wait for ever on the first (the test's
  // timeout), and the constructor must return while both jobs wait.
  std::atomic<int> started{0};
  std::atomic<bool> go{false};
  std::set<std::thread::id> ids;
  std::mutex mu;
  ParallelFor pool(2, 2, [&](std::size_t) {
    started.fetch_add(1);
    while (started.load() < 2 || !go.load()) std::this_thread::yield();
    std::lock_guard lock(mu);
    ids.insert(std::this_thread::get_id());
  });
  go = true;
  pool.join();
  EXPECT_EQ(ids.size(), 2u);
  EXPECT_EQ(ids.count(std::this_thread::get_id()), 0u);
}

}  // namespace
