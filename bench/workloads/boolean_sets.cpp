// boolean_sets: imitates "espresso", the two-level boolean minimizer for
// PLAs, whose work is set operations on heap-allocated bit arrays.
//
// For each seeded single-output function of 6..14 inputs (an ON cover and a
// don't-care cover of random cubes) it computes the OFF cover by recursive
// Shannon complementation (cofactors, binate splitting, merge), expands every
// ON cube into a prime implicant against the OFF cover, and picks an
// irredundant subset of the primes with a greedy set cover over minterm bit
// sets (union, intersection, difference, containment, cardinality).  Checks:
// OFF is exactly the complement of ON + DC, and the minimized cover contains
// every ON minterm and no OFF minterm.
//
// Allocation behaviour: C style, malloc/realloc/free, as espresso's set
// package: every set is a malloc'd array of 32-bit words whose first word is
// its length.  Cubes are 8 bytes; minterm sets 12 bytes (6 inputs) to 2 KB
// (14 inputs); cube families are contiguous blocks grown with realloc, from
// 32 bytes to several KB.  Set operations return new sets, so temporaries
// are allocated and freed constantly; families live for one recursion level
// or one problem.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "workload_common.h"

namespace {

constexpr const char* kProg = "wl_boolean_sets";
constexpr int kMinInputs = 6;
constexpr int kMaxInputs = 14;
constexpr wl::ProgramInfo kInfo{kProg,
                                "espresso-like: complement, expand and irredundant cover of random "
                                "boolean functions with heap-allocated bit sets.",
                                "functions to minimize", 400, 1, 100000000};

std::uint64_t g_sets = 0;
std::uint64_t g_families = 0;

void* xmalloc(std::size_t bytes) { return wl::checked_malloc(kProg, bytes); }

// ---------------------------------------------------------------------------
// Sets: word 0 holds the number of data words, words 1..n the bits.

using pset = std::uint32_t*;

std::uint32_t set_words_for(std::uint32_t bits) { return (bits + 31) / 32; }

pset set_new(std::uint32_t bits) {
  const std::uint32_t n = set_words_for(bits);
  auto s = static_cast<pset>(xmalloc((n + 1) * sizeof(std::uint32_t)));
  ++g_sets;
  s[0] = n;
  std::memset(s + 1, 0, n * sizeof(std::uint32_t));
  return s;
}
void set_free(pset s) { std::free(s); }
std::uint32_t set_len(const std::uint32_t* s) { return s[0]; }

pset set_copy(const std::uint32_t* a) {
  auto s = static_cast<pset>(xmalloc((set_len(a) + 1) * sizeof(std::uint32_t)));
  ++g_sets;
  std::memcpy(s, a, (set_len(a) + 1) * sizeof(std::uint32_t));
  return s;
}

void set_insert(pset s, std::uint32_t bit) { s[1 + bit / 32] |= 1u << (bit % 32); }

pset set_or(const std::uint32_t* a, const std::uint32_t* b) {
  pset r = set_copy(a);
  for (std::uint32_t i = 1; i <= set_len(a); ++i) r[i] |= b[i];
  return r;
}
pset set_and(const std::uint32_t* a, const std::uint32_t* b) {
  pset r = set_copy(a);
  for (std::uint32_t i = 1; i <= set_len(a); ++i) r[i] &= b[i];
  return r;
}
pset set_diff(const std::uint32_t* a, const std::uint32_t* b) {
  pset r = set_copy(a);
  for (std::uint32_t i = 1; i <= set_len(a); ++i) r[i] &= ~b[i];
  return r;
}
// a is a subset of b
bool set_implies(const std::uint32_t* a, const std::uint32_t* b) {
  for (std::uint32_t i = 1; i <= set_len(a); ++i)
    if ((a[i] & ~b[i]) != 0) return false;
  return true;
}
bool set_disjoint(const std::uint32_t* a, const std::uint32_t* b) {
  for (std::uint32_t i = 1; i <= set_len(a); ++i)
    if ((a[i] & b[i]) != 0) return false;
  return true;
}
bool set_empty(const std::uint32_t* a) {
  for (std::uint32_t i = 1; i <= set_len(a); ++i)
    if (a[i] != 0) return false;
  return true;
}
bool set_equal(const std::uint32_t* a, const std::uint32_t* b) {
  return std::memcmp(a, b, (set_len(a) + 1) * sizeof(std::uint32_t)) == 0;
}
std::uint32_t set_ord(const std::uint32_t* a) {
  std::uint32_t n = 0;
  for (std::uint32_t i = 1; i <= set_len(a); ++i) n += static_cast<std::uint32_t>(__builtin_popcount(a[i]));
  return n;
}

// ---------------------------------------------------------------------------
// Cubes in positional notation: variable v uses bits 2v ("may be 0") and
// 2v+1 ("may be 1"); 11 = don't care, 01 = literal v', 10 = literal v.

struct Space {
  int inputs;
  std::uint32_t bits;  // 2 * inputs
};

std::uint32_t field(const std::uint32_t* c, int v) {
  const auto b = static_cast<std::uint32_t>(2 * v);
  return (c[1 + b / 32] >> (b % 32)) & 3u;
}
void set_field(pset c, int v, std::uint32_t f) {
  const auto b = static_cast<std::uint32_t>(2 * v);
  c[1 + b / 32] = (c[1 + b / 32] & ~(3u << (b % 32))) | (f << (b % 32));
}
pset cube_universe(const Space& sp) {
  pset c = set_new(sp.bits);
  for (int v = 0; v < sp.inputs; ++v) set_field(c, v, 3);
  return c;
}
bool cube_is_universe(const std::uint32_t* c, const Space& sp) {
  for (int v = 0; v < sp.inputs; ++v)
    if (field(c, v) != 3) return false;
  return true;
}
// Two cubes intersect iff no variable field becomes empty.
bool cubes_intersect(const std::uint32_t* a, const std::uint32_t* b, const Space& sp) {
  for (int v = 0; v < sp.inputs; ++v)
    if ((field(a, v) & field(b, v)) == 0) return false;
  return true;
}
int cube_literals(const std::uint32_t* c, const Space& sp) {
  int n = 0;
  for (int v = 0; v < sp.inputs; ++v) n += field(c, v) != 3 ? 1 : 0;
  return n;
}
bool cube_has_minterm(const std::uint32_t* c, std::uint32_t m, const Space& sp) {
  for (int v = 0; v < sp.inputs; ++v)
    if ((field(c, v) >> (m >> v & 1) & 1) == 0) return false;
  return true;
}

// ---------------------------------------------------------------------------
// Families of cubes: one contiguous block of sets, grown with realloc.

struct Family {
  std::uint32_t wsize;  // words per set, header included
  std::uint32_t count;
  std::uint32_t capacity;
  std::uint32_t* data;
};

Family* sf_new(std::uint32_t capacity, const Space& sp) {
  auto* f = static_cast<Family*>(xmalloc(sizeof(Family)));
  ++g_families;
  f->wsize = set_words_for(sp.bits) + 1;
  f->count = 0;
  f->capacity = capacity < 4 ? 4 : capacity;
  f->data = static_cast<std::uint32_t*>(xmalloc(f->capacity * f->wsize * sizeof(std::uint32_t)));
  return f;
}
void sf_free(Family* f) {
  std::free(f->data);
  std::free(f);
}
std::uint32_t* sf_get(Family* f, std::uint32_t i) { return f->data + i * f->wsize; }
const std::uint32_t* sf_get(const Family* f, std::uint32_t i) { return f->data + i * f->wsize; }
void sf_add(Family* f, const std::uint32_t* c) {
  if (f->count == f->capacity) {
    f->capacity *= 2;
    auto* grown = static_cast<std::uint32_t*>(std::realloc(f->data, f->capacity * f->wsize * sizeof(std::uint32_t)));
    if (grown == nullptr) wl::out_of_memory(kProg, f->capacity * f->wsize * sizeof(std::uint32_t));
    f->data = grown;
  }
  std::memcpy(sf_get(f, f->count), c, f->wsize * sizeof(std::uint32_t));
  f->count++;
}
Family* sf_union(const Family* a, const Family* b, const Space& sp) {
  Family* r = sf_new(a->count + b->count, sp);
  for (std::uint32_t i = 0; i < a->count; ++i) sf_add(r, sf_get(a, i));
  for (std::uint32_t i = 0; i < b->count; ++i) sf_add(r, sf_get(b, i));
  return r;
}

// Single-cube containment: drops cubes contained in another (and duplicates).
Family* sf_contain(const Family* f, const Space& sp) {
  Family* r = sf_new(8, sp);  // grows with realloc
  for (std::uint32_t i = 0; i < f->count; ++i) {
    const std::uint32_t* c = sf_get(f, i);
    bool contained = false;
    for (std::uint32_t j = 0; j < f->count && !contained; ++j) {
      if (j == i) continue;
      const std::uint32_t* d = sf_get(f, j);
      if (set_implies(c, d) && (!set_equal(c, d) || j < i)) contained = true;
    }
    if (!contained) sf_add(r, c);
  }
  return r;
}

// Cofactor with respect to variable v taking value val.
Family* cofactor(const Family* f, int v, std::uint32_t val, const Space& sp) {
  Family* r = sf_new(f->count / 2, sp);  // grows with realloc if needed
  pset tmp = set_new(sp.bits);
  for (std::uint32_t i = 0; i < f->count; ++i) {
    const std::uint32_t* c = sf_get(f, i);
    if ((field(c, v) >> val & 1) == 0) continue;
    std::memcpy(tmp, c, f->wsize * sizeof(std::uint32_t));
    set_field(tmp, v, 3);
    sf_add(r, tmp);
  }
  set_free(tmp);
  return r;
}

// Complement by recursive Shannon expansion on the most binate variable.
Family* complement(const Family* f, const Space& sp) {
  if (f->count == 0) {
    Family* r = sf_new(1, sp);
    pset u = cube_universe(sp);
    sf_add(r, u);
    set_free(u);
    return r;
  }
  for (std::uint32_t i = 0; i < f->count; ++i) {
    if (cube_is_universe(sf_get(f, i), sp)) return sf_new(0, sp);
  }
  if (f->count == 1) {
    // De Morgan: one cube per literal, with that literal complemented.
    const std::uint32_t* c = sf_get(f, 0);
    Family* r = sf_new(static_cast<std::uint32_t>(sp.inputs), sp);
    for (int v = 0; v < sp.inputs; ++v) {
      const std::uint32_t fv = field(c, v);
      if (fv == 3) continue;
      pset d = cube_universe(sp);
      set_field(d, v, 3 & ~fv);
      sf_add(r, d);
      set_free(d);
    }
    return r;
  }
  // Most binate variable (ties: most literals, then lowest index).
  int best = -1;
  std::uint32_t best_binate = 0, best_total = 0;
  for (int v = 0; v < sp.inputs; ++v) {
    std::uint32_t zeros = 0, ones = 0;
    for (std::uint32_t i = 0; i < f->count; ++i) {
      const std::uint32_t fv = field(sf_get(f, i), v);
      zeros += fv == 1 ? 1 : 0;
      ones += fv == 2 ? 1 : 0;
    }
    const std::uint32_t binate = zeros < ones ? zeros : ones;
    const std::uint32_t total = zeros + ones;
    if (total > 0 && (best < 0 || binate > best_binate || (binate == best_binate && total > best_total))) {
      best = v;
      best_binate = binate;
      best_total = total;
    }
  }
  Family* f0 = cofactor(f, best, 0, sp);
  Family* f1 = cofactor(f, best, 1, sp);
  Family* c0 = complement(f0, sp);
  Family* c1 = complement(f1, sp);
  sf_free(f0);
  sf_free(f1);
  // Merge: x' c0 + x c1, with cubes common to both sides kept once (x free).
  Family* r = sf_new(c0->count + c1->count, sp);
  auto* used = static_cast<bool*>(std::calloc(c1->count + 1, sizeof(bool)));
  if (used == nullptr) wl::out_of_memory(kProg, c1->count + 1);
  pset tmp = set_new(sp.bits);
  for (std::uint32_t i = 0; i < c0->count; ++i) {
    const std::uint32_t* a = sf_get(c0, i);
    std::uint32_t match = c1->count;
    for (std::uint32_t j = 0; j < c1->count; ++j) {
      if (!used[j] && set_equal(a, sf_get(c1, j))) {
        match = j;
        break;
      }
    }
    std::memcpy(tmp, a, r->wsize * sizeof(std::uint32_t));
    if (match < c1->count) {
      used[match] = true;
    } else {
      set_field(tmp, best, 1);
    }
    sf_add(r, tmp);
  }
  for (std::uint32_t j = 0; j < c1->count; ++j) {
    if (used[j]) continue;
    std::memcpy(tmp, sf_get(c1, j), r->wsize * sizeof(std::uint32_t));
    set_field(tmp, best, 2);
    sf_add(r, tmp);
  }
  set_free(tmp);
  std::free(used);
  sf_free(c0);
  sf_free(c1);
  if (r->count > 8) {
    Family* small = sf_contain(r, sp);
    sf_free(r);
    r = small;
  }
  return r;
}

// Minterms of a cover as a bit set of 2^inputs bits.
pset cover_minterms(const Family* f, const Space& sp) {
  const std::uint32_t n = 1u << sp.inputs;
  pset s = set_new(n);
  for (std::uint32_t i = 0; i < f->count; ++i) {
    pset one = set_new(n);
    for (std::uint32_t m = 0; m < n; ++m)
      if (cube_has_minterm(sf_get(f, i), m, sp)) set_insert(one, m);
    pset u = set_or(s, one);
    set_free(s);
    set_free(one);
    s = u;
  }
  return s;
}

pset cube_minterms(const std::uint32_t* c, const Space& sp) {
  const std::uint32_t n = 1u << sp.inputs;
  pset s = set_new(n);
  for (std::uint32_t m = 0; m < n; ++m)
    if (cube_has_minterm(c, m, sp)) set_insert(s, m);
  return s;
}

Family* random_cover(wl::Rng& rng, std::uint32_t cubes, int care_num, const Space& sp) {
  Family* f = sf_new(cubes, sp);
  for (std::uint32_t i = 0; i < cubes; ++i) {
    pset c = cube_universe(sp);
    for (int v = 0; v < sp.inputs; ++v) {
      if (rng.below(8) < static_cast<std::uint64_t>(care_num)) set_field(c, v, rng.below(2) == 0 ? 1u : 2u);
    }
    sf_add(f, c);
    set_free(c);
  }
  return f;
}

struct Totals {
  std::uint64_t on_cubes = 0, off_cubes = 0, primes = 0, result_cubes = 0, result_literals = 0;
};

void minimize(wl::Rng& rng, std::uint64_t index, Totals& tot, wl::Checksum& check) {
  Space sp;
  sp.inputs = kMinInputs + static_cast<int>(rng.below(kMaxInputs - kMinInputs + 1));
  sp.bits = static_cast<std::uint32_t>(2 * sp.inputs);
  const auto on_count = static_cast<std::uint32_t>(2 * sp.inputs + rng.below(static_cast<std::uint64_t>(2 * sp.inputs)));
  Family* on = random_cover(rng, on_count, 4, sp);
  Family* dc = random_cover(rng, on_count / 4 + 1, 6, sp);

  // OFF = complement(ON + DC).
  Family* on_dc = sf_union(on, dc, sp);
  Family* off = complement(on_dc, sp);
  pset on_dc_set = cover_minterms(on_dc, sp);
  pset off_set = cover_minterms(off, sp);
  pset dc_set = cover_minterms(dc, sp);
  pset on_set = cover_minterms(on, sp);
  pset care_on = set_diff(on_set, dc_set);  // minterms that must be covered
  {
    pset all = set_or(on_dc_set, off_set);
    const bool exact = set_disjoint(on_dc_set, off_set) && set_ord(all) == (1u << sp.inputs);
    set_free(all);
    if (!exact) wl::fail(kProg, "problem %llu: OFF cover is not the complement of ON + DC",
                         static_cast<unsigned long long>(index));
  }

  // EXPAND every ON cube (largest first) into a prime against OFF.
  Family* primes = sf_new(on->count, sp);
  {
    auto* order = static_cast<std::uint32_t*>(xmalloc(on->count * sizeof(std::uint32_t)));
    for (std::uint32_t i = 0; i < on->count; ++i) order[i] = i;
    for (std::uint32_t i = 1; i < on->count; ++i) {  // insertion sort by literal count
      const std::uint32_t x = order[i];
      std::uint32_t j = i;
      while (j > 0 && cube_literals(sf_get(on, order[j - 1]), sp) > cube_literals(sf_get(on, x), sp)) {
        order[j] = order[j - 1];
        --j;
      }
      order[j] = x;
    }
    for (std::uint32_t k = 0; k < on->count; ++k) {
      const std::uint32_t* c = sf_get(on, order[k]);
      bool covered = false;
      for (std::uint32_t p = 0; p < primes->count && !covered; ++p) covered = set_implies(c, sf_get(primes, p));
      if (covered) continue;
      pset cube = set_copy(c);
      const int start = static_cast<int>(rng.below(static_cast<std::uint64_t>(sp.inputs)));
      for (int t = 0; t < sp.inputs; ++t) {
        const int v = (start + t) % sp.inputs;
        const std::uint32_t old = field(cube, v);
        if (old == 3) continue;
        set_field(cube, v, 3);
        bool hits_off = false;
        for (std::uint32_t o = 0; o < off->count && !hits_off; ++o) hits_off = cubes_intersect(cube, sf_get(off, o), sp);
        if (hits_off) set_field(cube, v, old);
      }
      sf_add(primes, cube);
      set_free(cube);
    }
    std::free(order);
    Family* unique = sf_contain(primes, sp);
    sf_free(primes);
    primes = unique;
  }

  // IRREDUNDANT: greedy set cover of the care ON minterms by the primes.
  auto** covers = static_cast<pset*>(xmalloc(primes->count * sizeof(pset)));
  for (std::uint32_t p = 0; p < primes->count; ++p) {
    pset m = cube_minterms(sf_get(primes, p), sp);
    covers[p] = set_and(m, care_on);
    if (!set_implies(m, on_dc_set)) wl::fail(kProg, "problem %llu: a prime covers an OFF minterm",
                                             static_cast<unsigned long long>(index));
    set_free(m);
  }
  Family* result = sf_new(primes->count, sp);
  pset uncovered = set_copy(care_on);
  pset covered_all = set_new(1u << sp.inputs);
  while (!set_empty(uncovered)) {
    std::uint32_t best = primes->count, best_gain = 0;
    for (std::uint32_t p = 0; p < primes->count; ++p) {
      pset gain = set_and(covers[p], uncovered);
      const std::uint32_t g = set_ord(gain);
      set_free(gain);
      if (g > best_gain) {
        best_gain = g;
        best = p;
      }
    }
    if (best == primes->count) wl::fail(kProg, "problem %llu: primes do not cover ON",
                                        static_cast<unsigned long long>(index));
    sf_add(result, sf_get(primes, best));
    pset rest = set_diff(uncovered, covers[best]);
    set_free(uncovered);
    uncovered = rest;
    pset all = set_or(covered_all, covers[best]);
    set_free(covered_all);
    covered_all = all;
  }
  // Verify the result: covers every care ON minterm, nothing of OFF.
  {
    pset res = cover_minterms(result, sp);
    const bool ok = set_implies(care_on, res) && set_disjoint(res, off_set) && set_implies(care_on, covered_all);
    set_free(res);
    if (!ok) wl::fail(kProg, "problem %llu: minimized cover is not equivalent", static_cast<unsigned long long>(index));
  }

  tot.on_cubes += on->count;
  tot.off_cubes += off->count;
  tot.primes += primes->count;
  tot.result_cubes += result->count;
  check.add(static_cast<std::uint64_t>(sp.inputs));
  for (std::uint32_t i = 0; i < result->count; ++i) {
    tot.result_literals += static_cast<std::uint64_t>(cube_literals(sf_get(result, i), sp));
    check.add(sf_get(result, i)[1]);
  }
  check.add(off->count);

  for (std::uint32_t p = 0; p < primes->count; ++p) set_free(covers[p]);
  std::free(covers);
  set_free(uncovered);
  set_free(covered_all);
  set_free(care_on);
  set_free(on_set);
  set_free(dc_set);
  set_free(off_set);
  set_free(on_dc_set);
  sf_free(result);
  sf_free(primes);
  sf_free(off);
  sf_free(on_dc);
  sf_free(dc);
  sf_free(on);
}

}  // namespace

int main(int argc, char** argv) {
  auto [opt, rng] = wl::start(argc, argv, kInfo);
  Totals tot;
  wl::Checksum check;
  for (std::uint64_t i = 0; i < opt.size; ++i) minimize(rng, i, tot, check);

  if (opt.verbose) {
    std::fprintf(stderr, "%s: %llu sets and %llu families allocated\n", kProg,
                 static_cast<unsigned long long>(g_sets), static_cast<unsigned long long>(g_families));
  }
  std::printf("boolean sets: %llu functions of %d..%d inputs minimized and verified\n",
              static_cast<unsigned long long>(opt.size), kMinInputs, kMaxInputs);
  std::printf("ON cubes: %llu, OFF cubes (complement): %llu, primes: %llu\n",
              static_cast<unsigned long long>(tot.on_cubes), static_cast<unsigned long long>(tot.off_cubes),
              static_cast<unsigned long long>(tot.primes));
  std::printf("minimized covers: %llu cubes, %llu literals\n", static_cast<unsigned long long>(tot.result_cubes),
              static_cast<unsigned long long>(tot.result_literals));
  wl::print_result_hex(check.value());
  return 0;
}
