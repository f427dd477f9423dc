// cfrac: imitates the "cfrac" benchmark (continued-fraction factorization of
// Morrison and Brillhart, as in the C program used by the allocator papers).
//
// Factors seeded semiprimes N = p*q (p, q of nearly equal size) with CFRAC:
// expand sqrt(kN) as a continued fraction, keep the convergent numerators A
// whose residues Q are smooth over a factor base, combine them with Gaussian
// elimination over GF(2) into A^2 = Y^2 (mod N), and take gcd(A - Y, N).
// Every found factorization is verified (p*q == N, both factors match the
// primes the composite was made of), and every smooth relation is checked
// (A^2 == +-Q mod N).
//
// Allocation behaviour: C style, malloc/free only.  All arithmetic goes
// through a heap-allocated, immutable arbitrary-precision integer: an array of
// 16-bit digits whose first element is the digit count, so a number of n
// digits is a malloc of 2n+2 bytes (2 bytes for zero, 4-22 bytes for the
// values of a run).  Every operation allocates its result and the
// intermediate values are freed right away: very many tiny, very short-lived
// objects, plus a few longer-lived relation records and bit vectors for the
// elimination.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "workload_common.h"

namespace {

constexpr const char* kProg = "wl_cfrac";
constexpr wl::ProgramInfo kInfo{kProg,
                                "cfrac: continued-fraction factorization of seeded semiprimes "
                                "with heap-allocated bignums.",
                                "number of composites to factor", 80, 1, 100000};

// ---------------------------------------------------------------------------
// Arbitrary-precision non-negative integers.

using digit = std::uint16_t;
using Big = digit*;  // b[0] = n digits, b[1..n] little-endian, b[n] != 0 (zero has n = 0)
constexpr int kDigitBits = 16;
constexpr std::uint32_t kBase = 1u << kDigitBits;

std::uint64_t g_big_allocs = 0;

void* xmalloc(std::size_t bytes) { return wl::checked_malloc(kProg, bytes); }

Big big_alloc(std::size_t n) {
  ++g_big_allocs;
  auto b = static_cast<Big>(xmalloc((n + 1) * sizeof(digit)));
  b[0] = static_cast<digit>(n);
  return b;
}

void big_free(Big b) { std::free(b); }

std::size_t len(const digit* b) { return b[0]; }

// Drops leading zero digits (the block keeps its size).
Big big_norm(Big b) {
  std::size_t n = b[0];
  while (n > 0 && b[n] == 0) --n;
  b[0] = static_cast<digit>(n);
  return b;
}

Big big_from_u64(std::uint64_t v) {
  std::size_t n = 0;
  for (std::uint64_t t = v; t != 0; t >>= kDigitBits) ++n;
  Big b = big_alloc(n);
  for (std::size_t i = 1; i <= n; ++i) {
    b[i] = static_cast<digit>(v & (kBase - 1));
    v >>= kDigitBits;
  }
  return b;
}

Big big_copy(const digit* a) {
  Big b = big_alloc(len(a));
  std::memcpy(b + 1, a + 1, len(a) * sizeof(digit));
  return b;
}

bool big_is_zero(const digit* a) { return len(a) == 0; }
bool big_is_one(const digit* a) { return len(a) == 1 && a[1] == 1; }

// Value as u64 if it fits (at most 4 digits).
bool big_to_u64(const digit* a, std::uint64_t& out) {
  if (len(a) > 4) return false;
  out = 0;
  for (std::size_t i = len(a); i >= 1; --i) out = (out << kDigitBits) | a[i];
  return true;
}

std::size_t big_bits(const digit* a) {
  if (len(a) == 0) return 0;
  std::size_t bits = (len(a) - 1) * kDigitBits;
  for (std::uint32_t top = a[len(a)]; top != 0; top >>= 1) ++bits;
  return bits;
}

int big_cmp(const digit* a, const digit* b) {
  if (len(a) != len(b)) return len(a) < len(b) ? -1 : 1;
  for (std::size_t i = len(a); i >= 1; --i) {
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  }
  return 0;
}

Big big_add(const digit* a, const digit* b) {
  if (len(a) < len(b)) {
    const digit* t = a;
    a = b;
    b = t;
  }
  Big r = big_alloc(len(a) + 1);
  std::uint32_t carry = 0;
  for (std::size_t i = 1; i <= len(a); ++i) {
    const std::uint32_t s = a[i] + (i <= len(b) ? b[i] : 0u) + carry;
    r[i] = static_cast<digit>(s);
    carry = s >> kDigitBits;
  }
  r[len(a) + 1] = static_cast<digit>(carry);
  return big_norm(r);
}

// a - b, requires a >= b.
Big big_sub(const digit* a, const digit* b) {
  Big r = big_alloc(len(a));
  std::int32_t borrow = 0;
  for (std::size_t i = 1; i <= len(a); ++i) {
    std::int32_t s = static_cast<std::int32_t>(a[i]) - (i <= len(b) ? b[i] : 0) - borrow;
    borrow = s < 0 ? 1 : 0;
    if (s < 0) s += static_cast<std::int32_t>(kBase);
    r[i] = static_cast<digit>(s);
  }
  if (borrow != 0) wl::fail(kProg, "internal error: negative subtraction");
  return big_norm(r);
}

Big big_mul(const digit* a, const digit* b) {
  if (big_is_zero(a) || big_is_zero(b)) return big_alloc(0);
  const std::size_t n = len(a) + len(b);
  Big r = big_alloc(n);
  std::memset(r + 1, 0, n * sizeof(digit));
  for (std::size_t i = 1; i <= len(a); ++i) {
    std::uint32_t carry = 0;
    for (std::size_t j = 1; j <= len(b); ++j) {
      const std::uint32_t t = static_cast<std::uint32_t>(a[i]) * b[j] + r[i + j - 1] + carry;
      r[i + j - 1] = static_cast<digit>(t);
      carry = t >> kDigitBits;
    }
    r[i + len(b)] = static_cast<digit>(carry);
  }
  return big_norm(r);
}

Big big_mul_small(const digit* a, std::uint32_t m) {
  Big r = big_alloc(len(a) + 2);
  std::uint64_t carry = 0;
  for (std::size_t i = 1; i <= len(a); ++i) {
    const std::uint64_t t = static_cast<std::uint64_t>(a[i]) * m + carry;
    r[i] = static_cast<digit>(t);
    carry = t >> kDigitBits;
  }
  r[len(a) + 1] = static_cast<digit>(carry);
  r[len(a) + 2] = static_cast<digit>(carry >> kDigitBits);
  return big_norm(r);
}

// a mod m for 0 < m < 2^16, without allocating.
std::uint32_t big_mod_small(const digit* a, std::uint32_t m) {
  std::uint32_t r = 0;
  for (std::size_t i = len(a); i >= 1; --i) r = ((r << kDigitBits) | a[i]) % m;
  return r;
}

// q = a / m, returns a mod m; 0 < m < 2^16.
std::uint32_t big_divmod_small(const digit* a, std::uint32_t m, Big* q) {
  Big r = big_alloc(len(a));
  std::uint32_t rem = 0;
  for (std::size_t i = len(a); i >= 1; --i) {
    const std::uint32_t cur = (rem << kDigitBits) | a[i];
    r[i] = static_cast<digit>(cur / m);
    rem = cur % m;
  }
  *q = big_norm(r);
  return rem;
}

// Knuth's algorithm D.  q and/or r may be null when not wanted.
void big_divmod(const digit* a, const digit* b, Big* q, Big* r) {
  if (big_is_zero(b)) wl::fail(kProg, "internal error: division by zero");
  if (big_cmp(a, b) < 0) {
    if (q != nullptr) *q = big_alloc(0);
    if (r != nullptr) *r = big_copy(a);
    return;
  }
  if (len(b) == 1) {
    Big qq = nullptr;
    const std::uint32_t rem = big_divmod_small(a, b[1], &qq);
    if (q != nullptr) {
      *q = qq;
    } else {
      big_free(qq);
    }
    if (r != nullptr) *r = big_from_u64(rem);
    return;
  }
  const std::size_t n = len(b);
  const std::size_t m = len(a) - n;
  int shift = 0;
  while ((static_cast<std::uint32_t>(b[n]) << shift & 0x8000u) == 0) ++shift;
  // Normalized copies, 0-based: u has len(a)+1 digits, v has n digits.
  auto* u = static_cast<digit*>(xmalloc((len(a) + 1) * sizeof(digit)));
  auto* v = static_cast<digit*>(xmalloc(n * sizeof(digit)));
  {
    std::uint32_t carry = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t t = (static_cast<std::uint32_t>(b[i + 1]) << shift) | carry;
      v[i] = static_cast<digit>(t);
      carry = t >> kDigitBits;
    }
    carry = 0;
    for (std::size_t i = 0; i < len(a); ++i) {
      const std::uint32_t t = (static_cast<std::uint32_t>(a[i + 1]) << shift) | carry;
      u[i] = static_cast<digit>(t);
      carry = t >> kDigitBits;
    }
    u[len(a)] = static_cast<digit>(carry);
  }
  Big qq = big_alloc(m + 1);
  for (std::size_t jj = m + 1; jj-- > 0;) {
    const std::size_t j = jj;
    const std::uint32_t num = (static_cast<std::uint32_t>(u[j + n]) << kDigitBits) | u[j + n - 1];
    std::uint32_t qhat = num / v[n - 1];
    std::uint32_t rhat = num % v[n - 1];
    while (qhat >= kBase ||
           static_cast<std::uint64_t>(qhat) * v[n - 2] >
               ((static_cast<std::uint64_t>(rhat) << kDigitBits) | u[j + n - 2])) {
      --qhat;
      rhat += v[n - 1];
      if (rhat >= kBase) break;
    }
    // u[j..j+n] -= qhat * v
    std::int64_t borrow = 0;
    std::uint64_t carry = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t p = static_cast<std::uint64_t>(qhat) * v[i] + carry;
      carry = p >> kDigitBits;
      const std::int64_t t = static_cast<std::int64_t>(u[i + j]) - borrow -
                             static_cast<std::int64_t>(p & (kBase - 1));
      u[i + j] = static_cast<digit>(t & (kBase - 1));
      borrow = t < 0 ? 1 : 0;
    }
    const std::int64_t t = static_cast<std::int64_t>(u[j + n]) - borrow - static_cast<std::int64_t>(carry);
    u[j + n] = static_cast<digit>(t & (kBase - 1));
    if (t < 0) {
      // qhat was one too large: add v back.
      --qhat;
      std::uint32_t c = 0;
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint32_t s = static_cast<std::uint32_t>(u[i + j]) + v[i] + c;
        u[i + j] = static_cast<digit>(s);
        c = s >> kDigitBits;
      }
      u[j + n] = static_cast<digit>(u[j + n] + c);
    }
    qq[j + 1] = static_cast<digit>(qhat);
  }
  if (q != nullptr) {
    *q = big_norm(qq);
  } else {
    big_free(qq);
  }
  if (r != nullptr) {
    Big rr = big_alloc(n);
    for (std::size_t i = 0; i < n; ++i) {
      // u has len(a) + 1 >= n + 1 digits, so u[i + 1] exists.
      const std::uint32_t two = (static_cast<std::uint32_t>(u[i + 1]) << kDigitBits) | u[i];
      rr[i + 1] = static_cast<digit>(two >> shift);
    }
    *r = big_norm(rr);
  }
  std::free(u);
  std::free(v);
}

