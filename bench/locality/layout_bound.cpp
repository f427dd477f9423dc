// SPDX-License-Identifier: MIT
// How fast can the tree kernel's find be made by node placement alone? This
// program answers with layouts no allocator can compute: it builds the
// kernel's set once to learn each node's final key rank and depth, then
// builds it again with every node put at a slot chosen from that knowledge,
// and times find and for_each on the result. The layouts:
//   insertion     slot = allocation order (a bump or page-at-a-time
//                 allocator: what mimalloc and libtailor give)
//   key           slot = final key rank (a perfect Path)
//   random        slot = a random permutation (a fragmented free list: glibc
//                 after the warm-up)
//   top-then-key  the nodes whose final depth is below --top-depth first, in
//                 key order, then the others in key order
// Slot s lies at s * --spread * --chunk bytes from a page-aligned base:
// --spread 3 models the kernel's warm-up, after which a third of the chunks
// of the size class are free and spread over all of it. The chunk defaults
// to what the locality heap (and mimalloc) give a node: 32 bytes. docs/locality.md
// ("How much placement can give find") uses the numbers.
//
//   layout_bound --layout key --spread 3 [--n 3000000] [--chunk 32]
//                [--top-depth 16] [--seed 1] [--huge]
// prints one JSON line: thread CPU seconds per phase.
#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <string>
#include <unordered_map>
#include <vector>

#include "kernel_support.h"
#include "tailor/set.h"

namespace {

struct Options {
  std::string layout = "insertion";
  std::size_t n = 3000000, spread = 3, chunk = 0, top_depth = 14;
  std::uint64_t seed = 1;
  bool huge = false;
};

[[noreturn]] void usage(const std::string& why) {
  tailor::bench::usage_error("layout_bound", why,
                             "usage: layout_bound --layout insertion|key|random|top-then-key [--n N] [--spread S]\n"
                             "                    [--chunk BYTES] [--top-depth D] [--seed S] [--huge]\n");
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto number = [&]() -> std::size_t {
      const char* text = tailor::bench::option_value(argc, argv, i, usage);
      char* end = nullptr;
      const unsigned long long v = std::strtoull(text, &end, 10);
      if (*end != '\0') usage("not a number after " + a + ": " + text);
      return static_cast<std::size_t>(v);
    };
    if (a == "--layout") {
      o.layout = tailor::bench::option_value(argc, argv, i, usage);
    } else if (a == "--n") {
      o.n = number();
    } else if (a == "--spread") {
      o.spread = number();
    } else if (a == "--chunk") {
      o.chunk = number();
    } else if (a == "--top-depth") {
      o.top_depth = number();
    } else if (a == "--seed") {
      o.seed = number();
    } else if (a == "--huge") {
      o.huge = true;
    } else {
      usage("unknown argument " + a);
    }
  }
  if (o.layout != "insertion" && o.layout != "key" && o.layout != "random" && o.layout != "top-then-key")
    usage("--layout must be insertion, key, random or top-then-key");
  if (o.n == 0 || o.spread == 0) usage("--n and --spread must be positive");
  return o;
}

/// The bytes the locality heap gives a node of `bytes` (its 16-byte granule).
constexpr std::size_t chunk_of(std::size_t bytes) { return (bytes + 15) / 16 * 16; }

using tailor::bench::Rng;
using tailor::bench::thread_cpu_seconds;

/// Hands out the slots of `plan` in allocation order: the i-th allocation
/// gets base + plan[i] * stride. Nothing is reused; deallocate does nothing.
struct Planner {
  char* base = nullptr;
  std::size_t stride = 0, next = 0;
  std::vector<std::size_t> plan;
  std::vector<void*> given;  // with an empty plan: record what std::malloc gave
};

template <class T>
struct planned_allocator {
  using value_type = T;
  Planner* p;
  explicit planned_allocator(Planner* pl) noexcept : p(pl) {}
  template <class U>
  planned_allocator(const planned_allocator<U>& o) noexcept : p(o.p) {}
  T* allocate(std::size_t n) {
    if (p->plan.empty()) {
      void* m = std::malloc(n * sizeof(T));
      if (m == nullptr) throw std::bad_alloc();
      p->given.push_back(m);
      return static_cast<T*>(m);
    }
    if (n * sizeof(T) > p->stride || p->next >= p->plan.size()) std::abort();
    return reinterpret_cast<T*>(p->base + p->plan[p->next++] * p->stride);
  }
  void deallocate(T* m, std::size_t) noexcept {
    if (p->plan.empty()) std::free(m);
  }
  template <class U>
  bool operator==(const planned_allocator<U>& o) const noexcept {
    return p == o.p;
  }
};

using Set = tailor::set<int, std::less<int>, planned_allocator<int>>;

