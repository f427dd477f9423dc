// SPDX-License-Identifier: MIT
// The list and tree micro-kernels of the Defero paper, with the allocator
// chosen on the command line, printing the time of each phase as one JSON
// object; bench/locality_kernels.py runs it over the configurations listed
// in docs/BENCHMARKS.md, "Locality by hints".
//
//   list: warm-up of 2N allocations of a list node's size and N frees at
//         random (the survivors stay live), then a list of N random ints
//         built alternating push_back and push_front, list::sort, for_each
//         (++), clear.                                      default N = 1M
//   tree: warm-up of 3N allocations of a set node's size and N frees at
//         random, then N random inserts into a set, N finds of keys picked
//         at random among them, for_each (sum), destruction. default N = 3M
//   mixed: the list warm-up, then a list of N worked on with a chosen
//         dynamism D (see mixed_kernel), for docs/locality.md. default N = 1M
//
// Every configuration runs the same containers (tailor::list and
// tailor::set), so only the allocator differs: --alloc std is
// std::allocator (glibc malloc, or whatever LD_PRELOAD puts in its place,
// e.g. mimalloc or libtailor); --alloc tailor is tailor::allocator on a
// locality heap of the given K (unsynchronized, one per run) with the given
// predicate, whose slabs come from libtailor's regions when libtailor is
// the process's malloc and from mmap otherwise. The JSON says which
// ("malloc", "heap_source").
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tailor/list.h"
#include "kernel_support.h"
#include "tailor/set.h"

namespace {

struct Options {
  std::string kernel = "list";
  std::string alloc = "std";
  std::string predicate = "match";
  unsigned k = 0;
  std::size_t n = 0;
  std::uint64_t seed = 1;
  bool walk_before_sort = false;
  double dynamism = 10;  // percent, for --kernel mixed
};

[[noreturn]] void usage(const std::string& why) {
  tailor::bench::usage_error(
      "locality_kernels", why,
      "usage: locality_kernels --kernel list|tree|mixed [--alloc std|tailor] [--predicate first|match|path]\n"
      "                        [--k K] [--n N] [--seed S] [--walk-before-sort] [--dynamism D]\n");
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* { return tailor::bench::option_value(argc, argv, i, usage); };
    if (a == "--kernel")
      o.kernel = value();
    else if (a == "--alloc")
      o.alloc = value();
    else if (a == "--predicate")
      o.predicate = value();
    else if (a == "--k")
      o.k = tailor::bench::number_value<unsigned>("--k", value(), usage);
    else if (a == "--n")
      o.n = tailor::bench::number_value<std::size_t>("--n", value(), usage);
    else if (a == "--seed")
      o.seed = tailor::bench::number_value<std::uint64_t>("--seed", value(), usage);
    else if (a == "--dynamism")
      o.dynamism = tailor::bench::number_value<double>("--dynamism", value(), usage);
    else if (a == "--walk-before-sort")
      o.walk_before_sort = true;
    else
      usage("unknown argument " + a);
  }
  if (o.kernel != "list" && o.kernel != "tree" && o.kernel != "mixed") usage("--kernel must be list, tree or mixed");
  if (!(o.dynamism > 0 && o.dynamism < 100)) usage("--dynamism must be in (0, 100)");
  if (o.alloc != "std" && o.alloc != "tailor") usage("--alloc must be std or tailor");
  if (o.predicate != "first" && o.predicate != "match" && o.predicate != "path")
    usage("--predicate must be first, match or path");
  if (o.n == 0) o.n = o.kernel == "tree" ? 3000000 : 1000000;
  return o;
}

using tailor::bench::Rng;
using tailor::bench::thread_cpu_seconds;

/// The fraction of consecutive elements (in iteration order) whose nodes lie
/// in the same 4 KiB page: how well the layout follows the container's order.
template <class C>
double same_page(const C& c) {
  std::size_t same = 0, pairs = 0;
  const void* prev = nullptr;
  for (const auto& x : c) {
    const void* cur = &x;
    if (prev != nullptr) {
      same += reinterpret_cast<std::uintptr_t>(prev) >> 12 == reinterpret_cast<std::uintptr_t>(cur) >> 12;
      ++pairs;
    }
    prev = cur;
  }
  return pairs == 0 ? 0.0 : static_cast<double>(same) / static_cast<double>(pairs);
}

