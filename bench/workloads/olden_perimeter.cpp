// olden_perimeter: imitates Olden "perimeter".
//
// A region quadtree of a 2^N x 2^N binary image (the union of a few random
// disks; one malloc per node, with a parent pointer), built top down as in
// the original: a square wholly inside a disk or outside every disk is a
// leaf, any other square is split in four. The perimeter of the black
// region is then computed by Samet's neighbour finding: for every side of
// every black leaf, climb through the parents to the neighbour of equal or
// greater size and, if it is split, sum its white leaves along the side.
//
// Self-check: the perimeter equals the count of pixel sides between a
// black pixel and a white pixel or the image border, counted on the image.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "workload_common.h"

namespace {

constexpr const char* kProg = "wl_olden_perimeter";
constexpr int kRounds = 4;
constexpr int kDisks = 6;
constexpr wl::ProgramInfo kInfo{kProg, "Olden perimeter: perimeter of an image by neighbour finding in a quadtree.",
                                "image levels (2^N x 2^N pixels)", 12, 1, 14};

enum Color : std::uint8_t { kWhite, kBlack, kGrey };
enum Quad : std::uint8_t { kNW, kNE, kSW, kSE, kRoot };
enum Dir { kN, kE, kS, kW };

struct QNode {
  Color color;
  Quad type;
  QNode* parent;
  QNode* child[4];
};

struct Disk {
  std::int64_t cx2, cy2, r2;  // doubled centre, squared doubled radius
};

struct Image {
  Disk disks[kDisks];
  std::int64_t size;
  bool black(std::int64_t px, std::int64_t py) const {
    for (const Disk& d : disks) {
      const std::int64_t dx = 2 * px + 1 - d.cx2, dy = 2 * py + 1 - d.cy2;
      if (dx * dx + dy * dy <= d.r2) return true;
    }
    return false;
  }
};

std::uint64_t g_nodes = 0;

// 1: the square's pixel centres are all in disk d; 0: none is; -1: some.
int classify(const Disk& d, std::int64_t x, std::int64_t y, std::int64_t s) {
  const std::int64_t lo_x = 2 * x + 1, hi_x = 2 * (x + s) - 1, lo_y = 2 * y + 1, hi_y = 2 * (y + s) - 1;
  auto inside = [&](std::int64_t px, std::int64_t py) {
    const std::int64_t dx = px - d.cx2, dy = py - d.cy2;
    return dx * dx + dy * dy <= d.r2;
  };
  if (inside(lo_x, lo_y) && inside(hi_x, lo_y) && inside(lo_x, hi_y) && inside(hi_x, hi_y)) return 1;
  const std::int64_t nx = d.cx2 < lo_x ? lo_x : (d.cx2 > hi_x ? hi_x : d.cx2);
  const std::int64_t ny = d.cy2 < lo_y ? lo_y : (d.cy2 > hi_y ? hi_y : d.cy2);
  if (!inside(nx, ny)) return 0;  // nearest point of the centres' box is outside
  return -1;
}

QNode* build(const Image& img, std::int64_t x, std::int64_t y, std::int64_t s, QNode* parent, Quad type) {
  auto* t = static_cast<QNode*>(std::malloc(sizeof(QNode)));
  if (t == nullptr) wl::out_of_memory(kProg, sizeof(QNode));
  ++g_nodes;
  t->parent = parent;
  t->type = type;
  for (auto& c : t->child) c = nullptr;
  bool mixed = false, any_black = false;
  for (const Disk& d : img.disks) {
    const int k = classify(d, x, y, s);
    if (k == 1) {
      any_black = true;
      mixed = false;
      break;
    }
    if (k == -1) mixed = true;
  }
  if (any_black || !mixed || s == 1) {
    t->color = any_black || (s == 1 && img.black(x, y)) ? kBlack : kWhite;
    return t;
  }
  t->color = kGrey;
  const std::int64_t h = s / 2;
  t->child[kNW] = build(img, x, y, h, t, kNW);
  t->child[kNE] = build(img, x + h, y, h, t, kNE);
  t->child[kSW] = build(img, x, y + h, h, t, kSW);
  t->child[kSE] = build(img, x + h, y + h, h, t, kSE);
  return t;
}

bool adjacent(Dir d, Quad q) {
  switch (d) {
    case kN: return q == kNW || q == kNE;
    case kE: return q == kNE || q == kSE;
    case kS: return q == kSW || q == kSE;
    default: return q == kNW || q == kSW;
  }
}

Quad reflect(Dir d, Quad q) {
  if (d == kN || d == kS) return static_cast<Quad>(q ^ 2);  // NW<->SW, NE<->SE
  return static_cast<Quad>(q ^ 1);                          // NW<->NE, SW<->SE
}

// The neighbour of p on side d of equal or greater size; nullptr at the border.
const QNode* neighbour(const QNode* p, Dir d) {
  const QNode* q = p->parent;
  if (q != nullptr && adjacent(d, p->type)) q = neighbour(q, d);
  if (q != nullptr && q->color == kGrey) return q->child[reflect(d, p->type)];
  return q;
}

std::int64_t sum_adjacent(const QNode* p, Quad q1, Quad q2, std::int64_t s) {
  if (p->color == kGrey)
    return sum_adjacent(p->child[q1], q1, q2, s / 2) + sum_adjacent(p->child[q2], q1, q2, s / 2);
  return p->color == kWhite ? s : 0;
}

std::int64_t perimeter(const QNode* t, std::int64_t s) {
  if (t->color == kGrey) {
    std::int64_t sum = 0;
    for (const QNode* c : t->child) sum += perimeter(c, s / 2);
    return sum;
  }
  if (t->color == kWhite) return 0;
  static constexpr Quad kFacing[4][2] = {{kSW, kSE}, {kNW, kSW}, {kNW, kNE}, {kNE, kSE}};
  std::int64_t sum = 0;
  for (int d = 0; d < 4; ++d) {
    const QNode* nb = neighbour(t, static_cast<Dir>(d));
    if (nb == nullptr || nb->color == kWhite) sum += s;
    else if (nb->color == kGrey) sum += sum_adjacent(nb, kFacing[d][0], kFacing[d][1], s);
  }
  return sum;
}

std::int64_t reference(const Image& img) {
  std::int64_t sum = 0;
  const std::int64_t n = img.size;
  auto* row = static_cast<unsigned char*>(std::malloc(static_cast<std::size_t>(2 * n)));
  if (row == nullptr) wl::out_of_memory(kProg, static_cast<std::size_t>(2 * n));
  unsigned char* prev = row;
  unsigned char* cur = row + n;
  for (std::int64_t x = 0; x < n; ++x) prev[x] = 0;
  for (std::int64_t y = 0; y < n; ++y) {
    for (std::int64_t x = 0; x < n; ++x) cur[x] = img.black(x, y) ? 1 : 0;
    for (std::int64_t x = 0; x < n; ++x) {
      const int left = x > 0 ? cur[x - 1] : 0;
      sum += cur[x] != left;   // vertical side on the left of (x, y)
      sum += cur[x] != prev[x];  // horizontal side above (x, y)
    }
    sum += cur[n - 1];  // right border
    unsigned char* t = prev;
    prev = cur;
    cur = t;
  }
  for (std::int64_t x = 0; x < n; ++x) sum += prev[x];  // bottom border
  std::free(row);
  return sum;
}

void release(QNode* t) {
  if (t == nullptr) return;
  for (QNode* c : t->child) release(c);
  std::free(t);
}

}  // namespace

