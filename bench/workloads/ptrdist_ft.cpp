// ptrdist_ft: imitates Ptrdist "ft".
//
// Minimum spanning tree of a random connected sparse graph by Prim's
// algorithm on a Fibonacci heap, as the original: vertices are malloc'd one
// by one and linked in a list, each with a list of malloc'd edges (both
// directions of every edge), and every vertex enters the heap as a malloc'd
// heap item that delete-min frees. Decrease-key cuts items to the root list
// with cascading cuts; delete-min consolidates the roots by degree.
//
// Self-check: the tree weight equals that of Kruskal's algorithm (sorted
// edge array, union-find) on the same graph.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "workload_common.h"

namespace {

constexpr const char* kProg = "wl_ptrdist_ft";
constexpr int kRounds = 3;
constexpr int kExtraEdges = 3;  // per vertex, besides the one joining it to an earlier vertex
constexpr std::uint64_t kInf = ~std::uint64_t{0};
constexpr wl::ProgramInfo kInfo{kProg,
                                "Ptrdist ft: Prim's minimum spanning tree on a Fibonacci heap of malloc'd items.",
                                "vertices", 80000, 2, 5000000};

struct Vertex;
struct Item;

struct Edge {
  Vertex* to;
  std::uint32_t weight;
  Edge* next;
};

struct Vertex {
  Vertex* next;
  Edge* edges;
  Item* item;  // in the heap, or nullptr once in the tree
  std::uint64_t key;
  int id;
};

struct Item {
  std::uint64_t key;
  Vertex* vertex;
  Item* parent;
  Item* child;
  Item* left;
  Item* right;
  int degree;
  bool marked;
};

void* xmalloc(std::size_t n) { return wl::checked_malloc(kProg, n); }

class FibHeap {
 public:
  Item* insert(Vertex* v, std::uint64_t key) {
    auto* it = static_cast<Item*>(xmalloc(sizeof(Item)));
    *it = Item{key, v, nullptr, nullptr, it, it, 0, false};
    add_root(it);
    ++size_;
    return it;
  }
  bool empty() const { return min_ == nullptr; }

  // Removes the minimum; returns its vertex and frees the item.
  Vertex* delete_min() {
    Item* m = min_;
    if (Item* c = m->child) {  // children become roots
      Item* x = c;
      do {
        Item* next = x->right;
        x->parent = nullptr;
        x->marked = false;
        splice_root(x);
        x = next;
      } while (x != c);
    }
    unlink(m);
    min_ = m->right == m ? nullptr : m->right;
    if (min_ != nullptr) consolidate();
    --size_;
    Vertex* v = m->vertex;
    std::free(m);
    return v;
  }

  void decrease(Item* it, std::uint64_t key) {
    it->key = key;
    Item* p = it->parent;
    if (p != nullptr && key < p->key) {
      cut(it, p);
      while (p->parent != nullptr) {
        if (!p->marked) {
          p->marked = true;
          break;
        }
        Item* pp = p->parent;
        cut(p, pp);
        p = pp;
      }
    }
    if (key < min_->key) min_ = it;
  }

 private:
  static void unlink(Item* x) {
    x->left->right = x->right;
    x->right->left = x->left;
  }
  void splice_root(Item* x) {  // x detached; into the root list next to min_
    x->left = min_;
    x->right = min_->right;
    min_->right->left = x;
    min_->right = x;
  }
  void add_root(Item* x) {
    if (min_ == nullptr) {
      x->left = x->right = x;
      min_ = x;
      return;
    }
    splice_root(x);
    if (x->key < min_->key) min_ = x;
  }
  void cut(Item* x, Item* p) {
    if (x->right == x) p->child = nullptr;
    else {
      if (p->child == x) p->child = x->right;
      unlink(x);
    }
    --p->degree;
    x->parent = nullptr;
    x->marked = false;
    splice_root(x);
  }
  void consolidate() {
    Item* by_degree[64] = {};
    // Detach the root list first: it is rebuilt from by_degree.
    Item* start = min_;
    Item* x = start;
    int roots = 0;
    do { ++roots, x = x->right; } while (x != start);
    for (int i = 0; i < roots; ++i) {
      Item* next = x->right;
      Item* a = x;
      a->left = a->right = a;
      int d = a->degree;
      while (by_degree[d] != nullptr) {
        Item* b = by_degree[d];
        by_degree[d] = nullptr;
        if (b->key < a->key) std::swap(a, b);
        b->parent = a;  // b under a
        if (a->child == nullptr) {
          a->child = b;
          b->left = b->right = b;
        } else {
          b->left = a->child;
          b->right = a->child->right;
          a->child->right->left = b;
          a->child->right = b;
        }
        b->marked = false;
        ++a->degree;
        ++d;
      }
      by_degree[d] = a;
      x = next;
    }
    min_ = nullptr;
    for (Item* r : by_degree)
      if (r != nullptr) add_root(r);
  }