class Phases {
 public:
  void note(const char* name, double value) {
    notes_ += (notes_.empty() ? "" : ", ") + std::string("\"") + name + "\": " + std::to_string(value);
  }
  const std::string& notes() const { return notes_; }
  void start() {
    t_ = std::chrono::steady_clock::now();
    cpu_ = thread_cpu_seconds();
  }
  double last() const { return last_; }
  double last_cpu() const { return last_cpu_; }
  void stop(const char* name) {
    const auto now = std::chrono::steady_clock::now();
    last_ = std::chrono::duration<double>(now - t_).count();
    last_cpu_ = thread_cpu_seconds() - cpu_;
    cpu_out_ += (cpu_out_.empty() ? "" : ", ") + std::string("\"") + name + "\": " + std::to_string(last_cpu_);
    out_ += (out_.empty() ? "" : ", ") + std::string("\"") + name +
            "\": " + std::to_string(std::chrono::duration<double>(now - t_).count());
  }
  const std::string& json() const { return out_; }
  const std::string& cpu_json() const { return cpu_out_; }

 private:
  std::chrono::steady_clock::time_point t_;
  std::string out_, notes_, cpu_out_;
  double last_ = 0, cpu_ = 0, last_cpu_ = 0;
};

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "locality_kernels: check failed: %s\n", what);
  std::exit(1);
}

/// The warm-up of both kernels: `total` blocks of a node's size (`Bytes`),
/// `freed` of them freed at random.
template <std::size_t Bytes, class Alloc>
auto warm_up(const Alloc& a, std::size_t total, std::size_t freed, Rng& rng) {
  struct alignas(8) Block {
    unsigned char bytes[Bytes];
  };
  using BA = typename std::allocator_traits<Alloc>::template rebind_alloc<Block>;
  using BT = std::allocator_traits<BA>;
  BA ba(a);
  std::vector<Block*> blocks(total);
  for (auto& b : blocks) {
    b = BT::allocate(ba, 1);
    b->bytes[0] = 1;
  }
  for (std::size_t i = 0; i < freed; ++i) {  // partial Fisher-Yates: a random subset
    const std::size_t j = i + rng.below(total - i);
    std::swap(blocks[i], blocks[j]);
    BT::deallocate(ba, blocks[i], 1);
  }
  blocks.erase(blocks.begin(), blocks.begin() + static_cast<long>(freed));
  // The survivors stay live until the end; the caller frees them. (Moved,
  // not copied: a large malloc now would make glibc consolidate the holes.)
  return [ba, blocks = std::move(blocks)]() mutable {
    for (auto* b : blocks) BT::deallocate(ba, b, 1);
  };
}

// Each timed phase runs inside a function of its own that is never inlined,
// so that callgrind (bench/locality_kernels.py --cache) can report the cache
// misses of each phase as the inclusive cost of phase_<name>. They differ
// only in that name, which a macro pastes.
#define LOCALITY_KERNELS_PHASE(name) \
  template <class F>                 \
  [[gnu::noinline]] void phase_##name(F&& f) { f(); }
LOCALITY_KERNELS_PHASE(warmup)
LOCALITY_KERNELS_PHASE(build)
LOCALITY_KERNELS_PHASE(walk_built)
LOCALITY_KERNELS_PHASE(sort)
LOCALITY_KERNELS_PHASE(for_each)
LOCALITY_KERNELS_PHASE(clear)
LOCALITY_KERNELS_PHASE(insert)
LOCALITY_KERNELS_PHASE(find)
LOCALITY_KERNELS_PHASE(destroy)
LOCALITY_KERNELS_PHASE(mixed)
#undef LOCALITY_KERNELS_PHASE