[[gnu::noinline]] void phase_insert(Set& s, const std::vector<int>& keys) {
  for (int k : keys) s.insert(k);
}
[[gnu::noinline]] std::size_t phase_find(const Set& s, const std::vector<int>& probes) {
  std::size_t found = 0;
  for (int p : probes) found += s.find(p) != s.end();
  return found;
}
[[gnu::noinline]] long long phase_for_each(const Set& s) {
  long long sum = 0;
  for (int x : s) sum += x;
  return sum;
}

using node = tailor::locality::detail::tree_node<int>;

/// The node that holds `value`.
const node* node_of(const int& value) {
  static const std::ptrdiff_t offset = [] {
    node n;
    return reinterpret_cast<const char*>(&n.value) - reinterpret_cast<const char*>(&n);
  }();
  return reinterpret_cast<const node*>(reinterpret_cast<const char*>(&value) - offset);
}

/// The depth of the node holding `value` (the root has depth 0).
std::size_t depth_of(const int& value) {
  const tailor::locality::rb_node* n = node_of(value);
  std::size_t d = 0;
  while (n->parent->parent != n) {  // the root's parent is the header, whose parent is the root
    n = n->parent;
    ++d;
  }
  return d;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  std::vector<int> keys, probes;  // the tree kernel's
  tailor::bench::tree_keys(o.seed, o.n, keys, probes);

  // Pass 1: the finished tree gives each allocation its key rank and depth.
  Planner pl;
  std::vector<std::size_t> rank, depth;
  {
    Set s{planned_allocator<int>(&pl)};
    phase_insert(s, keys);
    std::unordered_map<const void*, std::size_t> index;
    index.reserve(pl.given.size() * 2);
    for (std::size_t i = 0; i < pl.given.size(); ++i) index[pl.given[i]] = i;
    rank.resize(pl.given.size());
    depth.resize(pl.given.size());
    std::size_t r = 0;
    for (const int& v : s) {
      const std::size_t i = index.at(node_of(v));  // the allocation that made this node
      rank[i] = r++;
      depth[i] = depth_of(v);
    }
    pl.given.clear();
  }
  const std::size_t nodes = rank.size();

  std::vector<std::size_t> slot(nodes);
  if (o.layout == "insertion") {
    std::iota(slot.begin(), slot.end(), 0);
  } else if (o.layout == "key") {
    slot = rank;
  } else if (o.layout == "random") {
    std::iota(slot.begin(), slot.end(), 0);
    Rng shuffle{o.seed + 2};
    for (std::size_t i = nodes; i > 1; --i) std::swap(slot[i - 1], slot[shuffle.below(i)]);
  } else {  // top-then-key
    std::vector<std::size_t> order(nodes);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      const bool ta = depth[a] < o.top_depth, tb = depth[b] < o.top_depth;
      return ta != tb ? ta : rank[a] < rank[b];
    });
    for (std::size_t s = 0; s < nodes; ++s) slot[order[s]] = s;
  }

  // Pass 2: the same insertions, each node at its slot.
  const std::size_t chunk = o.chunk != 0 ? o.chunk : chunk_of(Set::node_bytes);
  if (chunk < Set::node_bytes) usage("--chunk is smaller than a node");
  pl.stride = chunk;
  pl.plan.resize(nodes);
  for (std::size_t i = 0; i < nodes; ++i) pl.plan[i] = slot[i] * o.spread;
  const std::size_t bytes = (nodes * o.spread + 1) * chunk;
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mem == MAP_FAILED) {
    std::perror("layout_bound: mmap");
    return 1;
  }
  if (o.huge) madvise(mem, bytes, MADV_HUGEPAGE);
  pl.base = static_cast<char*>(mem);

  Set s{planned_allocator<int>(&pl)};
  double t = thread_cpu_seconds();
  phase_insert(s, keys);
  const double insert = thread_cpu_seconds() - t;
  t = thread_cpu_seconds();
  const std::size_t found = phase_find(s, probes);
  const double find = thread_cpu_seconds() - t;
  t = thread_cpu_seconds();
  const long long sum = phase_for_each(s);
  const double for_each = thread_cpu_seconds() - t;
  if (found != probes.size()) {
    std::fprintf(stderr, "layout_bound: check failed: every probe found\n");
    return 1;
  }
  std::printf(
      "{\"layout\": \"%s\", \"n\": %zu, \"spread\": %zu, \"chunk\": %zu, \"top_depth\": %zu, \"huge\": %s, "
      "\"check\": %lld, \"cpu\": {\"insert\": %f, \"find\": %f, \"for_each\": %f}}\n",
      o.layout.c_str(), o.n, o.spread, chunk, o.top_depth, o.huge ? "true" : "false", sum ^ static_cast<long long>(nodes),
      insert, find, for_each);
  s.clear();  // deallocate does nothing: the mapping goes with the process
  return 0;
}
