// SPDX-License-Identifier: MIT
// Binary buddy and Fibonacci buddy worked out by hand (split and merge
// sequences with exact addresses, steps, reads and writes; the counting rules
// are in src/simulate/binary_buddy.h and fibonacci_buddy.h), FIB compared
// against an explicit split tree on random allocate / release sequences
// (free blocks, and their LR and M bits, after every operation), and both
// passing the checker on a random trace and a recorded workload.
#include <gtest/gtest.h>

#include "simulate/recorded_cfrac.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "dmm/binary_buddy.h"
#include "common/temp_dir.h"
#include "dmm/fibonacci_buddy.h"
#include "simulate/replay_trace.h"
#include "simulate/checked_run.h"
#include "simulate/random_trace.h"
#include "simulate/base_address.h"
#include "simulate/simulated_memory.h"
#include "simulate/simulator.h"
#include "tailor/trace/reader.h"

namespace {

namespace sim = tailor::simulate;
namespace tr = tailor::trace;
using Bin = sim::BinaryBuddy<sim::SimulatedMemory>;
using Fib = sim::FibonacciBuddy<sim::SimulatedMemory>;

struct Counts {
  std::uint64_t steps, reads, writes;
};
template <class A>
Counts counts(const A& a, const sim::SimulatedMemory& m) {
  return {a.steps(), m.reads(), m.writes()};
}
#define EXPECT_COUNTS(a, m, s, r, w)    \
  do {                                  \
    const Counts c_ = counts(a, m);     \
    EXPECT_EQ(c_.steps, s) << "steps";  \
    EXPECT_EQ(c_.reads, r) << "reads";  \
    EXPECT_EQ(c_.writes, w) << "writes"; \
  } while (0)

using Spans = std::vector<std::pair<sim::Address, std::uint64_t>>;
Spans blocks(Spans v) { return v; }
// A binary buddy's free blocks {start, bytes} in address order (its reads count).
Spans spans(Bin& b) {
  Spans out;
  b.each_free([&](sim::Address a, std::uint64_t bytes) { out.emplace_back(a, bytes); });
  std::sort(out.begin(), out.end());
  return out;
}
// A Fibonacci buddy's free blocks in address order (its reads count).
template <class F>
std::vector<typename F::FreeBlock> free_blocks_of(F& f) {
  std::vector<typename F::FreeBlock> out;
  f.each_free([&](const typename F::FreeBlock& b) { out.push_back(b); });
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.address < b.address; });
  return out;
}

// ---------------------------------------------------------------- binary buddy

TEST(BinaryBuddy, OrderChoice) {
  sim::SimulatedMemory mem;
  Bin b(mem);
  EXPECT_EQ(b.order_for(16), 5u);   // a 0-byte request: the 32-byte minimum
  EXPECT_EQ(b.order_for(32), 5u);   // 16 bytes + header
  EXPECT_EQ(b.order_for(33), 6u);
  EXPECT_EQ(b.order_for(1024), 10u);
  EXPECT_EQ(b.order_for(std::uint64_t{1} << 20), 20u);
  EXPECT_EQ(b.order_for((std::uint64_t{1} << 20) + 1), 21u);  // direct
  EXPECT_NE(Bin::check(5, 4096), nullptr);
  EXPECT_EQ(Bin::check(6, 4096), nullptr);
}