int main(int argc, char** argv) {
  auto [opt, rng] = wl::start(argc, argv, kInfo);
  const std::int64_t size = std::int64_t{1} << opt.size;
  std::int64_t last = 0;
  constexpr int kWalks = 32;
  for (int round = 0; round < kRounds; ++round) {
    Image img{};
    img.size = size;
    for (Disk& d : img.disks) {
      const auto cx = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(size)));
      const auto cy = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(size)));
      const auto r = static_cast<std::int64_t>(rng.range(1, static_cast<std::uint64_t>(size / 4 + 1)));
      d = Disk{2 * cx, 2 * cy, 4 * r * r};
    }
    QNode* root = build(img, 0, 0, size, nullptr, kRoot);
    std::int64_t p = 0;
    for (int w = 0; w < kWalks; ++w) p = perimeter(root, size);
    const std::int64_t expected = reference(img);
    if (p != expected) wl::fail(kProg, "round %d: perimeter %lld, pixel count %lld", round, static_cast<long long>(p),
                                static_cast<long long>(expected));
    last = p;
    release(root);
  }
  if (opt.verbose) std::fprintf(stderr, "%s: %llu nodes\n", kProg, static_cast<unsigned long long>(g_nodes));
  std::printf("perimeter: %lldx%lld images of %d disks, %d rounds\n", static_cast<long long>(size),
              static_cast<long long>(size), kDisks, kRounds);
  std::printf("every perimeter equals the pixel count\n");
  std::printf("result: %lld\n", static_cast<long long>(last));
  return 0;
}
