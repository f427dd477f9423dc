// SPDX-License-Identifier: MIT
// The locality heap (the Defero paper, section 2): free memory organized in two
// dimensions, size first, then address. Requests up to kMaxSmall bytes are
// rounded to a size class (multiples of 16 bytes); each size class keeps the
// K-classes (kbit.h) that hold a free chunk of that size in a red-black tree
// ordered by address, and an allocation predicate (predicates.h) picks the
// K-class to allocate from. A freed chunk goes back to its own K-class.
//
// Memory comes from a region_source (region_source.h) in slabs: aligned
// regions of slab_bytes() = max(64 KiB, one K-class) bytes, each carved into
// chunks of one size class, with a header at the start that names the size
// class and holds one slot per K-class of the slab (the K-class record, or
// null when the class has no free chunk). Freeing masks the address down to
// its slab, so finding a chunk's size and K-class is constant time; only
// a K-class that gains its first free chunk or loses its last one costs a
// tree insertion or removal (O(log of the K-classes of that size)).
// Requests above kMaxSmall get a region of their own with the same header.
//
// One instance is single-threaded unless built with synchronized = true (a
// spin lock around every call; the process-wide default heap is built so).
// Large regions go back at once. A slab whose chunks are all free goes back
// to the source once the heap has done heap_options::empty_slab_hold times
// as many allocations and frees as its slabs hold chunks since the slab
// emptied (checked when a slab empties or a new one is needed). Clearing
// and rebuilding everything the heap holds takes at most twice that many,
// so with the default hold of 2 such loops reuse their slabs instead of
// trading them with the source, whatever their size; and the rule counts
// operations, not time, so runs repeat exactly. trim() gives every empty
// slab back now.
//
// On a source whose regions the process's free() recognizes (libtailor's,
// libtailor_region_source.h), the heap registers itself (bind_owner), and a
// plain free() of one of its blocks comes back to deallocate().
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <new>
#include <stdexcept>
#include <string>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

#include "kbit.h"
#include "predicates.h"
#include "rb_tree_core.h"
#include "region_source.h"

namespace tailor::locality {

struct heap_options {
  /// The K of the K-Bit partition; 0 picks default_k(page size) (one K-class
  /// per page). Must be 0 or in [kMinK, kMaxK].
  unsigned k = 0;
  /// Serialize calls with a spin lock, for a heap shared between threads.
  /// (Needed too if blocks are released by plain free() on other threads.)
  bool synchronized = false;
  /// How long a slab with no live chunk is kept before it goes back to the
  /// source: until the heap has made `empty_slab_hold` x (the chunks of all
  /// its slabs) allocations and frees since it emptied. 0 gives it back at
  /// once, negative never (until trim() or the heap's destruction).
  int empty_slab_hold = 2;
};

namespace detail {
// Under AddressSanitizer, chunks that are free or not carved yet are
// poisoned, so that a container touching a node it freed is caught even
// though the heap's memory comes from mmap, which ASan does not watch.
inline void poison(const void* p, std::size_t n) noexcept {
#if defined(__SANITIZE_ADDRESS__)
  ASAN_POISON_MEMORY_REGION(p, n);
#else
  (void)p, (void)n;
#endif
}
inline void unpoison(const void* p, std::size_t n) noexcept {
#if defined(__SANITIZE_ADDRESS__)
  ASAN_UNPOISON_MEMORY_REGION(p, n);
#else
  (void)p, (void)n;
#endif
}
}  // namespace detail

template <class Source>
class basic_locality_heap {
  static_assert(region_source<Source>);

 public:
  static constexpr std::size_t kGranule = 16;
  static constexpr std::size_t kMaxSmall = 1024;
  static constexpr std::size_t kSizeClasses = kMaxSmall / kGranule;
  static constexpr std::size_t kMinSlab = std::size_t{64} << 10;
  static constexpr std::size_t kCacheLine = 64;
  /// Where chunks start in a line: see the constructor.
  static constexpr std::size_t kLineSkew = 16;