// Max order 10: chunks of 1024 bytes at C = B (aligned to 1024).
TEST(BinaryBuddy, SplitAndMergeByHand) {
  sim::SimulatedMemory mem;
  Bin b(mem, 10);
  const sim::Address C = B;
  // 10 bytes need 26: order 5. Every list empty: 6 lists examined, a chunk,
  // 5 splits pushing the upper halves C+512 (9) .. C+32 (5), 2 writes each, the header.
  sim::Block a = b.allocate(10);
  EXPECT_EQ(a.address, C + 16);
  EXPECT_EQ(a.bytes, 32u);
  EXPECT_EQ(mem.held(), 1024u);
  EXPECT_EQ(mem.system_requests(), 1u);
  EXPECT_EQ(b.splits(), 5u);
  EXPECT_COUNTS(b, mem, 12u, 0u, 11u);
  EXPECT_EQ(spans(b), blocks({{C + 32, 32}, {C + 64, 64}, {C + 128, 128}, {C + 256, 256}, {C + 512, 512}}));
  const std::uint64_t walk = mem.reads();  // free_blocks() reads the 5 links

  // 40 bytes need 56: order 6, popped (1 list examined, pop: its next), header.
  sim::Block d = b.allocate(40);
  EXPECT_EQ(d.address, C + 64 + 16);
  EXPECT_EQ(d.bytes, 64u);
  EXPECT_COUNTS(b, mem, 14u, walk + 1, 12u);
  sim::Block e = b.allocate(1);  // order 5: C+32
  EXPECT_EQ(e.address, C + 32 + 16);
  EXPECT_COUNTS(b, mem, 16u, walk + 2, 13u);

  // Release a: header, buddy C+32 is allocated: push order 5.
  EXPECT_EQ(b.release(a.address), 32u);
  EXPECT_COUNTS(b, mem, 17u, walk + 4, 15u);
  // Release d: buddy C (order 6) is free but of order 5: no merge.
  EXPECT_EQ(b.release(d.address), 64u);
  EXPECT_COUNTS(b, mem, 18u, walk + 6, 17u);
  EXPECT_EQ(b.coalesces(), 0u);
  // Release e (at C+32): its buddy C (lower) is free of order 5: merge, then
  // C+64 (6), C+128 (7), C+256 (8), C+512 (9): five merges up to the chunk.
  // Reads: header, then per merge the buddy's header and its next (each is its list's head).
  EXPECT_EQ(b.release(e.address), 32u);
  EXPECT_COUNTS(b, mem, 24u, walk + 7 + 10, 19u);
  EXPECT_EQ(b.coalesces(), 5u);
  EXPECT_EQ(spans(b), blocks({{C, 1024}}));

  // The whole chunk serves 1000 bytes without a new system request.
  sim::Block big = b.allocate(1000);
  EXPECT_EQ(big.address, C + 16);
  EXPECT_EQ(big.bytes, 1024u);
  EXPECT_EQ(mem.system_requests(), 1u);
  // 1009 + 16 > 1024: obtained directly, a page, and returned on release.
  sim::Block direct = b.allocate(1009);
  EXPECT_EQ(direct.address % 4096, 16u);
  EXPECT_EQ(direct.bytes, 4096u);
  EXPECT_EQ(mem.held(), 1024u + 4096u);
  EXPECT_EQ(b.release(direct.address), 4096u);
  EXPECT_EQ(mem.held(), 1024u);
  EXPECT_EQ(mem.system_requests(), 3u);
  // A second chunk when the first is taken.
  sim::Block f = b.allocate(400);  // needs 416: order 9
  EXPECT_EQ(f.address % 1024, 16u);
  EXPECT_EQ(mem.held(), 2048u);
  EXPECT_EQ(spans(b).size(), 1u);  // its upper half
}

TEST(BinaryBuddy, MergesOnlyWithTheBuddyNotTheNeighbour) {
  sim::SimulatedMemory mem;
  Bin b(mem, 8);  // chunks of 256
  const sim::Address C = B;
  sim::Block x = b.allocate(16);  // C (32); free: C+32 (32), C+64 (64), C+128 (128)
  sim::Block y = b.allocate(16);  // C+32
  sim::Block z = b.allocate(16);  // C+64 (split 64: C+96 free)
  ASSERT_EQ(x.address, C + 16);
  ASSERT_EQ(y.address, C + 48);
  ASSERT_EQ(z.address, C + 80);
  EXPECT_EQ(spans(b), blocks({{C + 96, 32}, {C + 128, 128}}));
  b.release(y.address);  // C+32 and C+64 are adjacent and free-able but not buddies
  b.release(z.address);  // C+64 merges with C+96 only
  EXPECT_EQ(spans(b), blocks({{C + 32, 32}, {C + 64, 64}, {C + 128, 128}}));
  b.release(x.address);
  EXPECT_EQ(spans(b), blocks({{C, 256}}));
}

