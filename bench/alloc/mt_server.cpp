// SPDX-License-Identifier: MIT
// A server-like simulation: every thread is a worker with a cache of live
// "sessions" (64 B-4 KiB records) and an inbox. Per request it allocates a
// request and a response buffer, replaces a random session now and then,
// and hands some of its objects (a session or the response) to another
// worker, which frees them when it next drains its inbox. So threads free
// each other's objects all the time, in batches, as real servers do. An
// inbox holds at most kInboxMax objects (a full one makes the sender free its
// object itself), so the live memory does not depend on the scheduler.
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "mt_common.h"

namespace {

constexpr int kSessions = 1000;
constexpr std::size_t kInboxMax = 4096;

// Each worker's inbox and counters on lines of their own: the program's
// own false sharing is not what this measures (with Worker packed two to a
// line, every request wrote a line the other thread wrote too: a cost of
// the program's, the same under every allocator, that made their times
// look closer than they are).
struct alignas(64) Inbox {
  std::mutex m;
  std::vector<void*> items;
};

struct alignas(64) Worker {
  std::uint64_t id;
  std::uint64_t checksum = 0;
};

void* make(wl::Rng& rng, std::size_t lo, std::size_t span) {
  std::size_t n = lo + rng.next() % span;
  auto* p = static_cast<std::uint32_t*>(std::malloc(n));
  if (p == nullptr) ab::oom("mt_server");
  p[0] = static_cast<std::uint32_t>(n);
  std::memset(p + 1, 0x11, n > 64 ? 60 : n - 4);
  return p;
}

void send(Inbox& to, void* p, Worker& w) {
  {
    std::lock_guard<std::mutex> g(to.m);
    if (to.items.size() < kInboxMax) {
      to.items.push_back(p);
      return;
    }
  }
  w.checksum += *static_cast<std::uint32_t*>(p) & 1;
  std::free(p);
}

void run(Worker& w, std::vector<Inbox>& inboxes, const ab::Args& a, ab::StartLine& start) {
  wl::Rng rng(a.seed * 31 + w.id);
  std::vector<void*> sessions(kSessions);
  for (auto& s : sessions) s = make(rng, 64, 4032);
  std::vector<void*> drained;
  drained.reserve(4096);
  start.arrive_and_wait();
  const std::uint64_t n = a.threads;
  for (std::uint64_t req = 0; req < a.size; ++req) {
    void* request = make(rng, 32, 480);
    void* response = make(rng, 128, 1920);
    w.checksum += *static_cast<std::uint32_t*>(request) + *static_cast<std::uint32_t*>(response);
    std::free(request);
    std::uint64_t r = rng.next();
    std::uint64_t peer = (w.id + 1 + r % (n > 1 ? n - 1 : 1)) % n;
    if (r % 8 == 0) {  // a session migrates to another worker
      std::size_t k = (r >> 16) % kSessions;
      void* moved = sessions[k];
      sessions[k] = make(rng, 64, 4032);
      send(inboxes[peer], moved, w);
    }
    send(inboxes[peer], response, w);  // the response goes to the peer
    if (req % 64 == 63) {
      {
        std::lock_guard<std::mutex> g(inboxes[w.id].m);
        drained.swap(inboxes[w.id].items);
      }
      for (void* p : drained) {
        w.checksum += *static_cast<std::uint32_t*>(p) & 1;
        std::free(p);
      }
      drained.clear();
    }
  }
  for (void* s : sessions) std::free(s);
}

}  // namespace

int main(int argc, char** argv) {
  ab::Args a = ab::parse(argc, argv, 5000000, 2, "server simulation; --size: requests per worker");
  std::vector<Inbox> inboxes(a.threads);
  std::vector<Worker> workers(a.threads);
  ab::StartLine start(a.threads);
  std::vector<std::thread> ts;
  for (std::uint64_t t = 0; t < a.threads; ++t) {
    workers[t].id = t;
    ts.emplace_back([&, t] { run(workers[t], inboxes, a, start); });
  }
  for (auto& t : ts) t.join();
  std::uint64_t total = 0;
  for (auto& in : inboxes)
    for (void* p : in.items) {
      total += *static_cast<std::uint32_t*>(p) & 1;
      std::free(p);
    }
  for (auto& w : workers) total += w.checksum;
  std::printf("workers: %llu\nresult: %llu\n", static_cast<unsigned long long>(a.threads), static_cast<unsigned long long>(total));
}
