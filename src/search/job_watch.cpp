// SPDX-License-Identifier: MIT
// The SIGTERM handler of an MPI search's ranks (job_watch.h). Everything it
// prints is formatted outside it into fixed buffers; the checkpoint's line
// is double-buffered so that the handler never reads one being written.
#include "search/job_watch.h"

#include <errno.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <sstream>

namespace tailor::search {

namespace {

constexpr std::size_t kMaxLocal = 1024;  // ranks on this machine the handler checks
constexpr std::size_t kLine = 2048;

struct Local {
  unsigned rank;
  pid_t pid;
};

unsigned g_rank = 0;
std::array<Local, kMaxLocal> g_local{};  // the other ranks on this machine
std::size_t g_locals = 0;
std::atomic<bool> g_armed{false};
char g_checkpoint[2][kLine] = {};  // "; the last checkpoint ..." (the handler reads g_which's)
std::atomic<int> g_which{0};
struct sigaction g_previous{};

void set_checkpoint_line(const std::string& text) {
  const int next = 1 - g_which.load();
  const std::size_t n = std::min(text.size(), kLine - 1);
  std::memcpy(g_checkpoint[next], text.data(), n);
  g_checkpoint[next][n] = '\0';
  g_which.store(next);
}

// Appends to a fixed buffer (signal-safe).
struct Out {
  char text[2 * kLine + 512];
  std::size_t n = 0;
  void put(const char* s) {
    while (*s && n + 1 < sizeof text) text[n++] = *s++;
  }
  void put(unsigned long v) {
    char digits[24];
    int k = 0;
    do digits[k++] = static_cast<char>('0' + v % 10);
    while ((v /= 10) != 0 && k < 24);
    while (k > 0 && n + 1 < sizeof text) text[n++] = digits[--k];
  }
};

bool gone(pid_t pid) { return kill(pid, 0) != 0 && errno == ESRCH; }

void on_sigterm(int sig) {
  const int saved = errno;
  if (g_armed.load()) {
    bool lowest_alive = true;
    for (std::size_t i = 0; i < g_locals; ++i)
      if (g_local[i].rank < g_rank && !gone(g_local[i].pid)) lowest_alive = false;
    if (lowest_alive) {
      Out o;
      o.put("tailor: rank ");
      o.put(static_cast<unsigned long>(g_rank));
      o.put(": the job is ending: ");
      unsigned dead = 0;
      for (std::size_t i = 0; i < g_locals; ++i) {
        if (!gone(g_local[i].pid)) continue;
        o.put(dead++ ? ", rank " : "rank ");
        o.put(static_cast<unsigned long>(g_local[i].rank));
        o.put(" (pid ");
        o.put(static_cast<unsigned long>(g_local[i].pid));
        o.put(")");
      }
      if (dead) o.put(" ended");
      else o.put("mpirun stopped it (a rank on another machine ended, or mpirun was interrupted)");
      o.put(g_checkpoint[g_which.load()]);
      o.put("\n");
      [[maybe_unused]] const ssize_t w = write(STDERR_FILENO, o.text, o.n);
    }
  }
  errno = saved;
  signal(sig, SIG_DFL);  // die of it, as without the handler
  raise(sig);
}

}  // namespace

void note_checkpoint_plan(const std::string& path, unsigned every) {
  if (path.empty())
    set_checkpoint_line("; no checkpoint was kept (--checkpoint FILE --checkpoint-every G keeps one to resume from)");
  else
    set_checkpoint_line("; no checkpoint was written yet (" + path + ", every " + std::to_string(every) +
                        " generations)");
}

void note_checkpoint(const std::string& path, unsigned generation) {
  set_checkpoint_line("; the search resumes from its last checkpoint, " + path + " (generation " +
                      std::to_string(generation) + "): the same command with --resume " + path +
                      ", on any number of ranks");
}

JobWatch::JobWatch(Ring& world) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  const std::string me = std::string(host) + " " + std::to_string(getpid());
  const std::vector<std::string> all = world.allgather(me);
  g_rank = world.rank();
  g_locals = 0;
  for (unsigned r = 0; r < all.size() && g_locals < kMaxLocal; ++r) {
    if (r == g_rank) continue;
    std::istringstream in(all[r]);
    std::string their_host;
    long pid = 0;
    if (in >> their_host >> pid && their_host == host && pid > 0) g_local[g_locals++] = {r, static_cast<pid_t>(pid)};
  }
  if (g_checkpoint[g_which.load()][0] == '\0') note_checkpoint_plan("", 0);
  struct sigaction sa{};
  sa.sa_handler = on_sigterm;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, &g_previous);
  g_armed.store(true);
}

JobWatch::~JobWatch() {
  g_armed.store(false);
  sigaction(SIGTERM, &g_previous, nullptr);
}

}  // namespace tailor::search