TEST(BinaryBuddy, AlignedRequests) {
  sim::SimulatedMemory mem;
  Bin b(mem, 12);
  // 100 bytes aligned to 256 need 356: a 512-byte block, data at block + 256
  // with the indirect word before it.
  sim::Block a = b.allocate(100, 256);
  EXPECT_EQ(a.address % 256, 0u);
  EXPECT_EQ(a.bytes, 512u);
  sim::Block c = b.allocate(3000, 8192);  // over the chunk: direct, aligned
  EXPECT_EQ(c.address % 8192, 0u);
  EXPECT_EQ(b.release(a.address), 512u);
  EXPECT_EQ(b.release(c.address), 12288u);  // 3000 + 8192 rounded up to pages
  EXPECT_EQ(spans(b), blocks({{B, 4096}}));
  for (std::uint64_t align : {16u, 32u, 64u, 128u, 1024u, 4096u}) {
    sim::Block x = b.allocate(1, align);
    EXPECT_EQ(x.address % align, 0u) << align;
    b.release(x.address);
  }
  EXPECT_EQ(spans(b), blocks({{B, 4096}}));
}

// ------------------------------------------------------------ Fibonacci buddy

TEST(FibonacciBuddy, Sizes) {
  sim::SimulatedMemory mem;
  Fib f(mem);
  const std::vector<std::uint64_t> want = {32, 48, 80, 128, 208, 336, 544, 880, 1424, 2304, 3728, 6032};
  for (unsigned i = 0; i < want.size(); ++i) EXPECT_EQ(f.size(i), want[i]) << i;
  EXPECT_EQ(f.size(22), 1200400u);  // the default chunk
  EXPECT_EQ(f.index_for(16), 0u);
  EXPECT_EQ(f.index_for(32), 0u);
  EXPECT_EQ(f.index_for(33), 1u);
  EXPECT_EQ(f.index_for(81), 3u);
  EXPECT_EQ(f.index_for(16400), 14u);  // above the lookup table: 16 u_14 = 16 * 1597 = 25552
  EXPECT_EQ(f.index_for(1200400), 22u);
  EXPECT_EQ(f.index_for(1200401), 23u);  // direct
}

