// SPDX-License-Identifier: MIT
// Composite: a DMM composed at run time from its spec (spec.h): an ordered
// list of allocators by size range, each a mechanism template (Heap Layers
// style) on its own Memory. A request goes to the allocator whose range
// holds its routing size; a release to the allocator that owns the address
// (the owner of the memories says which: in the simulator allocator i's
// memory is the i-th 2^40-byte space, in libtailor the i-th span of a
// reservation, so the owner is one shift away, as a real allocator finds a
// block's segment). One indirect call per operation chooses the mechanism;
// inside, everything is inlined.
//
// The same code builds the DMM the simulator measures and the one libtailor
// runs as the program's malloc (docs/deploy.md): a spec means one thing.
//
// How a spec becomes mechanisms (docs/dmm.md, "The model"):
//   segregated_free_lists, segregated_fit, exact_segregated_fit,
//   strict_segregated_fit  -> SegregatedFit (segregated_fit.h)
//   simple_segregated_storage -> SimpleSegregatedStorage
//   binary_buddy, fibonacci_buddy -> BinaryBuddy, FibonacciBuddy with their
//     largest block = system.chunk; with split = false they are the strict
//     segregated fit of their block sizes (no splitting means no buddies).
// Freestanding: parts live in the memory's arena, failures are returned.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>

#include "dmm/allocator.h"
#include "dmm/assert.h"
#include "dmm/binary_buddy.h"
#include "dmm/fibonacci_buddy.h"
#include "dmm/fixed_array.h"
#include "dmm/kingsley.h"
#include "dmm/lea.h"
#include "dmm/memory.h"
#include "dmm/segregated_fit.h"
#include "dmm/segregated_lists.h"
#include "dmm/simple_segregated_storage.h"
#include "dmm/size_classes.h"
#include "dmm/spec.h"

namespace tailor::dmm {

template <Memory M>
class Composite {
 public:
  using ArenaType = typename M::Arena;
  using Classes = SizeClasses<ArenaType>;
  static constexpr std::uint64_t kMinAlignment = 8;

  /// Largest number of allocators a DMM may have.
  static constexpr std::size_t kMaxParts = 64;

  Composite() = default;
  Composite(const Composite&) = delete;
  Composite& operator=(const Composite&) = delete;
  ~Composite() { clear(); }

  /// Builds the parts of `spec`, allocator i on *memories[i]. Returns
  /// nullptr, or why allocator `failed` cannot be built (a mechanism
  /// rejecting its configuration, or the arena out of room). A spec read by
  /// the spec reader passes every rule but the arena's.
  const char* build(const SpecView& spec, M* const* memories, std::size_t& failed) {
    clear();
    if (spec.count == 0 || spec.count > kMaxParts) {
      failed = 0;
      return "a DMM has 1 to 64 allocators";
    }
    if (!reserve(spec.count)) {
      failed = 0;
      return kNoRoom;
    }
    for (std::size_t i = 0; i < spec.count; ++i) {
      const AllocatorView& a = spec.allocators[i];
      const char* why = make_part(a, *memories[i], spec, parts_[i]);
      if (why != nullptr) {
        failed = i;
        clear();
        return why;
      }
      upper_[i] = a.bounded ? a.max : UINT64_MAX;
      count_ = i + 1;
    }
    return nullptr;
  }

  /// Makes a DMM of one allocator: any mechanism (Kingsley, Lea, ...) built
  /// from `args` on `memory`, serving every size. Returns nullptr, or why not.
  template <class Mech, class... Args>
  const char* build_one(M& memory, Args&&... args) {
    clear();
    if (!reserve(1)) return kNoRoom;
    if (const char* why = emplace<Mech>(parts_[0], memory, std::forward<Args>(args)...)) return why;
    upper_[0] = UINT64_MAX;
    count_ = 1;
    return nullptr;
  }

  std::size_t parts() const noexcept { return count_; }