  explicit basic_locality_heap(heap_options options = {}, Source source = Source{})
      : source_(std::move(source)), synchronized_(options.synchronized), hold_(options.empty_slab_hold) {
    k_ = options.k == 0 ? default_k(source_.page_size()) : options.k;
    if (k_ < kMinK || k_ > kMaxK) throw std::invalid_argument("tailor::locality_heap: K out of range");
    shift_ = 64 - k_;
    span_ = kclass_span(k_);
    slab_bytes_ = std::max(kMinSlab, span_);
    slots_ = slab_bytes_ / span_;
    // Chunks start 16 bytes into a cache line. 32-byte chunks then alternate
    // between lying inside a line and straddling two, and reading the value
    // of a straddling list node fetches the next line, which holds the next
    // node when the list runs in address order: a prefetch in what is
    // otherwise a chain of dependent loads. Measured against chunks that
    // start on a line (docs/BENCHMARKS.md, "Session 4"): list walks in
    // address order 1.3x faster at K = 52 and 3x at K = 56, other phases of
    // both kernels unchanged within the noise. (Session 3 started them on a
    // line for callgrind's D1 counts; the timed runs did not follow.)
    data_offset_ = round_up(sizeof(slab_header) + slots_ * sizeof(kclass*), kCacheLine) + kLineSkew;
    if constexpr (requires { source_.max_align(); }) {
      if (slab_bytes_ > source_.max_align())
        throw std::invalid_argument("tailor::locality_heap: K = " + std::to_string(k_) + " needs slabs of " +
                                    std::to_string(slab_bytes_) + " bytes, aligned to their size; the region source " +
                                    "aligns to at most " + std::to_string(source_.max_align()) + " bytes");
    }
    if constexpr (requires { source_.bind_owner(&free_hook, &usable_hook, this); })
      source_.bind_owner(&free_hook, &usable_hook, this);
  }
  basic_locality_heap(const basic_locality_heap&) = delete;
  basic_locality_heap& operator=(const basic_locality_heap&) = delete;
  ~basic_locality_heap() {
    for (slab_list* list : {&used_, &empty_}) {
      for (slab_header* s = list->first; s != nullptr;) {
        slab_header* next = s->next;
        detail::unpoison(s, s->bytes);
        source_.give_back(s, s->bytes);
        s = next;
      }
    }
    for (node_block* b = node_blocks_; b != nullptr;) {
      node_block* next = b->next;
      source_.give_back(b, kNodeBlockBytes);
      b = next;
    }
  }

  unsigned k() const noexcept { return k_; }
  const Source& source() const noexcept { return source_; }
  std::size_t span() const noexcept { return span_; }
  std::size_t slab_bytes() const noexcept { return slab_bytes_; }
  /// The bytes a request of `bytes` gets (its size class), for small requests.
  static constexpr std::size_t chunk_bytes(std::size_t bytes) noexcept {
    return bytes == 0 ? kGranule : round_up(bytes, kGranule);
  }

  /// `bytes` aligned to 16 (to `align` if larger), from the K-class the
  /// predicate picks; nullptr if the region source has no memory left.
  template <allocation_predicate P>
  void* allocate(std::size_t bytes, P&& pred, std::size_t align = kGranule) noexcept {
    guard g(*this);
    if (bytes > kMaxSmall || align > kGranule) return allocate_large(bytes, align);
    return allocate_small(size_class_of(bytes), pred);
  }
  void* allocate(std::size_t bytes) noexcept { return allocate(bytes, First{}); }

  /// Releases memory from allocate; nullptr is ignored. Thread-safe only
  /// on a synchronized heap, like every other call.
  void deallocate(void* p) noexcept {
    if (p == nullptr) return;
    guard g(*this);
    slab_header* s = slab_of(p);
    if (s->magic == kLargeMagic) {
      source_.give_back(s, s->bytes);
      return;
    }
    const std::size_t slot = (reinterpret_cast<std::uintptr_t>(p) - reinterpret_cast<std::uintptr_t>(s)) >> shift_;
    kclass*& c = slots_of(s)[slot];
    if (c == nullptr) {
      c = new_kclass(s, reinterpret_cast<std::uintptr_t>(p));
      if (c == nullptr) return;  // no memory for the record: the chunk is lost, never reused
      insert_near_neighbour(classes_[s->size_class], s, slot, c);
    }
    *static_cast<void**>(p) = c->free_;
    detail::poison(p, c->chunk_);
    c->free_ = p;
    ++c->listed_;
    ++ops_;
    if (--s->live == 0) slab_emptied(s);
  }