// Top index 5: chunks of 336 bytes at C = B. The split tree of the chunk:
//   [C, 336) 5 -> [C, 208) 4 L  +  [C+208, 128) 3 R
//   [C+208) 3  -> [C+208, 80) 2 L  +  [C+288, 48) 1 R
//   [C+208) 2  -> [C+208, 48) 1 L  +  [C+256, 32) 0 R
// Bits (M: left.M = parent.LR, right.M = parent.M; the chunk is L, M = L):
//   4: L, M=L; 3: R, M=L; 2: L, M=R; 1@C+288: R, M=L; 1@C+208: L, M=L; 0: R, M=R.
TEST(FibonacciBuddy, SplitAndMergeByHand) {
  sim::SimulatedMemory mem;
  Fib f(mem, 5);
  const sim::Address C = B;
  // 10 bytes need 26: index 0. 6 lists examined, a chunk; split 5 (keep the
  // right 3, push 4), 3 (k = 0: keep the left 2, push the right 1), 2 (keep
  // the right 0, push 1): 3 splits, 7 writes of pushes (list 1 pushed twice) + the header.
  sim::Block a = f.allocate(10);
  EXPECT_EQ(a.address, C + 256 + 16);
  EXPECT_EQ(a.bytes, 32u);
  EXPECT_EQ(mem.held(), 336u);
  EXPECT_EQ(f.splits(), 3u);
  EXPECT_COUNTS(f, mem, 10u, 0u, 8u);
  EXPECT_EQ(mem.load(C + 256), 0u | (1u << 9) | (1u << 10));  // allocated, index 0, R, M = R
  std::uint64_t probe = 1;  // the load above
  auto free_blocks = [&] {
    const auto v = free_blocks_of(f);
    probe += v.size() * 2;  // a link and a header per free block
    std::vector<std::tuple<sim::Address, unsigned, bool, bool>> out;
    for (const auto& b : v) out.emplace_back(b.address, b.index, b.right, b.memory);
    return out;
  };
  using FB = std::vector<std::tuple<sim::Address, unsigned, bool, bool>>;
  EXPECT_EQ(free_blocks(), (FB{{C, 4, false, false}, {C + 208, 1, false, false}, {C + 288, 1, true, false}}));

  // 100 bytes need 116: index 3. Lists 3 and 4 examined, pop C (its next and
  // its header), split 4 into 3 (kept, L, M = L) and 2 (pushed, R, M = L).
  sim::Block b = f.allocate(100);
  EXPECT_EQ(b.address, C + 16);
  EXPECT_EQ(b.bytes, 128u);
  EXPECT_COUNTS(f, mem, 14u, probe + 2, 11u);
  EXPECT_EQ(free_blocks(), (FB{{C + 128, 2, true, false}, {C + 208, 1, false, false}, {C + 288, 1, true, false}}));

  // Release a (index 0, R): its buddy is the left one at C+256 - F_1 = C+208
  // (index 1, free): merge into 2 at C+208 (LR = left.M = L, M = right.M = R);
  // a left 2: buddy C+208 + F_2 = C+288 (index 1, free): merge into 3 at
  // C+208 (LR = left.M = R, M = right.M = L); a right 3: buddy C+208 - F_4 = C,
  // which is allocated (index 3): stop. C+128 (2) and C+208 (3) are adjacent
  // free blocks but not buddies.
  EXPECT_EQ(f.release(a.address), 32u);
  EXPECT_EQ(f.coalesces(), 2u);
  EXPECT_COUNTS(f, mem, 17u, probe + 2 + 6, 13u);
  EXPECT_EQ(free_blocks(), (FB{{C + 128, 2, true, false}, {C + 208, 3, true, false}}));

  // Release b (3 at C, L, M = L): buddy C+128 (2, free): merge into 4 at C
  // (L, M = L); a left 4: buddy C+208 (3, free): merge into the chunk.
  EXPECT_EQ(f.release(b.address), 128u);
  EXPECT_EQ(f.coalesces(), 4u);
  EXPECT_COUNTS(f, mem, 20u, probe + 2 + 6 + 5, 15u);
  EXPECT_EQ(free_blocks(), (FB{{C, 5, false, false}}));
  EXPECT_EQ(mem.system_requests(), 1u);
}

TEST(FibonacciBuddy, DirectAndAligned) {
  sim::SimulatedMemory mem;
  Fib f(mem, 5);
  sim::Block d = f.allocate(321);  // 337 > 336: a page, directly
  EXPECT_EQ(d.bytes, 4096u);
  EXPECT_EQ(mem.held(), 4096u);
  sim::Block a = f.allocate(10, 64);  // needs 74: index 2 (80)
  EXPECT_EQ(a.address % 64, 0u);
  EXPECT_EQ(a.bytes, 80u);
  EXPECT_EQ(f.release(d.address), 4096u);
  EXPECT_EQ(f.release(a.address), 80u);
  EXPECT_EQ(mem.held(), 336u);
  ASSERT_EQ(free_blocks_of(f).size(), 1u);
  EXPECT_EQ(free_blocks_of(f)[0].index, 5u);
}