  /// Index of the allocator whose range holds a routing size of `bytes` (0 counts as 1).
  std::size_t part_for(std::uint64_t bytes) const noexcept {
    std::size_t i = 0;
    while (i + 1 < count_ && bytes > upper_[i]) ++i;
    return i;
  }

  Block allocate(std::size_t part, std::uint64_t bytes, std::uint64_t alignment) {
    TAILOR_ASSERT(part < count_);
    const Part& p = parts_[part];
    const Block b = p.ops->allocate(p.self, bytes, alignment);
    // Every mechanism honours the alignment it is asked for, and its block holds the request.
    TAILOR_ASSERT(b.address == 0 || ((alignment <= 1 || (b.address & (alignment - 1)) == 0) && b.bytes >= bytes));
    return b;
  }
  Block allocate(std::uint64_t bytes, std::uint64_t alignment = 0) {
    return allocate(part_for(routing_size(bytes, alignment)), bytes, alignment);
  }
  /// Releases a block of allocator `part` (the owner of its memory).
  std::uint64_t release(std::size_t part, Address address) {
    TAILOR_ASSERT(part < count_ && address != 0);
    const Part& p = parts_[part];
    return p.ops->release(p.self, address);
  }
  /// Usable bytes of a block of allocator `part` from `address` (malloc_usable_size).
  std::uint64_t usable(std::size_t part, Address address) {
    std::uint64_t n;
    if (usable_inline(part, address, n)) return n;
    const Part& p = parts_[part];
    return p.ops->usable(p.self, address);
  }
  /// The same, read inline for every mechanism of the dmm layer (one or two
  /// header loads, a compare per kind tried before it, no indirect call);
  /// false for one it does not know. Every free through a front asks it.
  [[gnu::always_inline]] bool usable_inline(std::size_t part, Address address, std::uint64_t& out) {
    return usable_of<SegregatedFit<M>, SimpleSegregatedStorage<M>, SegregatedLists<M>, Kingsley<M>, Lea<M>,
                     FibonacciBuddy<M>, BinaryBuddy<M>>(parts_[part], address, out);
  }

  std::uint64_t steps(std::size_t i) const noexcept { return parts_[i].ops->steps(parts_[i].self); }
  MechanismKind kind(std::size_t i) const noexcept { return parts_[i].ops->kind; }
  /// Whether allocator i may split, coalesce or give back its free blocks
  /// (Kingsley, segregated lists and simple segregated storage never do).
  bool merges(std::size_t i) const noexcept { return parts_[i].ops->merges(parts_[i].self); }
  std::uint64_t splits(std::size_t i) const noexcept { return parts_[i].ops->splits(parts_[i].self); }
  std::uint64_t coalesces(std::size_t i) const noexcept { return parts_[i].ops->coalesces(parts_[i].self); }
  std::uint64_t min_alignment(std::size_t i) const noexcept { return parts_[i].ops->min_alignment(parts_[i].self); }
  /// Bytes of private state of a mechanism as one allocator of a
  /// composition: its holder and what it keeps in the arena (class tables,
  /// list heads). The simulator adds this for a built-in it runs alone, so
  /// that its resident bytes are what libtailor's one-allocator DMM has.
  template <class Mech>
  static std::size_t state_of(const Mech& m) noexcept {
    std::size_t n = sizeof(Holder<Mech>);
    if constexpr (requires { m.state_bytes(); }) n += m.state_bytes();
    return n;
  }
  /// Bytes of private state of allocator i.
  std::size_t state_bytes(std::size_t i) const noexcept { return parts_[i].ops->state_bytes(parts_[i].self); }
  /// Bytes of private state (the parts and their class tables and lists).
  std::size_t state_bytes() const noexcept {
    std::size_t n = 0;
    for (std::size_t i = 0; i < count_; ++i) n += parts_[i].ops->state_bytes(parts_[i].self);
    return n;
  }

