// SPDX-License-Identifier: MIT
// os::backed_map (page_map.cpp): which pages of a range have memory behind
// them. calloc skips the pages it calls holes, so a wrong "hole" is a calloc
// that returns old data: the map must follow the pages as they are touched
// and purged, be the calling process's own after a fork that runs no fork
// handlers, and never be read from a descriptor the program closed and
// reused for a file of its own.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "alloc/os.h"

namespace {

namespace os = tailor::alloc::os;

constexpr std::size_t kPages = 16;

// kPages fresh pages of their own (no neighbour of the heap's).
unsigned char* fresh_range() {
  void* p = mmap(nullptr, kPages * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  EXPECT_NE(p, MAP_FAILED);
  return static_cast<unsigned char*>(p);
}

TEST(PageMap, TellsTouchedPagesFromHoles) {
  unsigned char* r = fresh_range();
  unsigned char vec[kPages];
  ASSERT_TRUE(os::backed_map(r, kPages * 4096, vec)) << "no /proc/self/pagemap here";
  for (std::size_t i = 0; i < kPages; ++i) EXPECT_EQ(vec[i], 0) << "page " << i << " of a fresh mapping";
  r[3 * 4096] = 1;
  r[7 * 4096 + 100] = 1;
  r[15 * 4096 + 4095] = 1;
  ASSERT_TRUE(os::backed_map(r, kPages * 4096, vec));
  for (std::size_t i = 0; i < kPages; ++i) EXPECT_EQ(vec[i], i == 3 || i == 7 || i == 15) << "page " << i;
  ASSERT_TRUE(os::purge(r, kPages * 4096));
  ASSERT_TRUE(os::backed_map(r, kPages * 4096, vec));
  for (std::size_t i = 0; i < kPages; ++i) EXPECT_EQ(vec[i], 0) << "page " << i << " after the purge";
  munmap(r, kPages * 4096);
}

// A child made by _Fork (no fork handlers run) writes a page that is a hole
// in its parent: the map it reads is its own, not the parent's through the
// descriptor it inherited.
TEST(PageMap, AChildOfForkReadsItsOwnPageTables) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "ThreadSanitizer does not follow _Fork";
#endif
  unsigned char* r = fresh_range();
  unsigned char vec[kPages];
  ASSERT_TRUE(os::backed_map(r, kPages * 4096, vec));  // the parent's descriptor is open
  const pid_t child = _Fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    r[5 * 4096] = 1;
    const bool ok = os::backed_map(r, kPages * 4096, vec);
    _exit(!ok ? 2 : vec[5] != 1 ? 3 : 0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: the child could not read a map; 3: it read its parent's";
  ASSERT_TRUE(os::backed_map(r, kPages * 4096, vec));
  EXPECT_EQ(vec[5], 0) << "the child's write shows in the parent";
  munmap(r, kPages * 4096);
}

// The program closes every descriptor it did not open (as daemons do) and
// its next open gets the number the map was read from: a file of zeros,
// which read as entries would call every page a hole. The map then says it
// cannot tell, or tells right; the call after it opens again and tells right.
TEST(PageMap, ADescriptorTheProgramClosedAndReusedIsNeverRead) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // in a child: closing descriptors would break the test runner
    unsigned char* r = fresh_range();
    unsigned char vec[kPages];
    close_range(3, ~0u, 0);
    if (!os::backed_map(r, kPages * 4096, vec)) _exit(2);  // opens: the lowest free number, 3
    close(3);
    if (open("/dev/zero", O_RDONLY) != 3) _exit(4);
    r[0] = 1;
    if (os::backed_map(r, kPages * 4096, vec) && vec[0] != 1) _exit(3);
    if (!os::backed_map(r, kPages * 4096, vec) || vec[0] != 1) _exit(5);
    _exit(fcntl(3, F_GETFD) == -1 ? 6 : 0);  // the program's file stays open
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: no map; 3: read /dev/zero as the map; 4: the test's setup failed; "
                                       "5: did not open again; 6: closed the program's file";
}

}  // namespace
