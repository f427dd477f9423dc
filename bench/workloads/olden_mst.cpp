// olden_mst: imitates Olden "mst".
//
// Minimum spanning tree of a complete graph by Prim's algorithm, the graph
// stored as in the original: a linked list of vertices, each with a hash
// table (an array of buckets) of its edges, one malloc'd entry per edge
// (key = the other vertex, weight). Each step takes the vertex last added
// to the tree, walks the list of vertices still outside it, looks the edge
// up in each one's hash table to lower its distance, and picks the nearest
// vertex. Edge weights are a hash of the vertex pair.
//
// Self-check: the tree weight equals that of Prim's algorithm run on the
// weight function directly (an O(n^2) array version; the weight of a
// minimum spanning tree is unique).
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "workload_common.h"

namespace {

constexpr const char* kProg = "wl_olden_mst";
constexpr int kRounds = 3;
constexpr std::uint32_t kInf = 0xffffffffu;
constexpr wl::ProgramInfo kInfo{kProg, "Olden mst: Prim's minimum spanning tree over per-vertex edge hash tables.",
                                "vertices", 1400, 2, 20000};

struct Vertex;

struct HashEntry {
  const Vertex* key;
  std::uint32_t weight;
  HashEntry* next;
};

struct Vertex {
  Vertex* next;            // the list of vertices not yet in the tree
  std::uint32_t mindist;
  int id;
  int buckets;
  HashEntry** table;
};

void* xmalloc(std::size_t n) { return wl::checked_malloc(kProg, n); }

std::uint32_t weight_of(std::uint64_t seed, int a, int b) {
  if (a > b) { int t = a; a = b; b = t; }
  return static_cast<std::uint32_t>(wl::mix64(seed ^ (static_cast<std::uint64_t>(a) << 32 | static_cast<std::uint64_t>(b))) % 1000000) + 1;
}

std::uint32_t lookup(const Vertex* v, const Vertex* key) {
  const auto h = static_cast<std::uint32_t>(key->id) % static_cast<std::uint32_t>(v->buckets);
  for (const HashEntry* e = v->table[h]; e != nullptr; e = e->next)
    if (e->key == key) return e->weight;
  return kInf;
}

std::uint64_t prim_lists(Vertex* head) {
  // head is in the tree; the others are on its list.
  Vertex* inserted = head;
  Vertex* rest = head->next;
  for (Vertex* v = rest; v != nullptr; v = v->next) v->mindist = kInf;
  std::uint64_t total = 0;
  while (rest != nullptr) {
    Vertex* best = nullptr;
    Vertex* best_prev = nullptr;
    Vertex* prev = nullptr;
    for (Vertex* v = rest; v != nullptr; prev = v, v = v->next) {
      const std::uint32_t d = lookup(v, inserted);
      if (d < v->mindist) v->mindist = d;
      if (best == nullptr || v->mindist < best->mindist) {
        best = v;
        best_prev = prev;
      }
    }
    total += best->mindist;
    if (best_prev == nullptr) rest = best->next;
    else best_prev->next = best->next;
    inserted = best;
  }
  return total;
}

std::uint64_t prim_reference(std::uint64_t seed, int n) {
  auto* dist = static_cast<std::uint32_t*>(xmalloc(sizeof(std::uint32_t) * n));
  auto* in = static_cast<unsigned char*>(xmalloc(static_cast<std::size_t>(n)));
  for (int i = 0; i < n; ++i) dist[i] = kInf, in[i] = 0;
  in[0] = 1;
  int last = 0;
  std::uint64_t total = 0;
  for (int step = 1; step < n; ++step) {
    int best = -1;
    for (int i = 0; i < n; ++i) {
      if (in[i]) continue;
      const std::uint32_t w = weight_of(seed, last, i);
      if (w < dist[i]) dist[i] = w;
      if (best < 0 || dist[i] < dist[best]) best = i;
    }
    in[best] = 1;
    total += dist[best];
    last = best;
  }
  std::free(dist);
  std::free(in);
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  auto [opt, rng] = wl::start(argc, argv, kInfo);
  const int n = static_cast<int>(opt.size);
  std::uint64_t tree = 0;
  std::uint64_t entries = 0;
  for (int round = 0; round < kRounds; ++round) {
    const std::uint64_t wseed = rng.next();
    // The vertices, then each one's table filled edge by edge.
    Vertex* head = nullptr;
    Vertex** vs = static_cast<Vertex**>(xmalloc(sizeof(Vertex*) * n));
    for (int i = n - 1; i >= 0; --i) {
      auto* v = static_cast<Vertex*>(xmalloc(sizeof(Vertex)));
      v->id = i;
      v->buckets = n / 4 + 1;
      v->table = static_cast<HashEntry**>(xmalloc(sizeof(HashEntry*) * v->buckets));
      for (int b = 0; b < v->buckets; ++b) v->table[b] = nullptr;
      v->next = head;
      head = v;
      vs[i] = v;
    }
    for (int i = 0; i < n; ++i) {
      Vertex* v = vs[i];
      for (int j = 0; j < n; ++j) {
        if (j == i) continue;
        auto* e = static_cast<HashEntry*>(xmalloc(sizeof(HashEntry)));
        e->key = vs[j];
        e->weight = weight_of(wseed, i, j);
        const auto h = static_cast<std::uint32_t>(j) % static_cast<std::uint32_t>(v->buckets);
        e->next = v->table[h];
        v->table[h] = e;
        ++entries;
      }
    }
    tree = prim_lists(head);
    const std::uint64_t expected = prim_reference(wseed, n);
    if (tree != expected)
      wl::fail(kProg, "round %d: tree weight %llu, reference %llu", round, static_cast<unsigned long long>(tree),
               static_cast<unsigned long long>(expected));
    for (int i = 0; i < n; ++i) {
      Vertex* v = vs[i];
      for (int b = 0; b < v->buckets; ++b) {
        for (HashEntry* e = v->table[b]; e != nullptr;) {
          HashEntry* next = e->next;
          std::free(e);
          e = next;
        }
      }
      std::free(v->table);
      std::free(v);
    }
    std::free(vs);
  }
  if (opt.verbose) std::fprintf(stderr, "%s: %llu edge entries\n", kProg, static_cast<unsigned long long>(entries));
  std::printf("mst: %d vertices, complete graph, %d rounds\n", n, kRounds);
  std::printf("every round's tree weight equals the reference Prim's\n");
  std::printf("result: %llu\n", static_cast<unsigned long long>(tree));
  return 0;
}