// The explicit split tree: nodes with parent and children; a free leaf merges
// with its sibling when both are free leaves. It does not know about LR or M:
// it checks them. The mechanism's choice among free blocks of the same index
// (LIFO) is taken from the address it returns; everything else is decided by
// the model: which index must be taken (the smallest non-empty one >= k), the
// splits (keep the right child when it is >= k and not index 1 with k = 0),
// the address and size of the result, and every merge.
class SplitTree {
 public:
  SplitTree(const Fib& fib, const sim::SimulatedMemory& mem) : fib_(fib), mem_(mem) {}

  // Returns an error, or "" if the mechanism's answer is the model's.
  std::string allocate(unsigned k, const sim::Block& got) {
    std::optional<unsigned> smallest;
    for (const auto& [start, id] : leaves_)
      if (nodes_[id].state == kFree && nodes_[id].index >= k && (!smallest || nodes_[id].index < *smallest))
        smallest = nodes_[id].index;
    int id;
    if (!smallest) {
      if (mem_.regions().empty()) return "no chunk obtained";
      const sim::Region& r = mem_.regions().back();
      if (r.bytes != fib_.size(fib_.top_index()) || nodes_by_chunk_.count(r.start)) return "expected a new chunk";
      id = add(r.start, fib_.top_index(), -1);
      nodes_by_chunk_.insert(r.start);
      leaves_[r.start] = id;
    } else {
      auto it = leaves_.upper_bound(got.address);
      if (it == leaves_.begin()) return "address outside every chunk";
      id = std::prev(it)->second;
      if (nodes_[id].state != kFree) return "took a block inside a used one";
      if (nodes_[id].index != *smallest)
        return "took index " + std::to_string(nodes_[id].index) + ", the smallest free >= k is " +
               std::to_string(*smallest);
    }
    for (unsigned j = nodes_[id].index; j > k && j >= 2; j = nodes_[id].index) {
      const sim::Address s = nodes_[id].start;
      const int l = add(s, j - 1, id), r = add(s + fib_.size(j - 1), j - 2, id);
      nodes_[id].state = kSplit;
      nodes_[id].left = l;
      nodes_[id].right = r;
      leaves_[s] = l;
      leaves_[s + fib_.size(j - 1)] = r;
      id = (j - 2 >= k && !(j == 3 && k == 0)) ? r : l;
    }
    const Node& n = nodes_[id];
    if (n.start + 16 != got.address || fib_.size(n.index) != got.bytes)
      return "model block at " + std::to_string(n.start - B) + " of " + std::to_string(fib_.size(n.index)) +
             " bytes, mechanism's data at " + std::to_string(got.address - B) + " of " + std::to_string(got.bytes);
    nodes_[id].state = kUsed;
    used_[got.address] = id;
    return "";
  }

  void release(sim::Address address) {
    int id = used_.at(address);
    used_.erase(address);
    nodes_[id].state = kFree;
    while (nodes_[id].parent >= 0) {
      const int p = nodes_[id].parent;
      const int l = nodes_[p].left, r = nodes_[p].right;
      if (nodes_[l].state != kFree || nodes_[r].state != kFree) break;
      leaves_.erase(nodes_[r].start);
      leaves_[nodes_[p].start] = p;
      nodes_[l].state = nodes_[r].state = kGone;
      nodes_[p].state = kFree;
      id = p;
    }
  }

  // The free leaves with the LR and M bits the field notes' rules give them.
  std::vector<Fib::FreeBlock> free_blocks() const {
    std::vector<Fib::FreeBlock> out;
    for (const auto& [start, id] : leaves_)
      if (nodes_[id].state == kFree) out.push_back({start, nodes_[id].index, is_right(id), m_bit(id)});
    return out;
  }