  Item* min_ = nullptr;
  std::size_t size_ = 0;
};

struct Pair {
  std::uint32_t w;
  int a, b;
};

int find(int* parent, int x) {
  while (parent[x] != x) {
    parent[x] = parent[parent[x]];
    x = parent[x];
  }
  return x;
}

}  // namespace

int main(int argc, char** argv) {
  auto [opt, rng] = wl::start(argc, argv, kInfo);
  const int n = static_cast<int>(opt.size);
  std::uint64_t weight = 0;
  for (int round = 0; round < kRounds; ++round) {
    auto** vs = static_cast<Vertex**>(xmalloc(sizeof(Vertex*) * n));
    Vertex* head = nullptr;
    for (int i = n - 1; i >= 0; --i) {
      auto* v = static_cast<Vertex*>(xmalloc(sizeof(Vertex)));
      *v = Vertex{head, nullptr, nullptr, kInf, i};
      head = v;
      vs[i] = v;
    }
    const std::size_t m = static_cast<std::size_t>(n - 1) + static_cast<std::size_t>(n) * kExtraEdges;
    auto* pairs = static_cast<Pair*>(xmalloc(sizeof(Pair) * m));
    std::size_t k = 0;
    auto add_edge = [&](int a, int b, std::uint32_t w) {
      auto* e1 = static_cast<Edge*>(xmalloc(sizeof(Edge)));
      *e1 = Edge{vs[b], w, vs[a]->edges};
      vs[a]->edges = e1;
      auto* e2 = static_cast<Edge*>(xmalloc(sizeof(Edge)));
      *e2 = Edge{vs[a], w, vs[b]->edges};
      vs[b]->edges = e2;
      pairs[k++] = Pair{w, a, b};
    };
    for (int i = 0; i < n; ++i) {
      if (i > 0) add_edge(i, static_cast<int>(rng.below(static_cast<std::uint64_t>(i))), static_cast<std::uint32_t>(rng.range(1, 1000000)));
      for (int j = 0; j < kExtraEdges; ++j) {
        const int o = static_cast<int>(rng.below(static_cast<std::uint64_t>(n)));
        if (o == i) continue;
        add_edge(i, o, static_cast<std::uint32_t>(rng.range(1, 1000000)));
      }
    }
    // Prim from vertex 0: every vertex enters the heap, in list order.
    FibHeap heap;
    for (Vertex* v = head; v != nullptr; v = v->next) {
      v->key = v == head ? 0 : kInf;
      v->item = heap.insert(v, v->key);
    }
    std::uint64_t total = 0;
    while (!heap.empty()) {
      Vertex* u = heap.delete_min();
      u->item = nullptr;
      total += u->key;
      for (Edge* e = u->edges; e != nullptr; e = e->next) {
        Vertex* w = e->to;
        if (w->item != nullptr && e->weight < w->key) {
          w->key = e->weight;
          heap.decrease(w->item, e->weight);
        }
      }
    }
    // Kruskal.
    std::sort(pairs, pairs + k, [](const Pair& a, const Pair& b) { return a.w < b.w; });
    auto* parent = static_cast<int*>(xmalloc(sizeof(int) * n));
    for (int i = 0; i < n; ++i) parent[i] = i;
    std::uint64_t expected = 0;
    for (std::size_t i = 0; i < k; ++i) {
      const int ra = find(parent, pairs[i].a), rb = find(parent, pairs[i].b);
      if (ra != rb) parent[ra] = rb, expected += pairs[i].w;
    }
    if (total != expected)
      wl::fail(kProg, "round %d: Prim on the Fibonacci heap %llu, Kruskal %llu", round,
               static_cast<unsigned long long>(total), static_cast<unsigned long long>(expected));
    weight = total;
    std::free(parent);
    std::free(pairs);
    for (Vertex* v = head; v != nullptr;) {
      Vertex* next = v->next;
      for (Edge* e = v->edges; e != nullptr;) {
        Edge* en = e->next;
        std::free(e);
        e = en;
      }
      std::free(v);
      v = next;
    }
    std::free(vs);
  }
  std::printf("ft: %d vertices, %d random edges per vertex plus a spanning chain, %d rounds\n", n, kExtraEdges, kRounds);
  std::printf("every tree weight equals Kruskal's\n");
  std::printf("result: %llu\n", static_cast<unsigned long long>(weight));
  return 0;
}