template <class Alloc>
std::uint64_t list_kernel(const Options& o, const Alloc& a, Phases& ph) {
  Rng rng{o.seed};
  using L = tailor::list<int, Alloc>;
  // Everything the kernel needs besides the list is allocated before the
  // warm-up: a large malloc after it would make glibc consolidate the holes.
  std::vector<int> values(o.n);
  Rng value_rng{o.seed + 1};
  for (auto& v : values) v = static_cast<int>(value_rng.next() >> 34);
  std::function<void()> release;
  ph.start();
  phase_warmup([&] { release = warm_up<L::node_bytes>(a, 2 * o.n, o.n, rng); });
  ph.stop("warmup");
  std::uint64_t check = 0;
  {
    L list(a);
    std::int64_t sum_before = 0;
    ph.start();
    phase_build([&] {
      for (std::size_t i = 0; i < o.n; ++i) {
        sum_before += values[i];
        if (i % 2 == 0)
          list.push_back(values[i]);
        else
          list.push_front(values[i]);
      }
    });
    ph.stop("build");
    ph.note("same_page_built", same_page(list));
    if (o.walk_before_sort) {
      ph.start();
      std::int64_t s = 0;
      phase_walk_built([&] {
        for (int x : list) s += x;
      });
      ph.stop("walk_built");
      if (s != sum_before) fail("walk before sort");
    }
    ph.start();
    phase_sort([&] { list.sort(); });
    ph.stop("sort");
    ph.note("same_page_sorted", same_page(list));
    std::int64_t sum_after = 0;
    ph.start();
    phase_for_each([&] { std::for_each(list.begin(), list.end(), [&sum_after](int& x) { sum_after += ++x; }); });
    ph.stop("for_each");
    if (sum_after != sum_before + static_cast<std::int64_t>(o.n)) fail("for_each sum");
    if (!std::is_sorted(list.begin(), list.end())) fail("sorted");
    check = static_cast<std::uint64_t>(sum_after);
    ph.start();
    phase_clear([&] { list.clear(); });
    ph.stop("clear");
  }
  release();
  return check;
}

template <class Alloc>
std::uint64_t tree_kernel(const Options& o, const Alloc& a, Phases& ph) {
  Rng rng{o.seed};
  using S = tailor::set<int, std::less<int>, Alloc>;
  // Keys and probes are made before the warm-up (see list_kernel).
  std::vector<int> keys, probes;
  tailor::bench::tree_keys(o.seed, o.n, keys, probes);
  std::function<void()> release;
  ph.start();
  phase_warmup([&] { release = warm_up<S::node_bytes>(a, 3 * o.n, o.n, rng); });
  ph.stop("warmup");
  std::uint64_t check = 0;
  {
    auto set = std::make_unique<S>(a);
    ph.start();
    phase_insert([&] {
      for (int k : keys) set->insert(k);
    });
    ph.stop("insert");
    ph.note("same_page_in_order", same_page(*set));
    std::size_t found = 0;
    ph.start();
    phase_find([&] {
      for (int p : probes) found += set->find(p) != set->end();
    });
    ph.stop("find");
    if (found != probes.size()) fail("every probe found");
    std::int64_t sum = 0;
    ph.start();
    phase_for_each([&] { std::for_each(set->begin(), set->end(), [&sum](int x) { sum += x; }); });
    ph.stop("for_each");
    check = static_cast<std::uint64_t>(sum) ^ set->size();
    ph.start();
    phase_destroy([&] { set.reset(); });
    ph.stop("destroy");
  }
  release();
  return check;
}