  /// fork() support for a synchronized heap shared between threads, as
  /// pthread_atfork handlers: fork_prepare takes the heap's lock (so no
  /// other thread holds it across the fork), fork_parent and fork_child
  /// release it. The process-wide heap registers them (default_heap.cpp); a
  /// program that shares a synchronized heap of its own between threads
  /// and forks registers them after constructing the heap.
  void fork_prepare() noexcept { lock(); }
  void fork_parent() noexcept { unlock(); }
  void fork_child() noexcept { unlock(); }

  /// Gives every slab with no live chunk back to the source now.
  void trim() noexcept {
    guard g(*this);
    while (empty_.first != nullptr) release_slab(empty_.first);
  }
  /// Slabs held, and how many of them have no live chunk (tests, benchmarks).
  std::size_t slab_count() const noexcept { return used_.count + empty_.count; }
  std::size_t empty_slab_count() const noexcept { return empty_.count; }

  /// The usable bytes of a block from this heap.
  std::size_t usable_size(const void* p) const noexcept {
    const slab_header* s = slab_of(p);
    if (s->magic == kLargeMagic)
      return s->bytes - static_cast<std::size_t>(static_cast<const char*>(p) - reinterpret_cast<const char*>(s));
    return (std::size_t{s->size_class} + 1) * kGranule;
  }

  /// Whether p lies in memory this heap handed out (slabs and large regions
  /// alike). Linear in the slabs: for tests and assertions.
  bool owns(const void* p) const noexcept {
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    for (const slab_list* list : {&used_, &empty_})
      for (const slab_header* s = list->first; s != nullptr; s = s->next)
        if (a >= reinterpret_cast<std::uintptr_t>(s) && a < reinterpret_cast<std::uintptr_t>(s) + s->bytes) return true;
    return false;
  }

  // Introspection (tests, docs, benchmarks).
  std::uint64_t kclass_of(const void* p) const noexcept { return kclass_index(reinterpret_cast<std::uintptr_t>(p), k_); }
  /// The K-classes holding a free chunk of the size class of `bytes`, in
  /// address order.
  template <class F>
  void for_each_free_kclass(std::size_t bytes, F&& f) const {
    const rb_header& t = classes_[size_class_of(bytes)].tree;
    for (const rb_node* n = t.left; n != &t; n = rb_increment(const_cast<rb_node*>(n)))
      f(static_cast<const kclass&>(*n));
  }
  std::size_t free_kclasses(std::size_t bytes) const noexcept {
    std::size_t n = 0;
    for_each_free_kclass(bytes, [&n](const kclass&) { ++n; });
    return n;
  }
  /// The K-class at the root of the size class's tree (what First takes), or null.
  const kclass* root_kclass(std::size_t bytes) const noexcept {
    return static_cast<const kclass*>(classes_[size_class_of(bytes)].tree.root());
  }
  /// The red-black tree of a size class is well formed (tests).
  bool index_is_valid(std::size_t bytes) const noexcept {
    const rb_header& t = classes_[size_class_of(bytes)].tree;
    if (rb_black_height(t) < 0) return false;
    std::uint64_t prev = 0;
    bool first = true;
    for (const rb_node* n = t.left; n != &t; n = rb_increment(const_cast<rb_node*>(n))) {
      const auto& c = static_cast<const kclass&>(*n);
      if ((!first && c.index() <= prev) || c.free_chunks() == 0) return false;
      prev = c.index();
      first = false;
    }
    return true;
  }

 private:
  static constexpr std::uint64_t kSlabMagic = 0x74616c6f72736c62;   // "talorslb"
  static constexpr std::uint64_t kLargeMagic = 0x74616c6f726c7267;  // "talorlrg"
  static constexpr std::size_t kNodeBlockBytes = std::size_t{64} << 10;