Big big_mod(const digit* a, const digit* b) {
  Big r = nullptr;
  big_divmod(a, b, nullptr, &r);
  return r;
}

Big big_mulmod(const digit* a, const digit* b, const digit* n) {
  Big p = big_mul(a, b);
  Big r = big_mod(p, n);
  big_free(p);
  return r;
}

// Floor of the square root (Newton's iteration).
Big big_isqrt(const digit* a) {
  if (big_is_zero(a)) return big_alloc(0);
  // Start above the root: 2^ceil(bits/2).
  const std::size_t half = (big_bits(a) + 1) / 2;
  Big x = big_alloc(half / kDigitBits + 1);
  std::memset(x + 1, 0, len(x) * sizeof(digit));
  x[half / kDigitBits + 1] = static_cast<digit>(1u << (half % kDigitBits));
  for (;;) {
    Big q = nullptr;
    big_divmod(a, x, &q, nullptr);
    Big s = big_add(x, q);
    big_free(q);
    Big y = nullptr;
    big_divmod_small(s, 2, &y);
    big_free(s);
    if (big_cmp(y, x) >= 0) {
      big_free(y);
      return x;
    }
    big_free(x);
    x = y;
  }
}

Big big_gcd(const digit* a0, const digit* b0) {
  Big a = big_copy(a0);
  Big b = big_copy(b0);
  while (!big_is_zero(b)) {
    Big r = big_mod(a, b);
    big_free(a);
    a = b;
    b = r;
  }
  big_free(b);
  return a;
}