  /// Size classes of allocator `a` over its range (min, max], for `exact`
  /// classes from sizes[0..n) (increasing). False if the arena has no room.
  static bool classes_for(const AllocatorView& a, const std::uint64_t* sizes, std::size_t n, Classes& out) {
    const bool open = !a.bounded;
    const std::uint64_t top = open ? 0 : round8(a.max);
    FixedArray<std::uint64_t, ArenaType> bounds;
    std::size_t k = 0;
    switch (a.classes) {
      case ClassKind::kSingle:
        if (!bounds.assign(1)) return false;
        break;
      case ClassKind::kPowersOfTwo:
        if (!bounds.assign(40)) return false;
        for (std::uint64_t p = 8; p <= (std::uint64_t{1} << 40) && (open || p < top); p <<= 1)
          if (p > a.min) bounds[k++] = p;
        break;
      case ClassKind::kExact:
        if (!bounds.assign(n + 1)) return false;
        for (std::size_t i = 0; i < n; ++i) {
          const std::uint64_t s = sizes[i];
          if (s > a.min && (open || s < top) && (k == 0 || bounds[k - 1] != round8(s))) bounds[k++] = round8(s);
        }
        break;
      case ClassKind::kBounds:
        if (!bounds.assign(a.bound_count + 1)) return false;
        for (std::size_t i = 0; i < a.bound_count; ++i)
          if (open || a.bounds[i] < top) bounds[k++] = a.bounds[i];
        break;
    }
    if (!open) bounds[k++] = top;
    if (Classes::check(bounds.data(), k, open) != nullptr) return false;
    return out.assign(bounds.data(), k, open);
  }

  /// Block sizes of a Fibonacci buddy (fibonacci_buddy.h: 16-byte units 2,
  /// 3, 5, ...) up to `up_to`, into out[0..61); returns how many.
  static std::size_t fibonacci_sizes(std::uint64_t up_to, std::uint64_t (&out)[FibonacciBuddy<M>::kMaxTop + 1]) {
    std::size_t n = 0;
    for (std::uint64_t a = 2, b = 3; n <= FibonacciBuddy<M>::kMaxTop && a * FibonacciBuddy<M>::kUnit <= up_to;
         std::swap(a, b), b += a)
      out[n++] = a * FibonacciBuddy<M>::kUnit;
    return n;
  }

 private:
  struct Ops {
    Block (*allocate)(void*, std::uint64_t, std::uint64_t);
    std::uint64_t (*release)(void*, Address);
    std::uint64_t (*usable)(void*, Address);
    std::uint64_t (*steps)(const void*);
    std::uint64_t (*splits)(const void*);
    std::uint64_t (*coalesces)(const void*);
    std::uint64_t (*min_alignment)(const void*);
    std::size_t (*state_bytes)(const void*);
    void (*destroy)(void*);
    MechanismKind kind;
    bool (*merges)(const void*);
  };
  struct Part {
    void* self = nullptr;
    const Ops* ops = nullptr;
  };

  // A mechanism and the one rule the composition adds to it: below 16,
  // alignment follows the request's size (docs/dmm.md, "alignment"): a size
  // that is a multiple of 16 may hold a 16-aligned type, so it gets 16.
  template <class Mech>
  struct Holder {
    Mech mech;
    bool follow_size;

    template <class... Args>
    explicit Holder(Args&&... args) : mech(std::forward<Args>(args)...), follow_size(min_alignment_of(mech) < 16) {}