 private:
  enum State { kFree, kUsed, kSplit, kGone };
  struct Node {
    sim::Address start;
    unsigned index;
    int parent;
    int left = -1, right = -1;
    State state = kFree;
  };
  int add(sim::Address start, unsigned index, int parent) {
    nodes_.push_back({start, index, parent});
    return static_cast<int>(nodes_.size()) - 1;
  }
  bool is_right(int id) const { return nodes_[id].parent >= 0 && nodes_[nodes_[id].parent].right == id; }
  // M: a left child inherits its parent's LR, a right child its parent's M; a chunk has M = L.
  bool m_bit(int id) const {
    const int p = nodes_[id].parent;
    if (p < 0) return false;
    return is_right(id) ? m_bit(p) : is_right(p);
  }

  const Fib& fib_;
  const sim::SimulatedMemory& mem_;
  std::vector<Node> nodes_;
  std::map<sim::Address, int> leaves_;  // current leaves by start
  std::map<sim::Address, int> used_;    // by data address
  std::set<sim::Address> nodes_by_chunk_;
};

std::string same(const std::vector<Fib::FreeBlock>& a, const std::vector<Fib::FreeBlock>& b, bool bits) {
  auto show = [](const std::vector<Fib::FreeBlock>& v) {
    std::string s;
    for (const auto& x : v)
      s += " (" + std::to_string(x.address - B) + " i" + std::to_string(x.index) + (x.right ? " R" : " L") +
           (x.memory ? " M=R)" : " M=L)");
    return s;
  };
  if (a.size() == b.size()) {
    bool eq = true;
    for (std::size_t i = 0; i < a.size() && eq; ++i)
      eq = a[i].address == b[i].address && a[i].index == b[i].index &&
           (!bits || (a[i].right == b[i].right && a[i].memory == b[i].memory));
    if (eq) return "";
  }
  return "mechanism:" + show(a) + "\nmodel:    " + show(b);
}

// Random allocate / release sequences; after every operation the mechanism's
// free blocks (address, index, and unless `bits` is false LR and M) equal the
// split tree's. Returns the first mismatch, or "".
template <class Memory>
std::string run_against_tree(unsigned top, std::uint64_t max_bytes, std::uint64_t seed, int operations,
                             bool bits = true) try {
  Memory mem;
  sim::FibonacciBuddy<Memory> fib(mem, top);
  // The model reads the chunks and sizes through a plain Fib over the same layout.
  sim::SimulatedMemory dummy;
  const Fib sizes(dummy, top);
  SplitTree tree(sizes, mem.simulated());
  std::mt19937_64 rng(seed);
  std::vector<sim::Address> live;
  for (int op = 0; op < operations; ++op) {
    const bool grow = live.size() < 8 || (live.size() < 400 && rng() % 100 < 55);
    if (grow) {
      const std::uint64_t bytes = rng() % 4 == 0 ? rng() % max_bytes : rng() % 100;
      const unsigned k = sizes.index_for(bytes + 16);
      if (k > top) continue;
      const sim::Block got = fib.allocate(bytes);
      const std::string e = tree.allocate(k, got);
      if (!e.empty()) return "operation " + std::to_string(op) + ": allocate " + std::to_string(bytes) + ": " + e;
      live.push_back(got.address);
    } else {
      const std::size_t i = rng() % live.size();
      fib.release(live[i]);
      tree.release(live[i]);
      live[i] = live.back();
      live.pop_back();
    }
    std::vector<Fib::FreeBlock> mine;
    for (const auto& b : free_blocks_of(fib)) mine.push_back({b.address, b.index, b.right, b.memory});
    const std::string e = same(mine, tree.free_blocks(), bits);
    if (!e.empty()) return "after operation " + std::to_string(op) + ":\n" + e;
  }
  return "";
} catch (const std::exception& e) {
  return std::string("exception: ") + e.what();
}

