// SPDX-License-Identifier: MIT
// Cross-thread frees, for tests/record/record_test.cpp. The main thread
// allocates and frees one block of kMainSize bytes, then starts kThreads
// workers. Worker i allocates kBlocks blocks of kBlockSize bytes with malloc
// and hands each to worker (i + 1) % kThreads through a mailbox; every worker
// frees exactly the kBlocks blocks it receives. So the trace holds exactly
// kThreads * kBlocks mallocs of kBlockSize, each freed once by another thread
// than the one that allocated it. The mailboxes are fixed arrays (no hidden
// allocation). Prints nothing; exits 0, or 1 if something is inconsistent.
#include <pthread.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

constexpr int kThreads = 4;
constexpr int kBlocks = 1000;
constexpr std::size_t kBlockSize = 4099;
constexpr std::size_t kMainSize = 4111;

__attribute__((noinline)) void* keep(void* p) {
  asm volatile("" : : "r"(p) : "memory");
  return p;
}

struct Mailbox {
  pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  pthread_cond_t ready = PTHREAD_COND_INITIALIZER;
  void* slots[kBlocks];  // never more than kBlocks in flight to one worker
  int head = 0;
  int tail = 0;
};

Mailbox mailboxes[kThreads];
pthread_barrier_t start;
int failures = 0;  // guarded by mailboxes[0].mu

void post(Mailbox& m, void* p) {
  pthread_mutex_lock(&m.mu);
  m.slots[m.tail++ % kBlocks] = p;
  pthread_cond_signal(&m.ready);
  pthread_mutex_unlock(&m.mu);
}

// Takes one block; waits for it if `wait`, else returns null when none is there.
void* take(Mailbox& m, bool wait) {
  pthread_mutex_lock(&m.mu);
  while (wait && m.head == m.tail) pthread_cond_wait(&m.ready, &m.mu);
  void* p = m.head == m.tail ? nullptr : m.slots[m.head++ % kBlocks];
  pthread_mutex_unlock(&m.mu);
  return p;
}

void* worker(void* arg) {
  int self = static_cast<int>(reinterpret_cast<std::intptr_t>(arg));
  Mailbox& mine = mailboxes[self];
  Mailbox& next = mailboxes[(self + 1) % kThreads];
  pthread_barrier_wait(&start);
  int freed = 0;
  for (int i = 0; i < kBlocks; ++i) {
    void* p = keep(std::malloc(kBlockSize));
    if (!p) {
      pthread_mutex_lock(&mailboxes[0].mu);
      ++failures;
      pthread_mutex_unlock(&mailboxes[0].mu);
      std::abort();
    }
    post(next, p);
    while (void* q = take(mine, false)) {
      std::free(q);
      ++freed;
    }
  }
  while (freed < kBlocks) {
    std::free(take(mine, true));
    ++freed;
  }
  return nullptr;
}

}  // namespace

int main() {
  std::free(keep(std::malloc(kMainSize)));
  pthread_barrier_init(&start, nullptr, kThreads);
  pthread_t threads[kThreads];
  for (int i = 0; i < kThreads; ++i) {
    if (pthread_create(&threads[i], nullptr, worker, reinterpret_cast<void*>(static_cast<std::intptr_t>(i))) != 0) {
      std::fprintf(stderr, "threads_cross_free: pthread_create failed\n");
      return 1;
    }
  }
  for (auto& t : threads) pthread_join(t, nullptr);
  return failures == 0 ? 0 : 1;
}