/// The dynamism kernel: after the list warm-up, a list of N elements is
/// worked on in rounds of one full traversal (N non-modifying steps) and x
/// replacements (an element erased at random, a new one inserted before
/// another random element: 2 modifying operations each), x chosen so that
/// D = M / (M + NM) is --dynamism percent; rounds until about 20N
/// operations. The list counts its operations (count_dynamism) and the
/// measured D is reported with the time per operation.
template <class Alloc>
std::uint64_t mixed_kernel(const Options& o, const Alloc& a, Phases& ph) {
  Rng rng{o.seed};
  using L = tailor::list<int, Alloc, tailor::count_dynamism>;
  std::vector<typename L::iterator> its;  // before the warm-up (see list_kernel)
  its.reserve(o.n);
  std::function<void()> release;
  ph.start();
  phase_warmup([&] { release = warm_up<L::node_bytes>(a, 2 * o.n, o.n, rng); });
  ph.stop("warmup");
  std::uint64_t check = 0;
  {
    L list(a);
    for (std::size_t i = 0; i < o.n; ++i) {
      list.push_back(static_cast<int>(rng.next() >> 34));
      its.push_back(std::prev(list.end()));
    }
    list.reset_dynamism();
    const double d = o.dynamism / 100.0;
    const auto replacements = static_cast<std::size_t>(static_cast<double>(o.n) * d / (1 - d) / 2 + 0.5);
    const std::size_t ops_per_round = o.n + 2 * replacements;
    const std::size_t rounds = std::max<std::size_t>(1, 20 * o.n / ops_per_round);
    std::int64_t sum = 0;
    ph.start();
    phase_mixed([&] {
      for (std::size_t r = 0; r < rounds; ++r) {
        for (int x : list) sum += x;
        for (std::size_t i = 0; i < replacements; ++i) {
          const std::size_t victim = rng.below(its.size());
          list.erase(its[victim]);
          its[victim] = its.back();
          its.pop_back();
          const std::size_t at = rng.below(its.size());
          its.push_back(list.insert(its[at], static_cast<int>(rng.next() >> 34)));
        }
      }
    });
    ph.stop("mixed");
    const auto counts = list.dynamism();
    ph.note("measured_dynamism", counts.dynamism());
    ph.note("ns_per_op", ph.last_cpu() * 1e9 / static_cast<double>(counts.modifying + counts.non_modifying));
    if (list.size() != o.n) fail("mixed kernel keeps the list's size");
    check = static_cast<std::uint64_t>(sum);
  }
  release();
  return check;
}

template <class Alloc>
std::uint64_t run(const Options& o, const Alloc& a, Phases& ph) {
  if (o.kernel == "mixed") return mixed_kernel(o, a, ph);
  return o.kernel == "list" ? list_kernel(o, a, ph) : tree_kernel(o, a, ph);
}

template <class P>
std::uint64_t run_tailor(const Options& o, Phases& ph, unsigned& k, bool& on_libtailor) {
  tailor::locality_heap heap{{o.k, false}};
  k = heap.k();
  on_libtailor = heap.source().on_libtailor();
  return run(o, tailor::allocator<int, P>(heap), ph);
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  Phases ph;
  std::uint64_t check = 0;
  unsigned k = 0;
  bool heap_on_libtailor = false;
  if (o.alloc == "std") {
    check = run(o, std::allocator<int>(), ph);
  } else if (o.predicate == "first") {
    check = run_tailor<tailor::locality::First>(o, ph, k, heap_on_libtailor);
  } else if (o.predicate == "match") {
    check = run_tailor<tailor::locality::Match>(o, ph, k, heap_on_libtailor);
  } else {
    check = run_tailor<tailor::locality::Path>(o, ph, k, heap_on_libtailor);
  }
  const char* malloc_name = tailor::locality::process_region_api() != nullptr ? "libtailor" : "other";
  const char* heap_source = o.alloc == "std" ? "" : heap_on_libtailor ? "libtailor" : "mmap";
  std::printf("{\"kernel\": \"%s\", \"alloc\": \"%s\", \"predicate\": \"%s\", \"k\": %u, \"n\": %zu, "
              "\"malloc\": \"%s\", \"heap_source\": \"%s\", "
              "\"check\": %llu, \"phases\": {%s}, \"cpu\": {%s}, \"layout\": {%s}}\n",
              o.kernel.c_str(), o.alloc.c_str(), o.alloc == "std" ? "" : o.predicate.c_str(), k, o.n, malloc_name,
              heap_source,
              static_cast<unsigned long long>(check), ph.json().c_str(), ph.cpu_json().c_str(),
              ph.notes().c_str());
  return 0;
}
