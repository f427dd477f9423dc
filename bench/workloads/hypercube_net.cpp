// hypercube_net: imitates "lindsay", the hypercube network communication
// simulator (C++) of the allocator benchmark suites.
//
// A 12-dimensional hypercube (4096 nodes) is one long-lived array of node
// records allocated once with new[].  Every time step, random nodes inject
// messages to random destinations (1 in 512 to a hot-spot node), and every
// node forwards the messages in its queue one hop along the e-cube route
// (lowest differing address bit first), one message per outgoing link per
// step; the others wait.  Injection alternates between quiet phases and
// bursts of 50 steps, so queues build up around the hot spot and drain.  A
// message is delivered (and deleted) at its destination, where its payload
// checksum and hop count are verified.
//
// Allocation behaviour: C++ new/delete.  Each message is two objects: a
// 40-byte header and a payload of 8..120 bytes (new uint8_t[]), so about 52
// bytes on average; they live only the few steps the message needs to cross
// the network (up to 12 hops plus queueing), with a few thousand in
// flight.  Latency and traffic statistics accumulate in the node array.
#include <bit>
#include <cstdint>
#include <cstdio>

#include "workload_common.h"

namespace {

constexpr const char* kProg = "wl_hypercube_net";
constexpr int kDim = 12;
constexpr std::uint32_t kNodes = 1u << kDim;
constexpr std::uint32_t kQuietInjectPerStep = kNodes / 16;
constexpr std::uint32_t kBurstInjectPerStep = kNodes / 4;
constexpr std::uint32_t kPhaseSteps = 50;
constexpr std::uint32_t kLinkCapacity = 1;  // messages per link per step
constexpr int kMaxLatency = 256;
constexpr wl::ProgramInfo kInfo{kProg,
                                "lindsay-like hypercube network simulator: many short-lived "
                                "heap-allocated messages routed hop by hop.",
                                "messages to send", 5000000, 1, 1000000000};

struct Message {
  Message* next = nullptr;
  std::uint32_t src = 0;
  std::uint32_t dst = 0;
  std::uint32_t birth = 0;
  std::uint16_t hops = 0;
  std::uint16_t len = 0;
  std::uint32_t checksum = 0;
  std::uint8_t* payload = nullptr;
};

struct Queue {
  Message* head = nullptr;
  Message* tail = nullptr;
  std::uint32_t length = 0;

  void push(Message* m) {
    m->next = nullptr;
    if (tail == nullptr) {
      head = m;
    } else {
      tail->next = m;
    }
    tail = m;
    ++length;
  }
  void append(Queue& other) {
    if (other.head == nullptr) return;
    if (tail == nullptr) {
      head = other.head;
    } else {
      tail->next = other.head;
    }
    tail = other.tail;
    length += other.length;
    other = Queue{};
  }
};

struct Node {
  Queue queue;     // messages waiting here
  Queue incoming;  // messages arriving during the current step
  std::uint64_t forwarded = 0;
  std::uint64_t delivered = 0;
  std::uint64_t injected = 0;
  std::uint32_t max_queue = 0;
  std::uint32_t link_step[kDim] = {};  // step+1 at which each link was last used
  std::uint32_t link_load[kDim] = {};  // messages sent on it during that step
  std::uint64_t link_traffic[kDim] = {};
};

std::uint32_t payload_checksum(const std::uint8_t* p, std::uint16_t len) {
  std::uint32_t h = 2166136261u;
  for (std::uint16_t i = 0; i < len; ++i) {
    h ^= p[i];
    h *= 16777619u;
  }
  return h;
}

}  // namespace

