// olden_bisort: imitates Olden "bisort".
//
// Bitonic sort of values held in a complete binary tree of malloc'd nodes
// (the values at the leaves, in left-to-right order): sort the left subtree
// ascending and the right one descending, which makes the whole sequence
// bitonic, then merge by comparing and exchanging the corresponding leaves
// of the two halves, walking both subtrees in parallel, and merging each
// half. Sorted forward, then backward, as the original does.
//
// Self-check: after each sort the leaves are in order, and their sum and
// an order-independent hash equal those of the input values.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "workload_common.h"

namespace {

constexpr const char* kProg = "wl_olden_bisort";
constexpr wl::ProgramInfo kInfo{kProg, "Olden bisort: bitonic sort of values in a binary tree of malloc'd nodes.",
                                "tree levels (leaves = 2^N)", 19, 1, 24};

struct Node {
  std::uint32_t value;
  Node* left;
  Node* right;
};

std::uint64_t g_nodes = 0;

Node* build(int levels, wl::Rng& rng) {
  auto* t = static_cast<Node*>(std::malloc(sizeof(Node)));
  if (t == nullptr) wl::out_of_memory(kProg, sizeof(Node));
  ++g_nodes;
  if (levels == 0) {
    t->value = rng.next32();
    t->left = t->right = nullptr;
  } else {
    t->value = 0;
    t->left = build(levels - 1, rng);
    t->right = build(levels - 1, rng);
  }
  return t;
}

// Compare-exchange the corresponding leaves of a and b (same shape).
void exchange(Node* a, Node* b, bool up) {
  if (a->left == nullptr) {
    if ((a->value > b->value) == up) {
      const std::uint32_t t = a->value;
      a->value = b->value;
      b->value = t;
    }
    return;
  }
  exchange(a->left, b->left, up);
  exchange(a->right, b->right, up);
}

void merge(Node* t, bool up) {
  if (t->left == nullptr) return;
  exchange(t->left, t->right, up);
  merge(t->left, up);
  merge(t->right, up);
}

void sort(Node* t, bool up) {
  if (t->left == nullptr) return;
  sort(t->left, true);
  sort(t->right, false);
  merge(t, up);
}

struct Summary {
  std::uint64_t sum = 0, hash = 0, count = 0;
  bool ordered = true;
  bool have_last = false;
  std::uint32_t last = 0;
};

void summarize(const Node* t, bool up, Summary& s) {
  if (t->left == nullptr) {
    s.sum += t->value;
    s.hash += wl::mix64(t->value);
    ++s.count;
    if (s.have_last && (up ? t->value < s.last : t->value > s.last)) s.ordered = false;
    s.last = t->value;
    s.have_last = true;
    return;
  }
  summarize(t->left, up, s);
  summarize(t->right, up, s);
}

void release(Node* t) {
  if (t == nullptr) return;
  release(t->left);
  release(t->right);
  std::free(t);
}

}  // namespace

int main(int argc, char** argv) {
  auto [opt, rng] = wl::start(argc, argv, kInfo);
  const int levels = static_cast<int>(opt.size);
  Node* root = build(levels, rng);
  Summary input;
  summarize(root, true, input);
  input.ordered = true;
  Summary out;
  for (int pass = 0; pass < 2; ++pass) {
    const bool up = pass == 0;
    sort(root, up);
    out = Summary{};
    summarize(root, up, out);
    if (!out.ordered) wl::fail(kProg, "pass %d: leaves not in %s order", pass, up ? "ascending" : "descending");
    if (out.sum != input.sum || out.hash != input.hash || out.count != input.count)
      wl::fail(kProg, "pass %d: the sorted values are not the input's", pass);
  }
  std::printf("bisort: %llu leaves, %llu nodes, sorted ascending then descending\n",
              static_cast<unsigned long long>(input.count), static_cast<unsigned long long>(g_nodes));
  std::printf("both sorts ordered and a permutation of the input\n");
  std::printf("result: %u\n", out.last);  // the smallest value (last of the descending order)
  release(root);
  return 0;
}