void big_print(std::FILE* out, const digit* a) {
  // Decimal conversion by repeated division (allocates, like everything else).
  char buf[128];
  std::size_t pos = sizeof(buf);
  buf[--pos] = '\0';
  Big t = big_copy(a);
  do {
    Big q = nullptr;
    const std::uint32_t d = big_divmod_small(t, 10, &q);
    big_free(t);
    t = q;
    buf[--pos] = static_cast<char>('0' + d);
  } while (!big_is_zero(t) && pos > 0);
  big_free(t);
  std::fputs(buf + pos, out);
}

// ---------------------------------------------------------------------------
// Small-number helpers (no allocation).

std::uint64_t mulmod64(std::uint64_t a, std::uint64_t b, std::uint64_t m) {
  return static_cast<std::uint64_t>(static_cast<wl::u128>(a) * b % m);
}

std::uint64_t powmod64(std::uint64_t b, std::uint64_t e, std::uint64_t m) {
  std::uint64_t r = 1 % m;
  b %= m;
  while (e != 0) {
    if ((e & 1) != 0) r = mulmod64(r, b, m);
    b = mulmod64(b, b, m);
    e >>= 1;
  }
  return r;
}

constexpr std::uint64_t kSmallPrimes[] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37};

// Deterministic Miller-Rabin (these bases are exact for all 64-bit n).
bool is_prime_u64(std::uint64_t n) {
  if (n < 2) return false;
  for (std::uint64_t p : kSmallPrimes) {
    if (n % p == 0) return n == p;
  }
  std::uint64_t d = n - 1;
  int s = 0;
  while ((d & 1) == 0) {
    d >>= 1;
    ++s;
  }
  for (std::uint64_t a : kSmallPrimes) {
    std::uint64_t x = powmod64(a, d, n);
    if (x == 1 || x == n - 1) continue;
    bool composite = true;
    for (int i = 1; i < s; ++i) {
      x = mulmod64(x, x, n);
      if (x == n - 1) {
        composite = false;
        break;
      }
    }
    if (composite) return false;
  }
  return true;
}

