// olden_treeadd: imitates Olden "treeadd".
//
// Builds a complete binary tree recursively, one malloc per node (24-byte
// nodes, allocated in pre-order: parent before its children), then walks it
// several times summing the node values.  Allocation behaviour: one burst of
// 2^levels - 1 equal-sized small objects that all stay live for the whole
// round, then a post-order burst of frees (the original never freed; we free
// so that the next round reuses the memory and the program is leak-free).
// The tree is rebuilt for a fixed number of rounds.
//
// Node values are a*i + b where i is the node's heap index (root 1, children
// 2i and 2i+1) and a, b come from the seed, so the sum has a closed form that
// every walk is checked against.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "workload_common.h"

namespace {

constexpr const char* kProg = "wl_olden_treeadd";
constexpr int kRounds = 8;
constexpr int kSumsPerRound = 8;
constexpr wl::ProgramInfo kInfo{kProg,
                                "Olden treeadd: build a binary tree with malloc, sum it repeatedly.",
                                "tree levels (nodes = 2^N - 1)", 22, 1, 25};

struct Tree {
  int val;
  Tree* left;
  Tree* right;
};

std::uint64_t g_nodes_allocated = 0;

// Same shape as Olden's TreeAlloc: the node is allocated before its subtrees.
Tree* tree_alloc(int level, std::uint64_t index, int a, int b) {
  if (level == 0) return nullptr;
  auto* t = static_cast<Tree*>(std::malloc(sizeof(Tree)));
  if (t == nullptr) wl::out_of_memory(kProg, sizeof(Tree));
  ++g_nodes_allocated;
  t->left = tree_alloc(level - 1, 2 * index, a, b);
  t->right = tree_alloc(level - 1, 2 * index + 1, a, b);
  t->val = a * static_cast<int>(index) + b;
  return t;
}

// Olden's TreeAdd.
std::int64_t tree_add(const Tree* t) {
  if (t == nullptr) return 0;
  return tree_add(t->left) + tree_add(t->right) + t->val;
}

}  // namespace

int main(int argc, char** argv) {
  auto [opt, rng] = wl::start(argc, argv, kInfo);
  const int levels = static_cast<int>(opt.size);

  // Coefficients of the node values; a*i + b stays below 2^31 for i < 2^27.
  const int a = static_cast<int>(rng.range(1, 15));
  const int b = static_cast<int>(rng.range(0, 999));

  const std::int64_t n = (std::int64_t{1} << levels) - 1;
  const std::int64_t expected = a * (n * (n + 1) / 2) + b * n;

  std::printf("treeadd: %d levels, %lld nodes, values %d*i + %d\n", levels,
              static_cast<long long>(n), a, b);
  std::printf("rounds: %d, sums per round: %d\n", kRounds, kSumsPerRound);

  std::int64_t last = 0;
  for (int round = 0; round < kRounds; ++round) {
    Tree* root = tree_alloc(levels, 1, a, b);
    for (int s = 0; s < kSumsPerRound; ++s) {
      const std::int64_t total = tree_add(root);
      if (total != expected) {
        wl::fail(kProg, "round %d walk %d: tree sum %lld, closed form %lld", round, s,
                 static_cast<long long>(total), static_cast<long long>(expected));
      }
      last = total;
    }
    wl::free_binary_tree(root);
  }
  if (opt.verbose) {
    std::fprintf(stderr, "%s: %llu nodes allocated (%zu bytes each)\n", kProg,
                 static_cast<unsigned long long>(g_nodes_allocated), sizeof(Tree));
  }
  std::printf("walks: %d, each equal to the closed form a*n*(n+1)/2 + b*n\n",
              kRounds * kSumsPerRound);
  std::printf("result: %lld\n", static_cast<long long>(last));
  return 0;
}
