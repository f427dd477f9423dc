// SPDX-License-Identifier: MIT
// Allocates a known number of blocks while a 200 us interval timer
// interrupts it with SIGALRM (handler installed without SA_RESTART), and a
// second thread sends it SIGUSR1 in a loop; for the recording test of
// programs that take signals in the middle of their allocation calls. Prints
// "done" and exits 0; the handlers only count.
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace {

constexpr int kBlocks = 300000;
constexpr std::size_t kSize = 3001;  // distinctive: the test counts blocks of this size

volatile sig_atomic_t alarms = 0;
volatile sig_atomic_t usr1 = 0;
std::atomic<bool> stop{false};

__attribute__((noinline)) void* keep(void* p) {
  asm volatile("" : : "r"(p) : "memory");
  return p;
}

void* pester(void* main_thread) {
  auto target = *static_cast<pthread_t*>(main_thread);
  while (!stop.load()) pthread_kill(target, SIGUSR1);
  return nullptr;
}

}  // namespace

int main() {
  struct sigaction sa {};
  sa.sa_handler = [](int) { alarms = alarms + 1; };
  sigaction(SIGALRM, &sa, nullptr);
  sa.sa_handler = [](int) { usr1 = usr1 + 1; };
  sigaction(SIGUSR1, &sa, nullptr);
  struct itimerval every {{0, 200}, {0, 200}};
  setitimer(ITIMER_REAL, &every, nullptr);

  pthread_t self = pthread_self(), other;
  pthread_create(&other, nullptr, pester, &self);
  for (int i = 0; i < kBlocks; ++i) std::free(keep(std::malloc(kSize)));
  stop.store(true);
  pthread_join(other, nullptr);
  struct itimerval off {};
  setitimer(ITIMER_REAL, &off, nullptr);
  if (alarms == 0 || usr1 == 0) {
    std::fprintf(stderr, "signal_storm: no signal arrived (alarms %d, usr1 %d)\n", int(alarms), int(usr1));
    return 1;
  }
  std::puts("done");
  return 0;
}