std::uint64_t random_prime(wl::Rng& rng, int bits) {
  for (;;) {
    const std::uint64_t lo = std::uint64_t{1} << (bits - 1);
    std::uint64_t c = lo | (rng.next() & (lo - 1)) | 1;
    if (is_prime_u64(c)) return c;
  }
}

// Legendre symbol (a/p) for odd prime p: 1, p-1 (i.e. -1) or 0.
std::uint32_t legendre(std::uint32_t a, std::uint32_t p) {
  return static_cast<std::uint32_t>(powmod64(a, (p - 1) / 2, p));
}

// ---------------------------------------------------------------------------
// CFRAC.

struct Relation {
  Big a;                 // A_{i-1} mod N
  std::uint16_t* exps;   // pairs (factor-base index, exponent), malloc'd
  std::uint32_t nexps;   // number of pairs
  bool negative;         // residue is -Q
};

struct Stats {
  std::uint64_t iterations = 0;
  std::uint64_t relations = 0;
  std::uint64_t dependencies_tried = 0;
  std::uint64_t multiplier_switches = 0;
};

// Factor-base size for an N of the given bit length (integers only, so the
// choice cannot depend on libm rounding).
std::size_t factor_base_size(std::size_t bits) {
  const std::size_t s = bits * bits / 40;
  return s < 16 ? 16 : s;
}

