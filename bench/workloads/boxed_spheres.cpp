// boxed_spheres: imitates "boxed-sim", the simulation of spheres bouncing in
// a box (gravity off, no friction, perfectly elastic collisions).
//
// 2000 spheres of random radii (mass ~ r^3) start at random positions and
// velocities.  Each fixed time step moves them, bounces them off the walls,
// finds nearby pairs with a uniform grid rebuilt every step, records every
// close pair as a contact in a per-step event list, and resolves the contacts
// whose spheres approach each other with an elastic impulse along the line of
// centres.  Kinetic energy is conserved exactly in real arithmetic; the
// program checks that the floating-point drift stays below 1e-9 and that every
// sphere stays in the box.
//
// Allocation behaviour: C style, malloc/free, all of it 16-byte objects: one
// grid-cell entry per sphere per step and one event per contact (or wall hit),
// each allocated during the step and freed at its end, in the order they were
// made.  The long-lived data (sphere array, grid heads) is allocated once.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "workload_common.h"

namespace {

constexpr const char* kProg = "wl_boxed_spheres";
constexpr std::uint32_t kSpheres = 2000;
constexpr double kMinRadius = 0.5;
constexpr double kMaxRadius = 1.0;
constexpr double kBox = 33.0;
constexpr double kCell = 2.0 * kMaxRadius;
constexpr int kGrid = 17;  // ceil(kBox / kCell)
constexpr double kDt = 0.01;
constexpr double kContactMargin = 0.05;
constexpr wl::ProgramInfo kInfo{kProg,
                                "boxed-sim-like: elastic spheres in a box, contact events as small "
                                "malloc'd objects.",
                                "time steps", 5000, 1, 100000000};

struct Sphere {
  double x[3];
  double v[3];
  double r;
  double m;
};

struct CellEntry {
  CellEntry* next;
  std::uint32_t sphere;
};

// A contact between two spheres, or a wall hit (b == kWall).
struct Event {
  Event* next;
  std::uint32_t a;
  std::uint32_t b;
};
constexpr std::uint32_t kWall = 0xffffffffu;

std::uint64_t g_allocs = 0;

void* xmalloc(std::size_t bytes) {
  void* p = wl::checked_malloc(kProg, bytes);
  ++g_allocs;
  return p;
}

double kinetic_energy(const Sphere* s) {
  double e = 0.0;
  for (std::uint32_t i = 0; i < kSpheres; ++i) {
    e += 0.5 * s[i].m * (s[i].v[0] * s[i].v[0] + s[i].v[1] * s[i].v[1] + s[i].v[2] * s[i].v[2]);
  }
  return e;
}

int cell_of(double x) {
  int c = static_cast<int>(x / kCell);
  if (c < 0) c = 0;
  if (c >= kGrid) c = kGrid - 1;
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  auto [opt, rng] = wl::start(argc, argv, kInfo);

  auto* spheres = static_cast<Sphere*>(xmalloc(kSpheres * sizeof(Sphere)));
  // Initial placement: a random subset of the sites of a 13^3 lattice, each
  // jittered, so that no two spheres overlap.
  {
    constexpr int kSites = 13;
    constexpr double kSpacing = kBox / kSites;
    constexpr std::uint32_t kNumSites = kSites * kSites * kSites;
    auto* site = static_cast<std::uint32_t*>(xmalloc(kNumSites * sizeof(std::uint32_t)));
    for (std::uint32_t i = 0; i < kNumSites; ++i) site[i] = i;
    for (std::uint32_t i = 0; i < kSpheres; ++i) {
      const auto j = i + static_cast<std::uint32_t>(rng.below(kNumSites - i));
      const std::uint32_t t = site[i];
      site[i] = site[j];
      site[j] = t;
    }
    for (std::uint32_t i = 0; i < kSpheres; ++i) {
      Sphere& s = spheres[i];
      s.r = rng.uniform(kMinRadius, kMaxRadius);
      s.m = s.r * s.r * s.r;
      const std::uint32_t cell[3] = {site[i] % kSites, site[i] / kSites % kSites, site[i] / (kSites * kSites)};
      const double slack = (kSpacing - 2.0 * s.r) / 2.0;
      for (int d = 0; d < 3; ++d) {
        s.x[d] = (cell[d] + 0.5) * kSpacing + rng.uniform(-slack, slack);
        s.v[d] = rng.uniform(-1.0, 1.0);
      }
    }
    std::free(site);
  }
  const double e0 = kinetic_energy(spheres);

  auto** grid = static_cast<CellEntry**>(xmalloc(kGrid * kGrid * kGrid * sizeof(CellEntry*)));
  std::uint64_t contacts = 0, collisions = 0, wall_hits = 0, max_contacts_per_step = 0;
  double max_drift = 0.0;

  for (std::uint64_t step = 0; step < opt.size; ++step) {
    Event* events = nullptr;
    Event** tail = &events;
    std::uint64_t step_contacts = 0;

    // Move, and bounce off the walls.
    for (std::uint32_t i = 0; i < kSpheres; ++i) {
      Sphere& s = spheres[i];
      for (int d = 0; d < 3; ++d) {
        s.x[d] += s.v[d] * kDt;
        if ((s.x[d] < s.r && s.v[d] < 0.0) || (s.x[d] > kBox - s.r && s.v[d] > 0.0)) {
          s.v[d] = -s.v[d];
          auto* e = static_cast<Event*>(xmalloc(sizeof(Event)));
          e->next = nullptr;
          e->a = i;
          e->b = kWall;
          *tail = e;
          tail = &e->next;
          ++wall_hits;
        }
      }
    }

    // Broad phase: rebuild the grid.
    std::memset(grid, 0, kGrid * kGrid * kGrid * sizeof(CellEntry*));
    for (std::uint32_t i = kSpheres; i-- > 0;) {
      const int c = (cell_of(spheres[i].x[2]) * kGrid + cell_of(spheres[i].x[1])) * kGrid + cell_of(spheres[i].x[0]);
      auto* ce = static_cast<CellEntry*>(xmalloc(sizeof(CellEntry)));
      ce->sphere = i;
      ce->next = grid[c];
      grid[c] = ce;
    }

    // Narrow phase: every close pair becomes a contact event.
    for (std::uint32_t i = 0; i < kSpheres; ++i) {
      const Sphere& si = spheres[i];
      const int cx = cell_of(si.x[0]), cy = cell_of(si.x[1]), cz = cell_of(si.x[2]);
      for (int dz = -1; dz <= 1; ++dz) {
        for (int dy = -1; dy <= 1; ++dy) {
          for (int dx = -1; dx <= 1; ++dx) {
            const int x = cx + dx, y = cy + dy, z = cz + dz;
            if (x < 0 || y < 0 || z < 0 || x >= kGrid || y >= kGrid || z >= kGrid) continue;
            for (const CellEntry* ce = grid[(z * kGrid + y) * kGrid + x]; ce != nullptr; ce = ce->next) {
              const std::uint32_t j = ce->sphere;
              if (j <= i) continue;
              const Sphere& sj = spheres[j];
              const double d0 = si.x[0] - sj.x[0], d1 = si.x[1] - sj.x[1], d2 = si.x[2] - sj.x[2];
              const double reach = si.r + sj.r + kContactMargin;
              if (d0 * d0 + d1 * d1 + d2 * d2 < reach * reach) {
                auto* e = static_cast<Event*>(xmalloc(sizeof(Event)));
                e->next = nullptr;
                e->a = i;
                e->b = j;
                *tail = e;
                tail = &e->next;
                ++step_contacts;
              }
            }
          }
        }
      }
    }
    contacts += step_contacts;
    if (step_contacts > max_contacts_per_step) max_contacts_per_step = step_contacts;

    // Resolve the events in order, freeing them as we go.
    for (Event* e = events; e != nullptr;) {
      Event* next = e->next;
      if (e->b != kWall) {
        Sphere& a = spheres[e->a];
        Sphere& b = spheres[e->b];
        double n[3] = {a.x[0] - b.x[0], a.x[1] - b.x[1], a.x[2] - b.x[2]};
        const double dist2 = n[0] * n[0] + n[1] * n[1] + n[2] * n[2];
        const double touch = a.r + b.r;
        if (dist2 < touch * touch && dist2 > 0.0) {
          const double dist = std::sqrt(dist2);
          for (double& c : n) c /= dist;
          const double vrel = (a.v[0] - b.v[0]) * n[0] + (a.v[1] - b.v[1]) * n[1] + (a.v[2] - b.v[2]) * n[2];
          if (vrel < 0.0) {
            const double j = 2.0 * vrel / (a.m + b.m);
            for (int d = 0; d < 3; ++d) {
              a.v[d] -= j * b.m * n[d];
              b.v[d] += j * a.m * n[d];
            }
            ++collisions;
          }
        }
      }
      std::free(e);
      e = next;
    }
    for (int c = 0; c < kGrid * kGrid * kGrid; ++c) {
      for (CellEntry* ce = grid[c]; ce != nullptr;) {
        CellEntry* next = ce->next;
        std::free(ce);
        ce = next;
      }
    }

    if (step % 100 == 99 || step + 1 == opt.size) {
      const double drift = std::fabs(kinetic_energy(spheres) - e0) / e0;
      if (drift > max_drift) max_drift = drift;
      if (drift > 1e-9) {
        wl::fail(kProg, "energy not conserved at step %llu: relative drift %.3e",
                 static_cast<unsigned long long>(step + 1), drift);
      }
      for (std::uint32_t i = 0; i < kSpheres; ++i) {
        for (int d = 0; d < 3; ++d) {
          if (!(spheres[i].x[d] >= 0.0 && spheres[i].x[d] <= kBox)) {
            wl::fail(kProg, "sphere %u left the box at step %llu", i, static_cast<unsigned long long>(step + 1));
          }
        }
      }
    }
  }

  const double e1 = kinetic_energy(spheres);
  wl::Checksum check;
  check.add(collisions);
  check.add(wall_hits);
  check.add(contacts);
  double cx = 0.0, cy = 0.0, cz = 0.0, mass = 0.0;
  for (std::uint32_t i = 0; i < kSpheres; ++i) {
    const Sphere& s = spheres[i];
    for (int d = 0; d < 3; ++d) check.add_signed(std::llround(s.x[d] * 1e6));
    cx += s.m * s.x[0];
    cy += s.m * s.x[1];
    cz += s.m * s.x[2];
    mass += s.m;
  }
  std::free(grid);
  std::free(spheres);

  if (opt.verbose) {
    std::fprintf(stderr, "%s: %llu objects allocated, max %llu contacts in a step, max energy drift %.3e\n",
                 kProg, static_cast<unsigned long long>(g_allocs),
                 static_cast<unsigned long long>(max_contacts_per_step), max_drift);
  }
  std::printf("boxed spheres: %u spheres in a box of side %.1f, %llu steps of %.3f\n", kSpheres, kBox,
              static_cast<unsigned long long>(opt.size), kDt);
  std::printf("collisions: %llu, wall hits: %llu, contact events: %llu\n",
              static_cast<unsigned long long>(collisions), static_cast<unsigned long long>(wall_hits),
              static_cast<unsigned long long>(contacts));
  std::printf("kinetic energy: %.6f at start, %.6f at end (relative drift below 1e-9)\n", e0, e1);
  std::printf("centre of mass: %.4f %.4f %.4f\n", cx / mass, cy / mass, cz / mass);
  wl::print_result_hex(check.value());
  return 0;
}