  // 48 bytes, so that at K <= 48 (one K-class per slab) the slot a free
  // reads shares the header's cache line.
  struct slab_header {
    std::uint64_t magic;
    std::uint16_t size_class;
    std::uint8_t empty;  // on the empty list (else on the used list)
    std::uint8_t unused;
    std::uint32_t live;  // chunks handed out and not freed
    std::size_t bytes;
    slab_header* next;  // on the used or the empty list
    slab_header* prev;
    std::uint64_t emptied_at;  // the heap's operation count when it emptied
    // followed, in a slab, by one kclass* per K-class of the slab
  };
  /// Slabs in a doubly linked list; the empty list is in the order they emptied.
  struct slab_list {
    slab_header* first = nullptr;
    slab_header* last = nullptr;
    std::size_t count = 0;
    void push_back(slab_header* s) noexcept {
      s->next = nullptr;
      s->prev = last;
      if (last != nullptr) last->next = s;
      else first = s;
      last = s;
      ++count;
    }
    void remove(slab_header* s) noexcept {
      if (s->prev != nullptr) s->prev->next = s->next;
      else first = s->next;
      if (s->next != nullptr) s->next->prev = s->prev;
      else last = s->prev;
      --count;
    }
  };
  static_assert(sizeof(slab_header) == 48);
  struct size_class_state {
    rb_header tree;
    kclass* last = nullptr;  // the K-class allocated from last, if still in the tree
    std::uintptr_t first = UINTPTR_MAX, last_address = 0;  // the span of its slabs
  };
  struct node_block {
    node_block* next;
  };
  /// The spin lock of a synchronized heap (nothing otherwise).
  void lock() noexcept {
    if (synchronized_)
      while (lock_.test_and_set(std::memory_order_acquire)) {
      }
  }
  void unlock() noexcept {
    if (synchronized_) lock_.clear(std::memory_order_release);
  }
  struct guard {
    basic_locality_heap& h;
    explicit guard(basic_locality_heap& heap) noexcept : h(heap) { h.lock(); }
    ~guard() { h.unlock(); }
    guard(const guard&) = delete;
    guard& operator=(const guard&) = delete;
  };

  static constexpr std::size_t round_up(std::size_t n, std::size_t a) noexcept { return (n + a - 1) & ~(a - 1); }
  static constexpr std::size_t size_class_of(std::size_t bytes) noexcept { return chunk_bytes(bytes) / kGranule - 1; }
  slab_header* slab_of(const void* p) const noexcept {
    return reinterpret_cast<slab_header*>(reinterpret_cast<std::uintptr_t>(p) & ~(slab_bytes_ - 1));
  }
  static kclass** slots_of(slab_header* s) noexcept { return reinterpret_cast<kclass**>(s + 1); }

  template <class P>
  void* allocate_small(std::size_t sc, P& pred) noexcept {
    size_class_state& st = classes_[sc];
    kclass* c = nullptr;
    if constexpr (requires { pred.accepts(*st.last); }) {
      if (st.last != nullptr && pred.accepts(*st.last)) c = st.last;
    }
    if (c == nullptr) {
      if (st.tree.empty() && !add_slab(sc)) return nullptr;
      c = select(st, pred);
    }
    void* p;
    if (c->free_ != nullptr) {
      p = c->free_;
      detail::unpoison(p, c->chunk_);
      c->free_ = *static_cast<void**>(p);
      --c->listed_;
    } else {
      p = c->bump_;
      c->bump_ += c->chunk_;
      detail::unpoison(p, c->chunk_);
    }
    if (c->free_ == nullptr && c->bump_ >= c->bump_end_)
      remove_kclass(st, c);
    else
      st.last = c;
    ++ops_;
    slab_header* s = slab_of(p);
    if (s->live++ == 0 && s->empty) {  // an empty slab in use again
      empty_.remove(s);
      s->empty = 0;
      used_.push_back(s);
    }
    return p;
  }

  /// Walks the tree from the root as the predicate steers.
  template <class P>
  static kclass* select(size_class_state& st, P& pred) noexcept {
    if constexpr (requires { pred.bind(st.first, st.last_address); }) pred.bind(st.first, st.last_address);
    rb_node* n = st.tree.root();
    kclass* lo = nullptr;
    kclass* hi = nullptr;
    kclass* last = nullptr;
    for (unsigned depth = 0; n != nullptr; ++depth) {
      auto* c = static_cast<kclass*>(n);
      last = c;
      const int s = static_cast<int>(pred.steer(*c, depth));
      if (s == 0) return c;
      if (s < 0) {
        hi = c;
        n = n->left;
      } else {
        lo = c;
        n = n->right;
      }
    }
    if constexpr (requires { pred.pick(lo, hi); }) {
      if (const kclass* chosen = pred.pick(lo, hi); chosen != nullptr) return const_cast<kclass*>(chosen);
    }
    return last;
  }

