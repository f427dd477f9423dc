// SPDX-License-Identifier: MIT
// malloc_trim with glibc's meaning, answered by libtailor (linked first, so
// it is the process's malloc): free memory goes back to the OS now, the
// calling thread's and that of threads that have exited; 1 if some did.
#include <gtest/gtest.h>
#include <malloc.h>

#include <cstring>
#include <thread>
#include <vector>

#include "common/process_memory.h"

namespace {

using tailor::test::rss_kb;

std::vector<void*> fill(std::size_t bytes, std::size_t block) {
  std::vector<void*> v;
  v.reserve(bytes / block);
  for (std::size_t done = 0; done < bytes; done += block) {
    v.push_back(std::malloc(block));
    std::memset(v.back(), 1, block);
  }
  return v;
}

TEST(Trim, GivesBackTheCallersFreeMemoryAtOnce) {
  std::vector<void*> v = fill(std::size_t{24} << 20, 3000);
  for (void* p : v) std::free(p);
  const long before = rss_kb();
  EXPECT_EQ(malloc_trim(0), 1);  // within the purge delay: nothing was given back yet
  const long after = rss_kb();
  EXPECT_LT(after, before - 16 * 1024) << before << " KiB -> " << after << " KiB";
  malloc_trim(0);                // what reading RSS (stdio) left
  EXPECT_EQ(malloc_trim(0), 0);  // nothing left to give
}

TEST(Trim, GivesBackWhatExitedThreadsKept) {
  malloc_trim(0);
  // An exiting thread keeps up to 8 MiB of free spans resident for the
  // thread that will adopt its heap; none comes.
  std::thread t([] {
    std::vector<void*> v = fill(std::size_t{6} << 20, 3000);
    for (void* p : v) std::free(p);
  });
  t.join();
  const long before = rss_kb();
  EXPECT_EQ(malloc_trim(0), 1);
  const long after = rss_kb();
  EXPECT_LT(after, before - 4 * 1024) << before << " KiB -> " << after << " KiB";
}

}  // namespace