    static std::uint64_t min_alignment_of(const Mech& m) noexcept {
      if constexpr (requires { m.min_alignment(); })
        return m.min_alignment();
      else
        return Mech::kMinAlignment;
    }
    static Block allocate(void* p, std::uint64_t bytes, std::uint64_t alignment) {
      Holder& h = *static_cast<Holder*>(p);
      if (h.follow_size && alignment < 16 && bytes != 0 && bytes % 16 == 0) alignment = 16;
      return h.mech.allocate(bytes, alignment);
    }
    static std::uint64_t release(void* p, Address a) { return static_cast<Holder*>(p)->mech.release(a); }
    static std::uint64_t usable(void* p, Address a) { return static_cast<Holder*>(p)->mech.usable(a); }
    static std::uint64_t steps(const void* p) { return static_cast<const Holder*>(p)->mech.steps(); }
    // Mechanisms that never split or coalesce (Kingsley, segregated lists) do not count either.
    static std::uint64_t splits(const void* p) {
      const Mech& m = static_cast<const Holder*>(p)->mech;
      if constexpr (requires { m.splits(); }) return m.splits();
      return 0;
    }
    static std::uint64_t coalesces(const void* p) {
      const Mech& m = static_cast<const Holder*>(p)->mech;
      if constexpr (requires { m.coalesces(); }) return m.coalesces();
      return 0;
    }
    static std::uint64_t min_alignment(const void* p) { return min_alignment_of(static_cast<const Holder*>(p)->mech); }
    static std::size_t state_bytes(const void* p) { return state_of(static_cast<const Holder*>(p)->mech); }
    static void destroy(void* p) {
      static_cast<Holder*>(p)->~Holder();
      ArenaType::release(p, sizeof(Holder));
    }
    static constexpr MechanismKind kind_of() noexcept {
      if constexpr (requires { Mech::kKind; }) return Mech::kKind;
      return MechanismKind::kOther;
    }
    static bool merges(const void* p) {
      const Mech& m = static_cast<const Holder*>(p)->mech;
      if constexpr (requires { m.merges(); }) return m.merges();
      return false;
    }
    static constexpr Ops kOps = {allocate,  release,       usable,      steps,   splits,
                                 coalesces, min_alignment, state_bytes, destroy, kind_of(),
                                 merges};
  };

  // usable_inline over the mechanisms Mechs, in the order given.
  template <class... Mechs>
  [[gnu::always_inline]] static bool usable_of(const Part& p, Address address, std::uint64_t& out) {
    return ((p.ops == &Holder<Mechs>::kOps && (out = static_cast<Holder<Mechs>*>(p.self)->mech.usable(address), true)) ||
            ...);
  }

  static constexpr std::uint64_t round8(std::uint64_t n) noexcept { return (n + 7) & ~std::uint64_t{7}; }

  // Places a Holder<Mech> built from `args` in the arena; nullptr or why not.
  template <class Mech, class... Args>
  static const char* emplace(Part& out, Args&&... args) {
    void* p = ArenaType::allocate(sizeof(Holder<Mech>));
    if (p == nullptr) return kNoRoom;
    auto* h = ::new (p) Holder<Mech>(std::forward<Args>(args)...);
    if constexpr (requires { h->mech.ok(); }) {
      if (!h->mech.ok()) {
        Holder<Mech>::destroy(h);
        return kNoRoom;
      }
    }
    out.self = h;
    out.ops = &Holder<Mech>::kOps;
    return nullptr;
  }

