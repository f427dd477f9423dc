// gc_trees: imitates GCBench (Boehm, Ellis, Kovac; the C++ version with
// explicit new/delete).
//
// Allocates and drops complete binary trees of depths 4, 6, ..., max, each
// many times, built both top-down (Populate: the parent exists before its
// children) and bottom-up (MakeTree: children before the parent), after a
// "stretch" tree of depth max+2.  A long-lived tree of depth max and a
// long-lived array of 500000 doubles stay live for the whole run.
// Allocation behaviour: operator new/delete of one 24-byte node type
// (plus the one 4 MB array), in bursts of 2^(d+1)-1 allocations followed by
// a recursive delete of the whole tree; about the same number of nodes is
// allocated at every depth, so small trees mean many short bursts.
//
// Each node carries a value derived from the seed and its heap index; every
// tree is walked once to check its node count and value sum against what a
// complete tree of that depth must hold.
#include <cstdint>
#include <cstdio>

#include "workload_common.h"

namespace {

constexpr const char* kProg = "wl_gc_trees";
constexpr int kMinTreeDepth = 4;
constexpr std::size_t kArraySize = 500000;
constexpr wl::ProgramInfo kInfo{kProg,
                                "GCBench: build and drop complete binary trees top-down and bottom-up, "
                                "with a long-lived tree and array.",
                                "maximum tree depth (stretch tree: N+2, long-lived tree: N)", 18, 4, 22};

std::uint64_t g_nodes_allocated = 0;

struct Node {
  Node* left = nullptr;
  Node* right = nullptr;
  std::int32_t i = 0;
  std::int32_t j = 0;

  Node() { ++g_nodes_allocated; }
  Node(Node* l, Node* r) : left(l), right(r) { ++g_nodes_allocated; }
  ~Node() {
    delete left;
    delete right;
  }
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
};

std::uint64_t g_seed = 1;

std::int32_t node_value(std::uint64_t index) {
  return static_cast<std::int32_t>(wl::mix64(g_seed ^ (index * 0x9e3779b97f4a7c15ULL)) >> 44);
}

// Nodes of a complete binary tree of the given depth (depth 0 = one node).
std::uint64_t tree_size(int depth) { return (std::uint64_t{2} << depth) - 1; }

// Top-down: the node exists, allocate its children and recurse.
void populate(int depth, Node* node, std::uint64_t index) {
  node->i = node_value(index);
  node->j = depth;
  if (depth <= 0) return;
  --depth;
  node->left = new Node();
  node->right = new Node();
  populate(depth, node->left, 2 * index);
  populate(depth, node->right, 2 * index + 1);
}

// Bottom-up: build the subtrees, then their parent.
Node* make_tree(int depth, std::uint64_t index) {
  Node* n = depth <= 0 ? new Node() : new Node(make_tree(depth - 1, 2 * index), make_tree(depth - 1, 2 * index + 1));
  n->i = node_value(index);
  n->j = depth;
  return n;
}

struct Walk {
  std::uint64_t nodes = 0;
  std::int64_t sum = 0;
};

void walk(const Node* n, Walk& w) {
  while (n != nullptr) {
    ++w.nodes;
    w.sum += n->i;
    walk(n->left, w);
    n = n->right;
  }
}

// Expected node value sum of a complete tree of the given depth.
std::int64_t expected_sum(int depth) {
  std::int64_t s = 0;
  for (std::uint64_t idx = 1; idx <= tree_size(depth); ++idx) s += node_value(idx);
  return s;
}

void check_tree(const Node* t, int depth, const char* what) {
  Walk w;
  walk(t, w);
  static std::int64_t cached[64];
  static bool have[64];
  if (!have[depth]) {
    cached[depth] = expected_sum(depth);
    have[depth] = true;
  }
  if (w.nodes != tree_size(depth) || w.sum != cached[depth]) {
    wl::fail(kProg, "%s tree of depth %d: %llu nodes (expected %llu), value sum %lld (expected %lld)", what,
             depth, static_cast<unsigned long long>(w.nodes),
             static_cast<unsigned long long>(tree_size(depth)), static_cast<long long>(w.sum),
             static_cast<long long>(cached[depth]));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const wl::Options opt = wl::parse_args(argc, argv, kInfo);
  g_seed = opt.seed;
  const int max_depth = static_cast<int>(opt.size);
  const int stretch_depth = max_depth + 2;
  const int long_lived_depth = max_depth;
  wl::Checksum check;

  // Stretch the heap with a temporary tree.
  {
    Node* t = make_tree(stretch_depth, 1);
    check_tree(t, stretch_depth, "stretch");
    delete t;
  }
  std::printf("gc_trees: stretch tree of depth %d (%llu nodes)\n", stretch_depth,
              static_cast<unsigned long long>(tree_size(stretch_depth)));

  // Long-lived data.
  auto* long_lived = new Node();
  populate(long_lived_depth, long_lived, 1);
  auto* array = new double[kArraySize];
  for (std::size_t i = 0; i < kArraySize / 2; ++i) array[i] = 1.0 / static_cast<double>(i);
  for (std::size_t i = kArraySize / 2; i < kArraySize; ++i) array[i] = static_cast<double>(i);
  std::printf("long-lived: tree of depth %d (%llu nodes), array of %zu doubles\n", long_lived_depth,
              static_cast<unsigned long long>(tree_size(long_lived_depth)), kArraySize);

  // Temporary trees: the same number of nodes at every depth.
  const std::uint64_t stretch_nodes = tree_size(stretch_depth);
  std::uint64_t temp_trees = 0;
  for (int d = kMinTreeDepth; d <= max_depth; d += 2) {
    const std::uint64_t iters = 2 * stretch_nodes / tree_size(d);
    for (std::uint64_t it = 0; it < iters; ++it) {
      auto* t = new Node();
      populate(d, t, 1);
      check_tree(t, d, "top-down");
      delete t;
    }
    for (std::uint64_t it = 0; it < iters; ++it) {
      Node* t = make_tree(d, 1);
      check_tree(t, d, "bottom-up");
      delete t;
    }
    temp_trees += 2 * iters;
    check.add(static_cast<std::uint64_t>(d));
    check.add(iters);
    check.add_signed(expected_sum(d));
  }

  // The long-lived data must have survived intact.
  check_tree(long_lived, long_lived_depth, "long-lived");
  if (array[1000] != 1.0 / 1000.0 || array[kArraySize - 1] != static_cast<double>(kArraySize - 1)) {
    wl::fail(kProg, "long-lived array corrupted");
  }
  Walk w;
  walk(long_lived, w);
  check.add_signed(w.sum);
  delete[] array;
  delete long_lived;

  if (opt.verbose) {
    std::fprintf(stderr, "%s: %llu nodes allocated (%zu bytes each)\n", kProg,
                 static_cast<unsigned long long>(g_nodes_allocated), sizeof(Node));
  }
  std::printf("temporary trees: %llu of depths %d..%d, each built top-down and bottom-up\n",
              static_cast<unsigned long long>(temp_trees), kMinTreeDepth, max_depth);
  std::printf("nodes allocated: %llu, all trees checked (node count and value sum)\n",
              static_cast<unsigned long long>(g_nodes_allocated));
  std::printf("long-lived tree value sum: %lld\n", static_cast<long long>(w.sum));
  wl::print_result_hex(check.value());
  return 0;
}
