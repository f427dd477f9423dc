// SPDX-License-Identifier: MIT
// Whole call stacks in the recorder; see stack_recorder.h.
#include "record/stack_recorder.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include <sys/mman.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "record/cfi_unwinder.h"
#include "record/mapped_table.h"
#include "record/recorder.h"

namespace tailor::record {

int stack_depth = 0;

namespace {

enum class Unwinder { kRules, kLibunwind, kFramePointers };
Unwinder unwinder = Unwinder::kRules;
std::atomic<std::uint32_t> next_id{1};

// Frames above the program's call that unwinding sees first: capture_stack,
// record_stacked, the hook (and a frame of the unwinder's own).
constexpr int kSkipMax = 8;
constexpr std::uint32_t kQueue = 1u << 14;  // nodes waiting for the writer (at most Writer::max_events)
// Children of a node looked for in its list (most recently used first);
// a node with more has its children in the hash table too.
constexpr std::uint32_t kListed = 8;
// Children found lately, by (parent, address): most look-ups end here, with
// one load instead of a walk along a list of siblings (cfrac: a third of
// the recorder's time went to that walk).
constexpr std::size_t kRecent = 4096;  // a power of two

// A node of the trie, by its index in the log (0: the root). Children hang
// from their parent in a list, the last one used first: a loop's calls find
// theirs at once, and new nodes are appended, so that a program whose every
// allocation has a stack of its own (a tree built recursively) touches
// memory in order rather than a random slot of a table per call.
struct Node {
  std::uint64_t address;
  std::uint32_t id;            // in the trace
  std::uint32_t parent;        // index
  std::uint32_t first_child;   // index, 0: none
  std::uint32_t next_sibling;  // index, 0: none
  std::uint32_t children;
  std::uint32_t unused;
};

struct Slot {  // (parent index, address) -> child index, for parents of more than kListed children
  std::uint64_t address;
  std::uint32_t parent;
  std::uint32_t child;  // 0: empty
};

}  // namespace

struct StackTrie {
  Node* nodes = nullptr;  // [0] is the root
  std::size_t node_capacity = 0;
  std::uint32_t node_count = 0;
  Slot* slots = nullptr;
  std::size_t capacity = 0;  // a power of two
  std::size_t used = 0;
  // The last stack from its outermost frame in, and its nodes' indices: the
  // next call from the same loop shares all but its innermost frames, which
  // are the only entries rewritten.
  std::uint64_t path_frames[kMaxStackDepth];
  std::uint32_t path_nodes[kMaxStackDepth];
  int path_length = 0;
  FrameRules rules;  // the DWARF unwinder's (cfi_unwinder.h)
  Slot recent[kRecent];  // child 0: empty
  // New nodes, a ring: the owner appends and publishes `queued`; the writer
  // (under the writer's lock) writes [written, queued).
  std::atomic<std::uint32_t> queued{0};
  std::uint32_t written = 0;
  trace::StackNode queue[kQueue];
};

namespace {

void* map(std::size_t bytes) noexcept {
  void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return m == MAP_FAILED ? nullptr : m;
}

// splitmix64's finalizer over both keys: return addresses differ in their
// low bits only, parents are consecutive numbers; every bit of either must
// reach the slot's bits.
std::size_t slot_of(std::uint64_t address, std::uint32_t parent, std::size_t capacity) noexcept {
  std::uint64_t h = address + 0x9e3779b97f4a7c15ull * (std::uint64_t{parent} + 1);
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
  return static_cast<std::size_t>(h ^ (h >> 31)) & (capacity - 1);
}

bool grow_slots(StackTrie& t) noexcept {
  return grow_mapped_table(
      t.slots, t.capacity, 1024, [](const Slot& s) { return s.child != 0; },
      [](const Slot& s, std::size_t capacity) { return slot_of(s.address, s.parent, capacity); });
}

bool hash_insert(StackTrie& t, std::uint32_t parent, std::uint64_t address, std::uint32_t child) noexcept {
  if (2 * (t.used + 1) > t.capacity && !grow_slots(t)) return false;
  std::size_t at = slot_of(address, parent, t.capacity);
  while (t.slots[at].child != 0) at = (at + 1) & (t.capacity - 1);
  t.slots[at] = {address, parent, child};
  ++t.used;
  return true;
}

std::uint32_t hash_find(const StackTrie& t, std::uint32_t parent, std::uint64_t address) noexcept {
  if (t.capacity == 0) return 0;
  for (std::size_t at = slot_of(address, parent, t.capacity); t.slots[at].child != 0; at = (at + 1) & (t.capacity - 1))
    if (t.slots[at].address == address && t.slots[at].parent == parent) return t.slots[at].child;
  return 0;
}

bool grow_nodes(StackTrie& t) noexcept {
  const std::size_t capacity = t.node_capacity ? 2 * t.node_capacity : 4096;
  void* m = t.nodes ? mremap(t.nodes, t.node_capacity * sizeof(Node), capacity * sizeof(Node), MREMAP_MAYMOVE)
                    : map(capacity * sizeof(Node));
  if (m == MAP_FAILED || m == nullptr) return false;
  t.nodes = static_cast<Node*>(m);
  t.node_capacity = capacity;
  if (t.node_count == 0) {
    t.nodes[0] = {};
    t.node_count = 1;
  }
  return true;
}

// child() when the recent children do not have it: the parent's list, its
// hash table, or a new node.
std::uint32_t child_of(ThreadLog* log, StackTrie& t, std::uint32_t parent, std::uint64_t address) noexcept {
  Node& p = t.nodes[parent];
  std::uint32_t prev = 0, walked = 0;
  for (std::uint32_t c = p.first_child; c != 0 && walked < kListed; prev = c, c = t.nodes[c].next_sibling, ++walked) {
    if (t.nodes[c].address != address) continue;
    if (prev != 0) {  // to the front
      t.nodes[prev].next_sibling = t.nodes[c].next_sibling;
      t.nodes[c].next_sibling = p.first_child;
      p.first_child = c;
    }
    return c;
  }
  if (p.children > kListed) {
    if (const std::uint32_t c = hash_find(t, parent, address)) return c;
  }
  if (t.node_count == t.node_capacity && !grow_nodes(t)) return 0;
  Node& q = t.nodes[parent];  // (the nodes may have moved)
  const std::uint32_t index = t.node_count;
  std::uint32_t queued = t.queued.load(std::memory_order_relaxed);
  if (queued - __atomic_load_n(&t.written, __ATOMIC_ACQUIRE) == kQueue) flush_stack_nodes(log);
  const std::uint32_t id = next_id.fetch_add(1, std::memory_order_relaxed);
  t.nodes[index] = {address, id, parent, 0, q.first_child, 0, 0};
  q.first_child = index;
  ++t.node_count;
  if (++q.children > kListed) {
    // A wide node: its children in the hash table too (all of them, once).
    bool ok = true;
    if (q.children == kListed + 1)
      for (std::uint32_t c = q.first_child; c != 0 && ok; c = t.nodes[c].next_sibling)
        ok = hash_insert(t, parent, t.nodes[c].address, c);
    else
      ok = hash_insert(t, parent, address, index);
    if (!ok) return 0;
  }
  t.queue[queued % kQueue] = {id, q.id, address};
  t.queued.store(queued + 1, std::memory_order_release);
  return index;
}

// The child of node `parent` for `address`, made and queued if new; its
// index, or 0 if out of memory.
std::uint32_t child(ThreadLog* log, StackTrie& t, std::uint32_t parent, std::uint64_t address) noexcept {
  Slot& recent = t.recent[slot_of(address, parent, kRecent)];
  if (recent.address == address && recent.parent == parent && recent.child != 0) return recent.child;
  const std::uint32_t c = child_of(log, t, parent, address);
  if (c != 0) recent = {address, parent, c};
  return c;
}

int frame_pointer_backtrace(std::uint64_t* out, int max) noexcept {
  if (!thread_stack_bounds()) return 0;
  auto fp = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
  int n = 0;
  while (n < max && fp >= stack_lo && fp + 16 <= stack_hi && (fp & 7) == 0) {
    const auto* frame = reinterpret_cast<const std::uintptr_t*>(fp);
    if (frame[1] == 0) break;
    out[n++] = frame[1];
    if (frame[0] <= fp) break;  // the chain goes up the stack, or it ends
    fp = frame[0];
  }
  return n;
}

}  // namespace

void stacks_init() noexcept {
  const char* depth = getenv("TAILOR_RECORD_STACKS");
  if (!depth) return;
  const long d = std::atol(depth);
  stack_depth = d <= 0 ? 0 : d > kMaxStackDepth ? kMaxStackDepth : static_cast<int>(d);
  const char* unwind = getenv("TAILOR_RECORD_UNWIND");
  unwinder = unwind && std::strcmp(unwind, "fp") == 0          ? Unwinder::kFramePointers
             : unwind && std::strcmp(unwind, "libunwind") == 0 ? Unwinder::kLibunwind
                                                              : Unwinder::kRules;
  // libunwind serves the rules' fallback too.
  if (stack_depth && unwinder != Unwinder::kFramePointers)
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
}

std::uint32_t capture_stack(ThreadLog* log, std::uint64_t callsite) noexcept {
  if (!log->stacks) {
    log->stacks = static_cast<StackTrie*>(map(sizeof(StackTrie)));
    if (!log->stacks) return 0;
    new (log->stacks) StackTrie();
  }
  StackTrie& t = *log->stacks;
  if (t.node_count == 0 && !grow_nodes(t)) return 0;
  std::uint64_t frames[kMaxStackDepth + kSkipMax];
  const int want = stack_depth + kSkipMax;
  int n = unwinder == Unwinder::kFramePointers ? frame_pointer_backtrace(frames, want)
          : unwinder == Unwinder::kRules         ? cfi_backtrace(t.rules, frames, want)
                                                 : -1;
  if (n < 0) n = unw_backtrace(reinterpret_cast<void**>(frames), want);
  // The program's frames start at the hook's return address.
  int first = 0;
  while (first < n && first < kSkipMax && frames[first] != callsite) ++first;
  if (first == n || first == kSkipMax) {  // not found (a tail call into the hook): the call site alone
    frames[0] = callsite;
    first = 0;
    n = 1;
  }
  const std::uint64_t* stack = frames + first;  // innermost first
  const int count = n - first < stack_depth ? n - first : stack_depth;
  // Outermost frames shared with the last stack keep their nodes.
  int k = 0;
  while (k < count && k < t.path_length && stack[count - 1 - k] == t.path_frames[k]) ++k;
  for (; k < count; ++k) {
    const std::uint64_t address = stack[count - 1 - k];
    const std::uint32_t node = child(log, t, k ? t.path_nodes[k - 1] : 0, address);
    if (node == 0) {
      t.path_length = 0;
      return 0;
    }
    t.path_frames[k] = address;
    t.path_nodes[k] = node;
  }
  t.path_length = count;
  return count ? t.nodes[t.path_nodes[count - 1]].id : 0;
}

bool write_stack_nodes(trace::Writer& writer, ThreadLog* log) noexcept {
  StackTrie* t = log->stacks;
  if (!t) return true;
  const std::uint32_t queued = t->queued.load(std::memory_order_acquire);
  while (t->written != queued) {
    const std::uint32_t from = t->written % kQueue;
    const std::uint32_t run = queued - t->written < kQueue - from ? queued - t->written : kQueue - from;
    if (!writer.write_stacks(log->thread, t->queue + from, run)) return false;
    __atomic_store_n(&t->written, t->written + run, __ATOMIC_RELEASE);
  }
  return true;
}

void stacks_after_fork(ThreadLog* logs_live, ThreadLog* logs_free) noexcept {
  next_id.store(1);
  for (ThreadLog* list : {logs_live, logs_free})
    for (ThreadLog* log = list; log; log = log->next) {
      StackTrie* t = log->stacks;
      if (!t) continue;
      if (t->slots) munmap(t->slots, t->capacity * sizeof(Slot));
      t->slots = nullptr;
      t->capacity = t->used = 0;
      std::memset(t->recent, 0, sizeof t->recent);
      t->node_count = 0;  // the root is made again at the next stack
      t->path_length = 0;
      t->queued.store(0);
      t->written = 0;
    }
}

}  // namespace tailor::record
