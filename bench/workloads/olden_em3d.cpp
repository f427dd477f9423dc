// olden_em3d: imitates Olden "em3d".
//
// Electromagnetic wave propagation on an irregular bipartite graph: E nodes
// (electric field) and H nodes (magnetic field), each with a value and a
// list of `degree` nodes of the other kind it depends on, weighted by
// coefficients. Every iteration updates each E node from its H neighbours
// (value -= sum coeff * neighbour value), then each H node from its E
// neighbours. As in the original, the nodes of each kind form a linked list
// in allocation order, and every node's dependency arrays are allocated
// right after it (a node, its pointer array, its coefficient array, the next
// node...), so nodes of one size are interleaved with arrays of others.
//
// Self-check: the same computation on index arrays (one allocation each, no
// pointers), in the same order of operations, must give bit-identical values.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "workload_common.h"

namespace {

constexpr const char* kProg = "wl_olden_em3d";
constexpr int kDegree = 10;
constexpr int kIterations = 40;
constexpr wl::ProgramInfo kInfo{kProg, "Olden em3d: propagate values on a bipartite graph of malloc'd nodes.",
                                "nodes of each kind", 60000, 16, 2000000};

struct Node {
  double value;
  Node* next;
  double** from_values;  // values this node depends on
  double* coeffs;
  int from_count;
  int id;
};

void* xmalloc(std::size_t n) { return wl::checked_malloc(kProg, n); }

}  // namespace

int main(int argc, char** argv) {
  auto [opt, rng] = wl::start(argc, argv, kInfo);
  const int n = static_cast<int>(opt.size);

  // Each kind's nodes, allocated in list order with their arrays.
  Node* heads[2] = {nullptr, nullptr};
  Node** index[2];
  index[0] = static_cast<Node**>(xmalloc(sizeof(Node*) * n));
  index[1] = static_cast<Node**>(xmalloc(sizeof(Node*) * n));
  // The reference: the same graph as index arrays.
  int* ref_from[2];
  double* ref_coeff[2];
  double* ref_value[2];
  for (int k = 0; k < 2; ++k) {
    ref_from[k] = static_cast<int*>(xmalloc(sizeof(int) * n * kDegree));
    ref_coeff[k] = static_cast<double*>(xmalloc(sizeof(double) * n * kDegree));
    ref_value[k] = static_cast<double*>(xmalloc(sizeof(double) * n));
  }
  for (int k = 0; k < 2; ++k) {
    Node** tail = &heads[k];
    for (int i = 0; i < n; ++i) {
      auto* nd = static_cast<Node*>(xmalloc(sizeof(Node)));
      nd->value = rng.uniform(-1.0, 1.0);
      nd->id = i;
      nd->next = nullptr;
      nd->from_count = kDegree;
      nd->from_values = static_cast<double**>(xmalloc(sizeof(double*) * kDegree));
      nd->coeffs = static_cast<double*>(xmalloc(sizeof(double) * kDegree));
      ref_value[k][i] = nd->value;
      index[k][i] = nd;
      *tail = nd;
      tail = &nd->next;
    }
  }
  // Dependencies: mostly near the node's own position (as the original's
  // local/remote split), some anywhere.
  for (int k = 0; k < 2; ++k) {
    for (Node* nd = heads[k]; nd != nullptr; nd = nd->next) {
      for (int j = 0; j < kDegree; ++j) {
        int other;
        if (rng.chance(3, 4)) {
          const std::int64_t off = static_cast<std::int64_t>(rng.below(65)) - 32;
          other = static_cast<int>(((nd->id + off) % n + n) % n);
        } else {
          other = static_cast<int>(rng.below(static_cast<std::uint64_t>(n)));
        }
        const double c = rng.uniform(0.0, 1.0) / (2.0 * kDegree);
        nd->from_values[j] = &index[1 - k][other]->value;
        nd->coeffs[j] = c;
        ref_from[k][nd->id * kDegree + j] = other;
        ref_coeff[k][nd->id * kDegree + j] = c;
      }
    }
  }

  for (int it = 0; it < kIterations; ++it) {
    for (int k = 0; k < 2; ++k) {
      for (Node* nd = heads[k]; nd != nullptr; nd = nd->next) {
        double v = nd->value;
        for (int j = 0; j < nd->from_count; ++j) v -= nd->coeffs[j] * *nd->from_values[j];
        nd->value = v;
      }
    }
  }
  for (int it = 0; it < kIterations; ++it) {
    for (int k = 0; k < 2; ++k) {
      for (int i = 0; i < n; ++i) {
        double v = ref_value[k][i];
        for (int j = 0; j < kDegree; ++j) v -= ref_coeff[k][i * kDegree + j] * ref_value[1 - k][ref_from[k][i * kDegree + j]];
        ref_value[k][i] = v;
      }
    }
  }

  wl::Checksum sum;
  double total = 0;
  for (int k = 0; k < 2; ++k) {
    for (int i = 0; i < n; ++i) {
      const Node* nd = index[k][i];
      if (std::memcmp(&nd->value, &ref_value[k][i], sizeof(double)) != 0)
        wl::fail(kProg, "node %d of kind %d: %.17g, reference %.17g", i, k, nd->value, ref_value[k][i]);
      std::uint64_t bits;
      std::memcpy(&bits, &nd->value, sizeof bits);
      sum.add(bits);
      total += nd->value;
    }
  }
  for (int k = 0; k < 2; ++k) {
    for (Node* nd = heads[k]; nd != nullptr;) {
      Node* next = nd->next;
      std::free(nd->from_values);
      std::free(nd->coeffs);
      std::free(nd);
      nd = next;
    }
    std::free(index[k]);
    std::free(ref_from[k]);
    std::free(ref_coeff[k]);
    std::free(ref_value[k]);
  }
  std::printf("em3d: %d E nodes, %d H nodes, degree %d, %d iterations\n", n, n, kDegree, kIterations);
  std::printf("sum of values: %.9f\n", total);
  std::printf("values equal to the index-array reference, bit for bit\n");
  std::printf("result: %016llx\n", static_cast<unsigned long long>(sum.value()));
  return 0;
}
