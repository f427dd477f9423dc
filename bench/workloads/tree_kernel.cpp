// tree_kernel: the tree micro-kernel of Jula & Rauchwerger, "Custom Memory
// Allocation for Free" (Defero), section on micro-kernels.
//
// Warm-up: a std::set of 3N random integers is built and N of them are erased
// at random, leaving holes between the survivors (which stay live until the
// end).  Kernel: a std::map (red-black tree) of N random keys is built, every
// inserted key is looked up in random order with find, std::for_each walks
// the tree in order, and the tree is destroyed.  Allocation behaviour:
// red-black tree nodes through std::allocator (operator new; 40-byte
// requests on LP64), allocated one per insert in random key order and freed
// in a post-order burst at destruction; the warm-up frees scatter holes.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <vector>

#include "workload_common.h"

namespace {

constexpr const char* kProg = "wl_tree_kernel";
constexpr int kRounds = 2;
constexpr wl::ProgramInfo kInfo{kProg,
                                "Defero tree micro-kernel: fragmenting warm-up, then map "
                                "insert, find, for_each, destroy.",
                                "tree size N (warm-up inserts 3N)", 300000, 1, 20000000};

}  // namespace

int main(int argc, char** argv) {
  auto [opt, rng] = wl::start(argc, argv, kInfo);
  const std::size_t n = opt.size;

  // Warm-up: 3N inserts, then erase N of the inserted keys chosen at random.
  std::set<std::uint32_t> warm;
  std::size_t warm_erased = 0;
  {
    std::vector<std::uint32_t> keys(3 * n);
    for (auto& k : keys) {
      k = rng.next32();
      warm.insert(k);
    }
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t j = i + static_cast<std::size_t>(rng.below(keys.size() - i));
      std::swap(keys[i], keys[j]);
      warm_erased += warm.erase(keys[i]);
    }
  }
  std::printf("warm-up: 3N = %zu inserts, %zu erased at random, %zu survive\n", 3 * n,
              warm_erased, warm.size());

  wl::Checksum check;
  std::size_t last_size = 0;
  std::uint64_t last_sum = 0;
  for (int round = 0; round < kRounds; ++round) {
    std::vector<std::uint32_t> keys(n);
    std::uint64_t inserted_sum = 0;
    std::map<std::uint32_t, std::uint32_t> tree;
    for (std::size_t i = 0; i < n; ++i) {
      keys[i] = rng.next32();
      const auto value = static_cast<std::uint32_t>(i);
      if (tree.emplace(keys[i], value).second) inserted_sum += value;
    }
    // Look every key up, in random order.
    for (std::size_t i = n; i > 1; --i) {
      std::swap(keys[i - 1], keys[static_cast<std::size_t>(rng.below(i))]);
    }
    std::uint64_t found_xor = 0;
    for (std::uint32_t k : keys) {
      const auto it = tree.find(k);
      if (it == tree.end()) wl::fail(kProg, "round %d: inserted key %u not found", round, k);
      found_xor ^= wl::mix64(it->second);
    }
    // In-order walk: keys increase, values add up to what was inserted.
    std::uint64_t walk_sum = 0;
    std::uint32_t prev = 0;
    bool first = true;
    bool ordered = true;
    std::for_each(tree.begin(), tree.end(), [&](const std::pair<const std::uint32_t, std::uint32_t>& kv) {
      if (!first && kv.first <= prev) ordered = false;
      first = false;
      prev = kv.first;
      walk_sum += kv.second;
    });
    if (!ordered) wl::fail(kProg, "round %d: in-order walk not increasing", round);
    if (walk_sum != inserted_sum) {
      wl::fail(kProg, "round %d: for_each sum %llu, inserted %llu", round,
               static_cast<unsigned long long>(walk_sum),
               static_cast<unsigned long long>(inserted_sum));
    }
    check.add(found_xor);
    check.add(walk_sum);
    check.add(tree.size());
    last_size = tree.size();
    last_sum = walk_sum;
    // tree destroyed here
  }
  std::uint64_t warm_sum = 0;
  for (std::uint32_t k : warm) warm_sum += k;
  check.add(warm_sum);
  if (opt.verbose) {
    std::fprintf(stderr, "%s: %zu warm-up inserts, %zu kernel inserts (%d rounds)\n", kProg,
                 3 * n, static_cast<std::size_t>(kRounds) * n, kRounds);
  }
  std::printf("kernel: %d rounds of %zu inserts, %zu finds, for_each, destroy\n", kRounds, n, n);
  std::printf("last round: %zu distinct keys, value sum %llu; warm-up survivors sum %llu\n",
              last_size, static_cast<unsigned long long>(last_sum),
              static_cast<unsigned long long>(warm_sum));
  wl::print_result_hex(check.value());
  return 0;
}