  static const char* make_part(const AllocatorView& a, M& m, const SpecView& spec, Part& out) {
    const bool buddy = a.mechanism == Mechanism::kBinaryBuddy || a.mechanism == Mechanism::kFibonacciBuddy;
    if (buddy && a.split) {
      if (a.mechanism == Mechanism::kBinaryBuddy) {
        const auto order = static_cast<unsigned>(std::countr_zero(a.chunk));
        if (const char* why = BinaryBuddy<M>::check(order, a.granularity)) return why;
        const char* why = emplace<BinaryBuddy<M>>(out, m, order, a.granularity);
        if (why == nullptr) static_cast<Holder<BinaryBuddy<M>>*>(out.self)->mech.set_coalesce(a.coalesce);
        return why;
      }
      std::uint64_t sizes[FibonacciBuddy<M>::kMaxTop + 1];
      const std::size_t n = fibonacci_sizes(UINT64_MAX / 4, sizes);
      const auto top = static_cast<unsigned>(std::max<std::ptrdiff_t>(std::lower_bound(sizes, sizes + n, a.chunk) - sizes, 2));
      if (const char* why = FibonacciBuddy<M>::check(top, a.granularity)) return why;
      const char* why = emplace<FibonacciBuddy<M>>(out, m, top, a.granularity);
      if (why == nullptr) static_cast<Holder<FibonacciBuddy<M>>*>(out.self)->mech.set_coalesce(a.coalesce);
      return why;
    }
    if (buddy) {
      // No splitting: the strict segregated fit of the buddy's block sizes.
      std::uint64_t blocks[64];
      std::size_t nb = 0;
      if (a.mechanism == Mechanism::kBinaryBuddy) {
        for (std::uint64_t b = 32; b <= a.chunk && nb < 64; b <<= 1) blocks[nb++] = b;
      } else {
        std::uint64_t sizes[FibonacciBuddy<M>::kMaxTop + 1];
        nb = fibonacci_sizes(a.chunk, sizes);
        std::copy(sizes, sizes + nb, blocks);
      }
      std::uint64_t bounds[64];
      std::size_t k = 0;
      for (std::size_t i = 0; i < nb; ++i)
        if (blocks[i] - 16 > a.min) bounds[k++] = blocks[i] - 16;
      if (k == 0) return "no block up to system.chunk bytes is above sizes.min";
      const bool open = !a.bounded || bounds[k - 1] < a.max;  // larger requests: blocks of their own size
      Classes classes;
      if (!classes.assign(bounds, k, open)) return kNoRoom;
      SegregatedFitConfig c;
      c.round_to_class = true;
      c.header = 16;
      c.alignment = 16;
      c.chunk = c.granularity = a.granularity;
      if (const char* why = SegregatedFit<M>::check(c)) return why;
      return emplace<SegregatedFit<M>>(out, m, std::move(classes), c);
    }
    Classes classes;
    if (!classes_for(a, spec.exact_sizes, spec.exact_size_count, classes))
      return "cannot make its size classes (out of memory, or no class in its range)";
    if (a.mechanism == Mechanism::kSimpleSegregatedStorage) {
      const SimpleSegregatedConfig c{a.structure, a.fit, a.policy, a.alignment, a.chunk, a.area_lists};
      if (const char* why = SimpleSegregatedStorage<M>::check(classes, c)) return why;
      return emplace<SimpleSegregatedStorage<M>>(out, m, std::move(classes), c);
    }
    SegregatedFitConfig c;
    c.structure = a.structure;
    c.fit = a.fit;
    c.policy = a.policy;
    c.search_larger = a.mechanism == Mechanism::kSegregatedFit;
    c.round_to_class = a.mechanism == Mechanism::kStrictSegregatedFit || a.mechanism == Mechanism::kExactSegregatedFit;
    c.split = a.split;
    c.coalesce = a.coalesce;
    c.header = a.header;
    c.alignment = a.alignment;
    c.chunk = a.chunk;
    c.granularity = a.granularity;
    c.returns = a.returns;
    if (const char* why = SegregatedFit<M>::check(c)) return why;
    return emplace<SegregatedFit<M>>(out, m, std::move(classes), c);
  }

  static constexpr const char* kNoRoom = "out of memory for the DMM's own state";

  void clear() noexcept {
    for (std::size_t i = 0; i < count_; ++i) parts_[i].ops->destroy(parts_[i].self);
    count_ = 0;
  }

  // Room for n parts (in the arena: a one-allocator DMM keeps one).
  bool reserve(std::size_t n) { return parts_.assign(n) && upper_.assign(n); }

  FixedArray<Part, ArenaType> parts_;
  FixedArray<std::uint64_t, ArenaType> upper_;  // inclusive max of each range (UINT64_MAX: none)
  std::size_t count_ = 0;
};

}  // namespace tailor::dmm