int main(int argc, char** argv) {
  auto [opt, rng] = wl::start(argc, argv, kInfo);

  auto* nodes = new Node[kNodes];
  std::uint64_t latency_hist[kMaxLatency + 1] = {};

  std::uint64_t sent = 0, delivered = 0, in_flight = 0, max_in_flight = 0;
  std::uint64_t total_hops = 0, total_latency = 0, total_bytes = 0, max_latency = 0;
  std::uint64_t messages_allocated = 0;
  std::uint32_t step = 0;
  const std::uint32_t hot_spot = static_cast<std::uint32_t>(rng.below(kNodes));

  while (sent < opt.size || in_flight > 0) {
    // 1. Injection.
    const std::uint32_t inject = (step / kPhaseSteps) % 2 == 0 ? kQuietInjectPerStep : kBurstInjectPerStep;
    for (std::uint32_t k = 0; k < inject && sent < opt.size; ++k) {
      const auto src = static_cast<std::uint32_t>(rng.below(kNodes));
      std::uint32_t dst = rng.below(512) == 0 ? hot_spot : static_cast<std::uint32_t>(rng.below(kNodes));
      if (dst == src) dst ^= 1u << rng.below(kDim);
      auto* m = new Message;
      m->src = src;
      m->dst = dst;
      m->birth = step;
      m->len = static_cast<std::uint16_t>(rng.range(8, 120));
      m->payload = new std::uint8_t[m->len];
      std::uint64_t fill = rng.next();
      for (std::uint16_t i = 0; i < m->len; ++i) {
        fill = fill * 6364136223846793005ULL + 1442695040888963407ULL;
        m->payload[i] = static_cast<std::uint8_t>(fill >> 56);
      }
      m->checksum = payload_checksum(m->payload, m->len);
      messages_allocated += 2;
      nodes[src].queue.push(m);
      nodes[src].injected++;
      ++sent;
      ++in_flight;
    }
    if (in_flight > max_in_flight) max_in_flight = in_flight;

    // 2. Routing: each node handles its queue once.
    for (std::uint32_t id = 0; id < kNodes; ++id) {
      Node& node = nodes[id];
      if (node.queue.length > node.max_queue) node.max_queue = node.queue.length;
      Queue keep;
      Message* m = node.queue.head;
      node.queue = Queue{};
      while (m != nullptr) {
        Message* next = m->next;
        if (m->dst == id) {
          // Delivery: verify and account.
          if (payload_checksum(m->payload, m->len) != m->checksum) {
            wl::fail(kProg, "message %u->%u: payload corrupted", m->src, m->dst);
          }
          const int expected_hops = std::popcount(m->src ^ m->dst);
          if (m->hops != expected_hops) {
            wl::fail(kProg, "message %u->%u took %u hops, e-cube route has %d", m->src, m->dst,
                     static_cast<unsigned>(m->hops), expected_hops);
          }
          const std::uint64_t latency = step - m->birth;
          total_latency += latency;
          latency_hist[latency < kMaxLatency ? latency : kMaxLatency]++;
          if (latency > max_latency) max_latency = latency;
          total_hops += m->hops;
          total_bytes += m->len;
          node.delivered++;
          ++delivered;
          --in_flight;
          delete[] m->payload;
          delete m;
        } else {
          const int dim = std::countr_zero(m->dst ^ id);
          if (node.link_step[dim] != step + 1) {
            node.link_step[dim] = step + 1;
            node.link_load[dim] = 0;
          }
          if (node.link_load[dim] < kLinkCapacity) {
            node.link_load[dim]++;
            node.link_traffic[dim]++;
            node.forwarded++;
            m->hops++;
            nodes[id ^ (1u << dim)].incoming.push(m);
          } else {
            keep.push(m);  // link busy this step: wait
          }
        }
        m = next;
      }
      node.queue = keep;
    }
    // 3. Arrivals join the queues (behind the waiting messages).
    for (std::uint32_t id = 0; id < kNodes; ++id) nodes[id].queue.append(nodes[id].incoming);
    ++step;
  }

  if (delivered != sent) {
    wl::fail(kProg, "%llu messages sent but %llu delivered", static_cast<unsigned long long>(sent),
             static_cast<unsigned long long>(delivered));
  }
  std::uint64_t forwards = 0, busiest_forwards = 0, max_queue = 0;
  std::uint32_t busiest = 0;
  std::uint64_t dim_traffic[kDim] = {};
  for (std::uint32_t id = 0; id < kNodes; ++id) {
    forwards += nodes[id].forwarded;
    if (nodes[id].forwarded > busiest_forwards) {
      busiest_forwards = nodes[id].forwarded;
      busiest = id;
    }
    if (nodes[id].max_queue > max_queue) max_queue = nodes[id].max_queue;
    for (int d = 0; d < kDim; ++d) dim_traffic[d] += nodes[id].link_traffic[d];
  }
  if (forwards != total_hops) wl::fail(kProg, "link traffic (%llu) != total hops (%llu)",
                                       static_cast<unsigned long long>(forwards),
                                       static_cast<unsigned long long>(total_hops));
  std::uint64_t median_latency = 0;
  {
    std::uint64_t acc = 0;
    for (int l = 0; l <= kMaxLatency; ++l) {
      acc += latency_hist[l];
      if (2 * acc >= delivered) {
        median_latency = static_cast<std::uint64_t>(l);
        break;
      }
    }
  }
  wl::Checksum check;
  check.add(total_hops);
  check.add(total_latency);
  check.add(total_bytes);
  check.add(max_latency);
  for (std::uint32_t id = 0; id < kNodes; ++id) {
    check.add(nodes[id].forwarded);
    check.add(nodes[id].max_queue);
  }
  for (std::uint64_t h : latency_hist) check.add(h);
  delete[] nodes;

  if (opt.verbose) {
    std::fprintf(stderr, "%s: %llu objects allocated (messages + payloads), max %llu messages in flight\n", kProg,
                 static_cast<unsigned long long>(messages_allocated),
                 static_cast<unsigned long long>(max_in_flight));
  }
  std::printf("hypercube: %d dimensions (%u nodes), hot spot node %u, %u steps\n", kDim, kNodes, hot_spot,
              step);
  std::printf("messages: %llu sent and delivered, %llu payload bytes, %llu hops (all e-cube routes checked)\n",
              static_cast<unsigned long long>(sent), static_cast<unsigned long long>(total_bytes),
              static_cast<unsigned long long>(total_hops));
  std::printf("latency: mean %.3f steps, median %llu, max %llu; max queue %llu\n",
              delivered > 0 ? static_cast<double>(total_latency) / static_cast<double>(delivered) : 0.0,
              static_cast<unsigned long long>(median_latency), static_cast<unsigned long long>(max_latency),
              static_cast<unsigned long long>(max_queue));
  std::printf("busiest node: %u with %llu forwards; traffic on dimension 0: %llu, dimension %d: %llu\n", busiest,
              static_cast<unsigned long long>(busiest_forwards), static_cast<unsigned long long>(dim_traffic[0]),
              kDim - 1, static_cast<unsigned long long>(dim_traffic[kDim - 1]));
  wl::print_result_hex(check.value());
  return 0;
}