  bool add_slab(std::size_t sc) noexcept {
    if (empty_.first != nullptr && hold_ > 0) release_expired();
    void* mem = source_.obtain(slab_bytes_, slab_bytes_);
    if (mem == nullptr) return false;
    detail::unpoison(mem, slab_bytes_);  // the address may have been a poisoned slab before
    auto* s = static_cast<slab_header*>(mem);
    s->magic = kSlabMagic;
    s->size_class = static_cast<std::uint16_t>(sc);
    s->empty = 0;
    s->live = 0;
    s->bytes = slab_bytes_;
    used_.push_back(s);
    capacity_ += chunks_per_slab(sc);
    size_class_state& st = classes_[sc];
    st.first = std::min(st.first, reinterpret_cast<std::uintptr_t>(s));
    st.last_address = std::max(st.last_address, reinterpret_cast<std::uintptr_t>(s) + slab_bytes_ - 1);
    const std::size_t chunk = (sc + 1) * kGranule;
    const auto base = reinterpret_cast<std::uintptr_t>(s);
    const std::uintptr_t data = base + data_offset_;
    const std::size_t chunks = (slab_bytes_ - data_offset_) / chunk;
    const std::uintptr_t data_end = data + chunks * chunk;  // the end of the last chunk
    detail::poison(reinterpret_cast<void*>(data), base + slab_bytes_ - data);
    kclass** slots = slots_of(s);
    std::fill(slots, slots + slots_, nullptr);  // sources need not hand out zeroed memory
    for (std::size_t j = 0; j < slots_; ++j) {
      const std::uintptr_t from = base + j * span_, to = from + span_;
      // The chunks whose first byte lies in [from, to).
      const std::uintptr_t first = from <= data ? data : data + (from - data + chunk - 1) / chunk * chunk;
      const std::uintptr_t end =
          std::min(data_end, to <= data ? data : data + (to - data + chunk - 1) / chunk * chunk);
      if (first >= end) continue;
      kclass* c = new_kclass(s, from);
      if (c == nullptr) break;  // the rest of the slab stays unused
      c->bump_ = reinterpret_cast<char*>(first);
      c->bump_end_ = reinterpret_cast<char*>(end);
      slots[j] = c;
      insert_kclass(classes_[sc], c);
    }
    return !classes_[sc].tree.empty();
  }

  std::size_t chunks_per_slab(std::size_t sc) const noexcept { return (slab_bytes_ - data_offset_) / ((sc + 1) * kGranule); }
  /// A slab lost its last live chunk: it joins the empty list, and slabs
  /// that have stayed empty long enough go back to the source.
  void slab_emptied(slab_header* s) noexcept {
    s->emptied_at = ops_;
    used_.remove(s);
    s->empty = 1;
    empty_.push_back(s);
    if (hold_ == 0) release_slab(s);
    else if (hold_ > 0) release_expired();
  }
  void release_expired() noexcept {
    while (empty_.first != nullptr && ops_ - empty_.first->emptied_at >= static_cast<std::uint64_t>(hold_) * capacity_)
      release_slab(empty_.first);
  }
  /// Gives an empty slab back: its K-classes (all of them listed, since
  /// every chunk is free) leave their tree first.
  void release_slab(slab_header* s) noexcept {
    empty_.remove(s);
    capacity_ -= chunks_per_slab(s->size_class);
    size_class_state& st = classes_[s->size_class];
    kclass** slots = slots_of(s);
    for (std::size_t j = 0; j < slots_; ++j)
      if (slots[j] != nullptr) remove_kclass(st, slots[j]);
    detail::unpoison(s, s->bytes);
    source_.give_back(s, s->bytes);
  }

  // The hooks of bind_owner: a plain free() of one of this heap's blocks.
  static void free_hook(void* self, void* p) noexcept { static_cast<basic_locality_heap*>(self)->deallocate(p); }
  static std::size_t usable_hook(void* self, const void* p) noexcept {
    return static_cast<const basic_locality_heap*>(self)->usable_size(p);
  }

  void* allocate_large(std::size_t bytes, std::size_t align) noexcept {
    if (align > slab_bytes_ / 2) return nullptr;
    const std::size_t offset = std::max<std::size_t>(64, align);
    if (bytes > (std::size_t{1} << 46)) return nullptr;
    const std::size_t total = round_up(offset + bytes, source_.page_size());
    void* mem = source_.obtain(total, slab_bytes_);
    if (mem == nullptr) return nullptr;
    detail::unpoison(mem, total);
    auto* s = static_cast<slab_header*>(mem);
    s->magic = kLargeMagic;
    s->size_class = 0;
    s->bytes = total;
    return static_cast<char*>(mem) + offset;
  }