// Tries to factor n with multiplier k.  Returns a nontrivial factor or null.
Big cfrac_try(const digit* n, std::uint32_t k, Stats& st) {
  const std::size_t nbits = big_bits(n);
  Big kn = big_mul_small(n, k);
  Big g = big_isqrt(kn);

  // Factor base: -1 (index 0), 2, then odd primes p with (kN/p) != -1.
  const std::size_t fb_target = factor_base_size(nbits);
  auto* fb = static_cast<std::uint32_t*>(xmalloc((fb_target + 1) * sizeof(std::uint32_t)));
  std::size_t fb_n = 0;
  fb[fb_n++] = 0;  // stands for -1
  fb[fb_n++] = 2;
  for (std::uint32_t p = 3; fb_n <= fb_target && p < 65536; p += 2) {
    bool prime = true;
    for (std::uint32_t d = 3; d * d <= p; d += 2) {
      if (p % d == 0) {
        prime = false;
        break;
      }
    }
    if (!prime) continue;
    const std::uint32_t r = big_mod_small(kn, p);
    if (r == 0 || legendre(r, p) == 1) fb[fb_n++] = p;
  }
  const std::size_t cols = fb_n;
  const std::size_t col_words = (cols + 63) / 64;

  std::size_t cap = cols + 64;
  auto* rels = static_cast<Relation*>(xmalloc(cap * sizeof(Relation)));
  std::size_t nrels = 0;
  std::size_t wanted = cols + 8;
  const std::uint64_t max_iterations = 400000ULL + 2000ULL * cols * cols / 16;

  // Continued fraction state at step i.
  Big P = big_alloc(0);      // P_i
  Big Q = big_from_u64(1);   // Q_i
  Big a = big_copy(g);       // a_i
  Big A1 = big_from_u64(1);  // A_{i-1}
  Big A2 = big_alloc(0);     // A_{i-2}
  auto* pairs = static_cast<std::uint16_t*>(xmalloc(2 * cols * sizeof(std::uint16_t)));
  Big factor = nullptr;
  std::uint64_t i = 0;
  std::uint64_t local_iterations = 0;

  while (factor == nullptr && local_iterations < max_iterations) {
    // A_i = a_i A_{i-1} + A_{i-2} mod N.
    {
      Big t = big_mul(a, A1);
      Big s = big_add(t, A2);
      big_free(t);
      Big Ai = big_mod(s, n);
      big_free(s);
      big_free(A2);
      A2 = A1;
      A1 = Ai;
    }
    // P_{i+1} = a_i Q_i - P_i; Q_{i+1} = (kN - P_{i+1}^2) / Q_i; a_{i+1} = (g + P_{i+1}) / Q_{i+1}.
    {
      Big t = big_mul(a, Q);
      Big Pn = big_sub(t, P);
      big_free(t);
      Big sq = big_mul(Pn, Pn);
      Big diff = big_sub(kn, sq);
      big_free(sq);
      Big Qn = nullptr;
      big_divmod(diff, Q, &Qn, nullptr);
      big_free(diff);
      Big s = big_add(g, Pn);
      Big an = nullptr;
      big_divmod(s, Qn, &an, nullptr);
      big_free(s);
      big_free(P);
      big_free(Q);
      big_free(a);
      P = Pn;
      Q = Qn;
      a = an;
    }
    ++i;
    ++local_iterations;
    ++st.iterations;
    // Relation candidate: A_{i-1}^2 == (-1)^i Q_i (mod N).
    if (big_is_one(Q) && (i & 1) == 0) {
      // End of a period: the expansion repeats, this multiplier is exhausted.
      break;
    }
    std::uint32_t npairs = 0;
    Big rem = big_copy(Q);
    for (std::size_t f = 1; f < cols && !big_is_one(rem); ++f) {
      const std::uint32_t p = fb[f];
      if (big_mod_small(rem, p) != 0) continue;
      std::uint32_t e = 0;
      for (;;) {
        Big qt = nullptr;
        const std::uint32_t r = big_divmod_small(rem, p, &qt);
        if (r != 0) {
          big_free(qt);
          break;
        }
        big_free(rem);
        rem = qt;
        ++e;
      }
      pairs[2 * npairs] = static_cast<std::uint16_t>(f);
      pairs[2 * npairs + 1] = static_cast<std::uint16_t>(e);
      ++npairs;
    }
    const bool smooth = big_is_one(rem);
    big_free(rem);
    if (!smooth) continue;

    const bool negative = (i & 1) != 0;
    // Self-check of the arithmetic: A^2 mod N equals +Q or N - Q.
    {
      Big lhs = big_mulmod(A1, A1, n);
      Big qm = big_mod(Q, n);
      Big rhs = negative ? (big_is_zero(qm) ? big_alloc(0) : big_sub(n, qm)) : big_copy(qm);
      const bool ok = big_cmp(lhs, rhs) == 0;
      big_free(lhs);
      big_free(qm);
      big_free(rhs);
      if (!ok) wl::fail(kProg, "relation check failed: A^2 != (-1)^i Q (mod N) at step %llu",
                        static_cast<unsigned long long>(i));
    }
    if (nrels == cap) {
      cap *= 2;
      auto* grown = static_cast<Relation*>(std::realloc(rels, cap * sizeof(Relation)));
      if (grown == nullptr) wl::out_of_memory(kProg, cap * sizeof(Relation));
      rels = grown;
    }
    Relation& rel = rels[nrels++];
    rel.a = big_copy(A1);
    rel.nexps = npairs;
    rel.exps = static_cast<std::uint16_t*>(xmalloc((2 * npairs + 1) * sizeof(std::uint16_t)));
    std::memcpy(rel.exps, pairs, 2 * npairs * sizeof(std::uint16_t));
    rel.negative = negative;
    ++st.relations;
    if (nrels < wanted) continue;

    // Gaussian elimination over GF(2): rows are relations, each with its
    // exponent-parity vector and a history vector saying which original
    // relations were combined into it.
    const std::size_t hist_words = (nrels + 63) / 64;
    const std::size_t row_words = col_words + hist_words;
    auto** rows = static_cast<std::uint64_t**>(xmalloc(nrels * sizeof(std::uint64_t*)));
    for (std::size_t r = 0; r < nrels; ++r) {
      rows[r] = static_cast<std::uint64_t*>(std::calloc(row_words, sizeof(std::uint64_t)));
      if (rows[r] == nullptr) wl::out_of_memory(kProg, row_words * sizeof(std::uint64_t));
      if (rels[r].negative) rows[r][0] |= 1;
      for (std::uint32_t e = 0; e < rels[r].nexps; ++e) {
        if ((rels[r].exps[2 * e + 1] & 1) != 0) {
          const std::size_t c = rels[r].exps[2 * e];
          rows[r][c / 64] ^= std::uint64_t{1} << (c % 64);
        }
      }
      rows[r][col_words + r / 64] |= std::uint64_t{1} << (r % 64);
    }
    auto* used = static_cast<bool*>(std::calloc(nrels, sizeof(bool)));
    if (used == nullptr) wl::out_of_memory(kProg, nrels);
    for (std::size_t c = 0; c < cols; ++c) {
      const std::uint64_t bit = std::uint64_t{1} << (c % 64);
      std::size_t piv = nrels;
      for (std::size_t r = 0; r < nrels; ++r) {
        if (!used[r] && (rows[r][c / 64] & bit) != 0) {
          piv = r;
          break;
        }
      }
      if (piv == nrels) continue;
      used[piv] = true;
      for (std::size_t r = 0; r < nrels; ++r) {
        if (r != piv && (rows[r][c / 64] & bit) != 0) {
          for (std::size_t w = 0; w < row_words; ++w) rows[r][w] ^= rows[piv][w];
        }
      }
    }
    // Unused rows are now zero in the parity part: each is a dependency.
    auto* total = static_cast<std::uint32_t*>(xmalloc(cols * sizeof(std::uint32_t)));
    for (std::size_t r = 0; r < nrels && factor == nullptr; ++r) {
      if (used[r]) continue;
      ++st.dependencies_tried;
      std::memset(total, 0, cols * sizeof(std::uint32_t));
      Big X = big_from_u64(1);
      for (std::size_t j = 0; j < nrels; ++j) {
        if ((rows[r][col_words + j / 64] >> (j % 64) & 1) == 0) continue;
        Big t = big_mulmod(X, rels[j].a, n);
        big_free(X);
        X = t;
        if (rels[j].negative) ++total[0];
        for (std::uint32_t e = 0; e < rels[j].nexps; ++e) total[rels[j].exps[2 * e]] += rels[j].exps[2 * e + 1];
      }
      Big Y = big_from_u64(1);
      for (std::size_t c = 0; c < cols; ++c) {
        if ((total[c] & 1) != 0) wl::fail(kProg, "internal error: odd exponent in a dependency");
        if (c == 0) continue;  // (-1)^even
        for (std::uint32_t e = 0; e < total[c] / 2; ++e) {
          Big t = big_mul_small(Y, fb[c]);
          big_free(Y);
          Y = big_mod(t, n);
          big_free(t);
        }
      }
      // gcd(X - Y mod N, N)
      Big d = nullptr;
      if (big_cmp(X, Y) >= 0) {
        d = big_sub(X, Y);
      } else {
        Big t = big_add(X, n);
        d = big_sub(t, Y);
        big_free(t);
      }
      Big gg = big_gcd(d, n);
      big_free(d);
      big_free(X);
      big_free(Y);
      if (!big_is_one(gg) && big_cmp(gg, n) != 0) {
        factor = gg;
      } else {
        big_free(gg);
      }
    }
    std::free(total);
    std::free(used);
    for (std::size_t r = 0; r < nrels; ++r) std::free(rows[r]);
    std::free(rows);
    wanted = nrels + 8;  // all dependencies trivial: collect a few more
  }

  for (std::size_t r = 0; r < nrels; ++r) {
    big_free(rels[r].a);
    std::free(rels[r].exps);
  }
  std::free(rels);
  std::free(pairs);
  std::free(fb);
  big_free(P);
  big_free(Q);
  big_free(a);
  big_free(A1);
  big_free(A2);
  big_free(g);
  big_free(kn);
  return factor;
}

}  // namespace

