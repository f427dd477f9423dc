// olden_tsp: imitates Olden "tsp".
//
// Builds a 2-d tree of cities (one malloc per city: the median of its box,
// alternately split in x and y, the lower half of the cities to the left),
// then computes a tour by divide and conquer, as the original: the tours of
// the two subtrees and the city itself, each a circular doubly linked list
// threaded through the city nodes, are merged by splicing one cycle into
// the other next to its closest city, in whichever orientation adds less
// length (reversing the spliced cycle when needed).
//
// Self-check: the tour is one cycle through every city exactly once, and its
// length walked forward equals its length walked backward (to rounding).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "workload_common.h"

namespace {

constexpr const char* kProg = "wl_olden_tsp";
constexpr int kRounds = 4;
constexpr wl::ProgramInfo kInfo{kProg, "Olden tsp: divide-and-conquer tour over a 2-d tree of malloc'd cities.",
                                "cities", 500000, 1, 10000000};

struct City {
  double x, y;
  City* left;
  City* right;
  City* next;  // tour
  City* prev;
  int id;
};

int g_next_id = 0;

double dist(const City* a, const City* b) {
  const double dx = a->x - b->x, dy = a->y - b->y;
  return std::sqrt(dx * dx + dy * dy);
}

City* build(int n, bool x_axis, double x0, double x1, double y0, double y1, wl::Rng& rng) {
  if (n == 0) return nullptr;
  auto* c = static_cast<City*>(std::malloc(sizeof(City)));
  if (c == nullptr) wl::out_of_memory(kProg, sizeof(City));
  c->id = g_next_id++;
  const int lo = (n - 1) / 2;
  if (x_axis) {
    const double mid = (x0 + x1) / 2;
    c->x = mid;
    c->y = rng.uniform(y0, y1);
    c->left = build(lo, false, x0, mid, y0, y1, rng);
    c->right = build(n - 1 - lo, false, mid, x1, y0, y1, rng);
  } else {
    const double mid = (y0 + y1) / 2;
    c->y = mid;
    c->x = rng.uniform(x0, x1);
    c->left = build(lo, true, x0, x1, y0, mid, rng);
    c->right = build(n - 1 - lo, true, x0, x1, mid, y1, rng);
  }
  return c;
}

// Splices cycle b into cycle a; returns a.
City* merge(City* a, City* b) {
  if (b == nullptr) return a;
  City* p = a;
  double best = dist(a, b);
  for (City* q = a->next; q != a; q = q->next) {
    const double d = dist(q, b);
    if (d < best) best = d, p = q;
  }
  City* pn = p->next;
  City* bl = b->prev;
  const double forward = dist(p, b) + dist(bl, pn);
  const double backward = dist(p, bl) + dist(b, pn);
  if (backward < forward) {  // reverse b's cycle: then it runs bl ... b
    City* q = b;
    do {
      City* t = q->next;
      q->next = q->prev;
      q->prev = t;
      q = t;
    } while (q != b);
    City* t = b;
    b = bl;
    bl = t;
  }
  p->next = b;
  b->prev = p;
  bl->next = pn;
  pn->prev = bl;
  return a;
}

City* tour(City* t) {
  if (t == nullptr) return nullptr;
  City* l = tour(t->left);
  City* r = tour(t->right);
  t->next = t->prev = t;
  return merge(merge(t, l), r);
}

}  // namespace

int main(int argc, char** argv) {
  auto [opt, rng] = wl::start(argc, argv, kInfo);
  const int n = static_cast<int>(opt.size);
  double length = 0;
  auto* seen = static_cast<unsigned char*>(std::malloc(static_cast<std::size_t>(n)));
  if (seen == nullptr) wl::out_of_memory(kProg, static_cast<std::size_t>(n));
  for (int round = 0; round < kRounds; ++round) {
    g_next_id = 0;
    City* root = build(n, true, 0.0, 1.0, 0.0, 1.0, rng);
    City* start = tour(root);
    for (int i = 0; i < n; ++i) seen[i] = 0;
    double fwd = 0, bwd = 0;
    int count = 0;
    City* c = start;
    do {
      if (c->id < 0 || c->id >= n || seen[c->id]) wl::fail(kProg, "round %d: city %d visited twice", round, c->id);
      seen[c->id] = 1;
      ++count;
      if (c->next->prev != c) wl::fail(kProg, "round %d: broken links at city %d", round, c->id);
      fwd += dist(c, c->next);
      c = c->next;
    } while (c != start && count <= n);
    if (count != n) wl::fail(kProg, "round %d: tour of %d cities, expected %d", round, count, n);
    c = start;
    do {
      bwd += dist(c, c->prev);
      c = c->prev;
    } while (c != start);
    if (std::fabs(fwd - bwd) > 1e-9 * (fwd + 1)) wl::fail(kProg, "round %d: forward %.12f, backward %.12f", round, fwd, bwd);
    length = fwd;
    wl::free_binary_tree(root);
  }
  std::free(seen);
  std::printf("tsp: %d cities in the unit square, %d rounds\n", n, kRounds);
  std::printf("each tour one cycle through every city, equal length both ways\n");
  std::printf("result: %.6f\n", length);
  return 0;
}