// SimulatedMemory as it is, and one that forgets the M bit of every header
// word it stores (what an implementation that gets the inheritance wrong does).
struct Plain {
  using Arena = sim::HeapArena;
  sim::SimulatedMemory m;
  std::uint64_t load(sim::Address a) { return m.load(a); }
  void store(sim::Address a, std::uint64_t v) { m.store(a, v); }
  sim::Address obtain(std::uint64_t b, std::uint64_t al) { return m.obtain(b, al); }
  void release(sim::Address a, std::uint64_t b) { m.release(a, b); }
  const sim::SimulatedMemory& simulated() const { return m; }
};
struct ForgetsM : Plain {
  void store(sim::Address a, std::uint64_t v) { m.store(a, v < (1u << 16) ? v & ~std::uint64_t{1u << 10} : v); }
};
struct ForgetsLR : Plain {
  void store(sim::Address a, std::uint64_t v) { m.store(a, v < (1u << 16) ? v & ~std::uint64_t{1u << 9} : v); }
};

TEST(FibonacciBuddy, MatchesAnExplicitSplitTree) {
  // Small chunks (top 8: 1424 bytes) so that chunks fill up and merge back often.
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const std::string e = run_against_tree<Plain>(8, 1400, seed, 5000);
    EXPECT_EQ(e, "") << "seed " << seed;
  }
  EXPECT_EQ(run_against_tree<Plain>(14, 20000, 7, 5000), "");
  EXPECT_EQ(run_against_tree<Plain>(Fib::kDefaultTop, 100000, 8, 5000), "");
}

// A mechanism whose stored LR or M bits are wrong merges the wrong blocks:
// the tree sees it in the free blocks' addresses and sizes alone.
TEST(FibonacciBuddy, TheSplitTreeCatchesWrongBits) {
  const std::string m = run_against_tree<ForgetsM>(8, 1400, 1, 5000, false);
  EXPECT_NE(m, "");
  const std::string lr = run_against_tree<ForgetsLR>(8, 1400, 1, 5000, false);
  EXPECT_NE(lr, "");
  std::printf("forgetting M: %s\nforgetting LR: %s\n", m.substr(0, 300).c_str(), lr.substr(0, 300).c_str());
}

// ------------------------------------------------------------ both, checked

// 100k events: sizes 0..2 MiB (mostly small), random lifetimes, some calloc,
// realloc and memalign; addresses reused after release.
std::vector<tr::Event> random_buddy_events(std::uint64_t seed) {
  return tailor::test::random_events(seed, 100000, [](std::mt19937_64& rng) {
    const std::uint64_t r = rng() % 100;
    return r == 0 ? rng() % (std::uint64_t{2} << 20) : r < 25 ? rng() % 100000 : rng() % 257;
  });
}

TEST(Buddies, CheckerPassesOnARandomTrace) {
  const sim::ReplayTrace t = sim::build_replay(random_buddy_events(2026));
  for (const char* name : {"fib", "buddy"}) {
    SCOPED_TRACE(name);
    tailor::test::CheckedAndPlain runs;
    ASSERT_NO_THROW(runs = tailor::test::expect_checked_run_as_plain(t, name));
    EXPECT_EQ(runs.checked.dmm, name);
  }
}

TEST(Buddies, CheckerPassesOnARecordedWorkload) {
  TAILOR_SKIP_UNLESS_CFRAC();
  tailor::test::TempDir dir;
  const std::string path = tailor::test::record_cfrac(dir);
  ASSERT_FALSE(path.empty());
  tr::Reader reader(path);
  const sim::ReplayTrace t = sim::load_replay(reader);
  for (const char* name : {"fib", "buddy"}) {
    sim::SimulateOptions o;
    o.check = true;
    sim::Metrics m;
    ASSERT_NO_THROW(m = sim::simulate(t, name, o)) << name;
    EXPECT_GE(m.memory_usage, t.summary.max_in_use_bytes) << name;
  }
}

}  // namespace