int main(int argc, char** argv) {
  auto [opt, rng] = wl::start(argc, argv, kInfo);

  static const std::uint32_t kMultipliers[] = {1, 3, 5, 7, 11, 13, 15, 17, 19, 21, 23, 29, 31, 33, 35, 37};
  Stats st;
  wl::Checksum check;
  std::size_t min_bits = 1000, max_bits = 0;
  std::printf("cfrac: %llu seeded semiprimes N = p*q, p and q of 36..46 bits\n",
              static_cast<unsigned long long>(opt.size));

  for (std::uint64_t c = 0; c < opt.size; ++c) {
    // Composite of 71..92 bits made of two primes of nearly equal size.
    const int half = 36 + static_cast<int>(rng.below(11));
    const std::uint64_t p0 = random_prime(rng, half);
    std::uint64_t q0 = random_prime(rng, half);
    while (q0 == p0) q0 = random_prime(rng, half);
    const std::uint64_t lo = p0 < q0 ? p0 : q0;
    const std::uint64_t hi = p0 < q0 ? q0 : p0;

    Big bp = big_from_u64(lo);
    Big bq = big_from_u64(hi);
    Big n = big_mul(bp, bq);
    big_free(bp);
    big_free(bq);
    const std::size_t bits = big_bits(n);
    if (bits < min_bits) min_bits = bits;
    if (bits > max_bits) max_bits = bits;

    Big f = nullptr;
    for (std::size_t m = 0; f == nullptr && m < sizeof(kMultipliers) / sizeof(kMultipliers[0]); ++m) {
      if (m > 0) ++st.multiplier_switches;
      f = cfrac_try(n, kMultipliers[m], st);
    }
    if (f == nullptr) {
      std::fprintf(stderr, "%s: no factor found for ", kProg);
      big_print(stderr, n);
      wl::fail(kProg, " (composite %llu)", static_cast<unsigned long long>(c));
    }
    // Verify: f * (n / f) == n and the factors are the primes we started from.
    Big cof = nullptr, r = nullptr;
    big_divmod(n, f, &cof, &r);
    Big prod = big_mul(f, cof);
    std::uint64_t fa = 0, fb = 0;
    const bool ok = big_is_zero(r) && big_cmp(prod, n) == 0 && big_to_u64(f, fa) && big_to_u64(cof, fb) &&
                    ((fa == lo && fb == hi) || (fa == hi && fb == lo));
    if (!ok) {
      std::fprintf(stderr, "%s: bad factorization of ", kProg);
      big_print(stderr, n);
      std::fprintf(stderr, ": ");
      big_print(stderr, f);
      wl::fail(kProg, " does not split it into %llu * %llu", static_cast<unsigned long long>(lo),
               static_cast<unsigned long long>(hi));
    }
    if (opt.verbose) {
      std::fprintf(stderr, "%s: ", kProg);
      big_print(stderr, n);
      std::fprintf(stderr, " = %llu * %llu\n", static_cast<unsigned long long>(lo),
                   static_cast<unsigned long long>(hi));
    }
    if (c == 0) {
      std::printf("first: ");
      big_print(stdout, n);
      std::printf(" = %llu * %llu\n", static_cast<unsigned long long>(lo),
                  static_cast<unsigned long long>(hi));
    }
    check.add(lo);
    check.add(hi);
    big_free(cof);
    big_free(r);
    big_free(prod);
    big_free(f);
    big_free(n);
  }
  if (opt.verbose) {
    std::fprintf(stderr, "%s: %llu bignums allocated, %llu dependencies tried\n", kProg,
                 static_cast<unsigned long long>(g_big_allocs),
                 static_cast<unsigned long long>(st.dependencies_tried));
  }
  std::printf("factored %llu composites of %zu..%zu bits, all verified p*q == N\n",
              static_cast<unsigned long long>(opt.size), min_bits, max_bits);
  std::printf("continued-fraction steps: %llu, smooth relations: %llu, multiplier switches: %llu\n",
              static_cast<unsigned long long>(st.iterations), static_cast<unsigned long long>(st.relations),
              static_cast<unsigned long long>(st.multiplier_switches));
  wl::print_result_hex(check.value());
  return 0;
}
