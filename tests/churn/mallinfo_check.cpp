// SPDX-License-Identifier: MIT
// mallinfo2, mallinfo and malloc_stats answered by libtailor with glibc's
// meanings (docs/allocator.md, "mallinfo2 and malloc_stats"). Run linked
// with libtailor (alloc.mallinfo.linked) and as a plain program under
// LD_PRELOAD (alloc.mallinfo.preload); fails if glibc's versions answer
// (they would report glibc's own unused arena). Exit status 0 if every
// check holds; each failure is one line on stderr.
#include <dlfcn.h>
#include <malloc.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

int g_failures = 0;

void check(bool ok, const char* what, std::size_t a = 0, std::size_t b = 0) {
  if (ok) return;
  std::fprintf(stderr, "FAIL: %s (%zu, %zu)\n", what, a, b);
  ++g_failures;
}

std::vector<void*> fill(std::size_t bytes, std::size_t block) {
  std::vector<void*> v;
  v.reserve(bytes / block + 1);
  for (std::size_t done = 0; done < bytes; done += block) {
    v.push_back(std::malloc(block));
    std::memset(v.back(), 1, block);
  }
  return v;
}

void release(std::vector<void*>& v) {
  for (void* p : v) std::free(p);
  v.clear();
}

std::string slurp(const char* path) {
  std::string s;
  if (FILE* f = std::fopen(path, "r")) {
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
    std::fclose(f);
  }
  return s;
}

// malloc_stats with fd 1 and fd 2 sent to files: what each received.
void capture_malloc_stats(std::string& out, std::string& err) {
  char out_path[] = "/tmp/tailor_mallinfo_outXXXXXX";
  char err_path[] = "/tmp/tailor_mallinfo_errXXXXXX";
  const int fo = mkstemp(out_path), fe = mkstemp(err_path);
  std::fflush(stdout);
  std::fflush(stderr);
  const int saved_out = dup(1), saved_err = dup(2);
  dup2(fo, 1);
  dup2(fe, 2);
  malloc_stats();
  std::fflush(stdout);
  std::fflush(stderr);
  dup2(saved_out, 1);
  dup2(saved_err, 2);
  close(saved_out);
  close(saved_err);
  close(fo);
  close(fe);
  out = slurp(out_path);
  err = slurp(err_path);
  unlink(out_path);
  unlink(err_path);
}

}  // namespace

int main() {
  if (dlsym(RTLD_DEFAULT, "tailor_get_stats_sized") == nullptr) {
    std::fprintf(stderr, "FAIL: libtailor is not the process's malloc\n");
    return 1;
  }
  constexpr std::size_t kN = std::size_t{8} << 20;

  // uordblks grows by at least what was allocated, and drops when it is freed;
  // arena = uordblks + fordblks as in glibc.
  for (std::size_t block : {std::size_t{100}, std::size_t{1000}, std::size_t{20000}, std::size_t{300000}}) {
    const struct mallinfo2 a = mallinfo2();
    std::vector<void*> v = fill(kN, block);
    const struct mallinfo2 b = mallinfo2();
    check(b.uordblks >= a.uordblks + kN, "uordblks grows by the bytes allocated", a.uordblks, b.uordblks);
    check(b.arena == b.uordblks + b.fordblks, "arena = uordblks + fordblks", b.arena, b.uordblks + b.fordblks);
    check(b.arena >= b.uordblks, "arena holds the blocks in use", b.arena, b.uordblks);
    check(b.ordblks > 0 || b.fordblks == 0, "free chunks counted", b.ordblks, b.fordblks);
    release(v);
    const struct mallinfo2 c = mallinfo2();
    check(c.uordblks + kN <= b.uordblks, "uordblks drops by the bytes freed", b.uordblks, c.uordblks);
  }

  // Huge blocks (above LARGE_MAX, mapped on their own) are hblks / hblkhd.
  {
    const struct mallinfo2 a = mallinfo2();
    auto* volatile h = static_cast<char*>(std::malloc(std::size_t{64} << 20));
    h[0] = 1;
    const struct mallinfo2 b = mallinfo2();
    check(b.hblks == a.hblks + 1, "hblks counts a huge block", a.hblks, b.hblks);
    check(b.hblkhd >= a.hblkhd + (std::size_t{64} << 20), "hblkhd counts its bytes", a.hblkhd, b.hblkhd);
    check(b.uordblks < a.uordblks + (std::size_t{1} << 20), "a huge block is not in uordblks", a.uordblks, b.uordblks);
    std::free(h);
    const struct mallinfo2 c = mallinfo2();
    check(c.hblks == a.hblks && c.hblkhd == a.hblkhd, "hblks / hblkhd drop when it is freed", c.hblks, c.hblkhd);
  }

  // Another thread's blocks count (every heap is walked).
  {
    std::atomic<int> stage{0};
    const struct mallinfo2 a = mallinfo2();
    std::thread t([&] {
      std::vector<void*> v = fill(kN, 500);
      stage = 1;
      while (stage != 2) std::this_thread::yield();
      release(v);
    });
    while (stage != 1) std::this_thread::yield();
    const struct mallinfo2 b = mallinfo2();
    check(b.uordblks >= a.uordblks + kN, "another thread's blocks are in uordblks", a.uordblks, b.uordblks);
    stage = 2;
    t.join();
    const struct mallinfo2 c = mallinfo2();
    check(c.uordblks + kN <= b.uordblks, "and leave it when that thread frees them", b.uordblks, c.uordblks);
  }

  // keepcost: free memory still resident, which malloc_trim gives back.
  {
    std::vector<void*> v = fill(std::size_t{16} << 20, 3000);
    release(v);
    const struct mallinfo2 a = mallinfo2();
    check(a.keepcost > 0, "freed pages are releasable (keepcost)", a.keepcost, 0);
    malloc_trim(0);
    const struct mallinfo2 b = mallinfo2();
    check(b.keepcost < a.keepcost, "malloc_trim gives keepcost back", a.keepcost, b.keepcost);
  }

  // mallinfo: the same figures in ints.
  {
    const struct mallinfo2 a = mallinfo2();
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // glibc deprecates mallinfo; libtailor answers it too
    const struct mallinfo b = mallinfo();
#pragma GCC diagnostic pop
    check(static_cast<std::size_t>(b.uordblks) == a.uordblks && static_cast<std::size_t>(b.arena) == a.arena,
          "mallinfo agrees with mallinfo2", static_cast<std::size_t>(b.uordblks), a.uordblks);
  }

  // malloc_stats: glibc's lines, on stderr only.
  {
    std::string out, err;
    capture_malloc_stats(out, err);
    check(out.empty(), "malloc_stats writes nothing to stdout", out.size(), 0);
    for (const char* line : {"Arena 0:\n", "system bytes     = ", "in use bytes     = ", "Total (incl. mmap):\n",
                             "max mmap regions = ", "max mmap bytes   = "})
      check(err.find(line) != std::string::npos, line, err.size(), 0);
  }

  if (g_failures == 0) std::puts("mallinfo2, mallinfo, malloc_stats: ok");
  return g_failures == 0 ? 0 : 1;
}