  kclass* new_kclass(slab_header* s, std::uintptr_t address) noexcept {
    if (free_nodes_ == nullptr && !grow_nodes()) return nullptr;
    kclass* c = free_nodes_;
    free_nodes_ = static_cast<kclass*>(c->parent);
    c = new (c) kclass();
    c->index_ = kclass_index(address, k_);
    c->first_ = static_cast<std::uintptr_t>(c->index_) << shift_;
    c->last_ = c->first_ + (span_ - 1);
    c->chunk_ = static_cast<std::uint32_t>((std::size_t{s->size_class} + 1) * kGranule);
    return c;
  }
  bool grow_nodes() noexcept {
    void* mem = source_.obtain(kNodeBlockBytes, source_.page_size());
    if (mem == nullptr) return false;
    detail::unpoison(mem, kNodeBlockBytes);
    auto* b = static_cast<node_block*>(mem);
    b->next = node_blocks_;
    node_blocks_ = b;
    auto* first = reinterpret_cast<kclass*>(static_cast<char*>(mem) + round_up(sizeof(node_block), alignof(kclass)));
    auto* end = reinterpret_cast<kclass*>(static_cast<char*>(mem) + kNodeBlockBytes);
    for (kclass* c = first; c + 1 <= end; ++c) {
      c->parent = free_nodes_;
      free_nodes_ = c;
    }
    return true;
  }
  /// Inserts c (K-class `slot` of slab s) next to the nearest K-class of the
  /// same slab that is in the tree, found among the slots around it: its
  /// in-order neighbour, since any K-class between them would be in the slab
  /// too. That spares the walk from the root (the cost of freeing into an
  /// empty K-class at high K); with no such neighbour nearby, walk.
  void insert_near_neighbour(size_class_state& st, slab_header* s, std::size_t slot, kclass* c) noexcept {
    constexpr std::size_t kScan = 8;
    kclass** slots = slots_of(s);
    for (std::size_t d = 1; d <= kScan; ++d) {
      if (slot >= d && slots[slot - d] != nullptr) {  // predecessor: c goes right after it
        rb_node* pred = slots[slot - d];
        if (pred->right == nullptr)
          rb_insert_and_rebalance(false, c, pred, st.tree);
        else
          rb_insert_and_rebalance(true, c, rb_minimum(pred->right), st.tree);
        return;
      }
      if (slot + d < slots_ && slots[slot + d] != nullptr) {  // successor: c goes right before it
        rb_node* succ = slots[slot + d];
        if (succ->left == nullptr)
          rb_insert_and_rebalance(true, c, succ, st.tree);
        else
          rb_insert_and_rebalance(false, c, rb_maximum(succ->left), st.tree);
        return;
      }
    }
    insert_kclass(st, c);
  }
  void insert_kclass(size_class_state& st, kclass* c) noexcept {
    rb_node* p = &st.tree;
    rb_node* n = st.tree.root();
    bool left = true;
    while (n != nullptr) {
      p = n;
      left = c->index_ < static_cast<kclass*>(n)->index_;
      n = left ? n->left : n->right;
    }
    rb_insert_and_rebalance(left, c, p, st.tree);
  }
  void remove_kclass(size_class_state& st, kclass* c) noexcept {
    rb_erase_and_rebalance(c, st.tree);
    if (st.last == c) st.last = nullptr;
    slab_header* s = slab_of(reinterpret_cast<const void*>(c->first_));  // a K-class lies in one slab
    slots_of(s)[(c->first_ - reinterpret_cast<std::uintptr_t>(s)) >> shift_] = nullptr;
    c->~kclass();
    c->parent = free_nodes_;
    free_nodes_ = c;
  }

  Source source_;
  bool synchronized_;
  int hold_;
  std::atomic_flag lock_ = ATOMIC_FLAG_INIT;
  unsigned k_ = 0, shift_ = 0;
  std::size_t span_ = 0, slab_bytes_ = 0, slots_ = 0, data_offset_ = 0;
  std::array<size_class_state, kSizeClasses> classes_{};
  slab_list used_;   // slabs with a live chunk, or fresh
  slab_list empty_;  // slabs with none, oldest first
  std::uint64_t ops_ = 0;       // small allocations and frees so far
  std::uint64_t capacity_ = 0;  // chunks in all slabs held
  node_block* node_blocks_ = nullptr;
  kclass* free_nodes_ = nullptr;
};

}  // namespace tailor::locality
