// SPDX-License-Identifier: MIT
// The replay plan's file format, shared by the builder (replay_plan.cpp, which
// uses the C++ library) and tailor-replay-driver (which must not: it runs
// under the allocator being measured and calls nothing that allocates before
// its loop). So this header has constants, plain structs and inline helpers
// only: no library types, no exceptions.
//
// A plan is a trace's allocation calls, one op stream per trace thread in
// that thread's call order (docs/deploy.md, "Replay"). Objects live in
// *slots*: a table of {pointer, generation} the driver maps before its loop.
// An allocation puts its block in a slot and adds one to the slot's
// generation (store-release); the free or realloc of that block names the
// slot. A slot is reused only by the thread that freed its last object (in
// that thread's order, so no race), which keeps the table as small as the
// most objects live at once in most programs (a thread that only allocates
// what others free needs one slot per object). When the block being freed was
// allocated by another thread, the op also carries the generation its
// allocation gave the slot, and the driver waits (load-acquire) until the
// slot reaches it: that allocation comes earlier in the trace's global order,
// so every wait ends.
//
// File (version 1), in the byte order of the machine that wrote it (plans are
// built and replayed on one machine; the magic catches a foreign one):
//   PlanHeader        80 bytes
//   PlanThreadEntry   32 bytes per thread
//   words             u64 each: every thread's ops, thread after thread,
//                     at the offsets the thread entries give (multiples of 8)
// One op is a head word, then extension words in this order:
//   head        bits 0-3 kind (Kind), 4-7 flags (kWait, kBigSize),
//               bits 8-39 slot, bits 40-63 size when it is below 2^24
//   [size]      if kBigSize: the size
//   [element]   calloc: the element size (the head's size is the count)
//   [alignment] aligned: the alignment in bits 0-55, the call (AlignedCall) in 56-63
//   [wait]      if kWait: the slot generation to wait for
// Sizes are what the program asked: bytes (malloc, realloc, aligned) or an
// element count (calloc). A free has size 0.
#pragma once

#include <cstdint>

namespace tailor::replay::plan {

inline constexpr char kMagic[8] = {'T', 'A', 'I', 'L', 'O', 'R', 'P', 'L'};
inline constexpr std::uint32_t kVersion = 1;

enum Kind : std::uint8_t {
  kMalloc = 1,   // malloc(size)            (also new, realloc(NULL, n))
  kCalloc = 2,   // calloc(count, element)
  kRealloc = 3,  // realloc(slot's block, size): the new block takes the same slot
  kAligned = 4,  // an aligned call (AlignedCall)
  kFree = 5,     // free(slot's block)     (also delete, sized frees, realloc(p, 0) that freed)
};
inline constexpr unsigned kKinds = 6;  // array size for counts indexed by kind (0 unused)

// Flags of an op.
inline constexpr unsigned kWait = 1;     // the block was allocated by another thread: a wait word follows
inline constexpr unsigned kBigSize = 2;  // the size did not fit in the head: a size word follows

enum AlignedCall : std::uint8_t {
  kMemalign = 1,
  kPosixMemalign = 2,
  kAlignedAlloc = 3,
  kValloc = 4,
  kPvalloc = 5,
  kNewAligned = 6,  // operator new with std::align_val_t, replayed as aligned_alloc
};
inline constexpr unsigned kAlignedCalls = 7;

inline constexpr std::uint64_t kInlineSizeLimit = std::uint64_t{1} << 24;
inline constexpr std::uint64_t kMaxSlots = std::uint64_t{1} << 32;
inline constexpr std::uint64_t kMaxAlignment = (std::uint64_t{1} << 56) - 1;
inline constexpr unsigned kMaxOpWords = 4;

struct PlanHeader {
  char magic[8];
  std::uint32_t version;
  std::uint32_t threads;            // thread entries that follow
  std::uint64_t slots;              // slot table entries the driver maps
  std::uint64_t words;              // op words of all threads
  std::uint64_t calls[kKinds];      // ops by kind; calls[0] = all ops
};
static_assert(sizeof(PlanHeader) == 80);

struct PlanThreadEntry {
  std::uint64_t offset;        // byte offset of its first word in the file
  std::uint64_t words;         // its op words
  std::uint64_t calls;         // its ops
  std::uint32_t trace_thread;  // the trace's thread index
  std::uint32_t reserved;
};
static_assert(sizeof(PlanThreadEntry) == 32);

constexpr std::uint64_t head_word(Kind kind, unsigned flags, std::uint32_t slot, std::uint64_t inline_size) {
  return std::uint64_t{kind} | (std::uint64_t{flags} << 4) | (std::uint64_t{slot} << 8) | (inline_size << 40);
}
constexpr unsigned kind_of(std::uint64_t head) { return static_cast<unsigned>(head & 15); }
constexpr unsigned flags_of(std::uint64_t head) { return static_cast<unsigned>((head >> 4) & 15); }
constexpr std::uint32_t slot_of(std::uint64_t head) { return static_cast<std::uint32_t>(head >> 8); }

/// Words of the op that starts with `head`, head included (1 to kMaxOpWords).
constexpr unsigned op_words(std::uint64_t head) {
  const unsigned kind = kind_of(head), flags = flags_of(head);
  return 1u + ((flags & kBigSize) ? 1u : 0u) + ((kind == kCalloc || kind == kAligned) ? 1u : 0u) +
         ((flags & kWait) ? 1u : 0u);
}

/// An op with its extension words read back.
struct Op {
  unsigned kind = 0;
  unsigned flags = 0;
  std::uint32_t slot = 0;
  std::uint64_t size = 0;
  std::uint64_t element = 0;    // calloc
  std::uint64_t alignment = 0;  // aligned
  unsigned call = 0;            // aligned: AlignedCall
  std::uint64_t wait = 0;       // kWait: generation
};

/// Decodes the op at w (op_words(w[0]) words must be readable).
inline Op decode_op(const std::uint64_t* w) {
  Op op;
  op.kind = kind_of(*w);
  op.flags = flags_of(*w);
  op.slot = slot_of(*w);
  op.size = *w >> 40;
  ++w;
  if (op.flags & kBigSize) op.size = *w++;
  if (op.kind == kCalloc) op.element = *w++;
  if (op.kind == kAligned) {
    op.alignment = *w & kMaxAlignment;
    op.call = static_cast<unsigned>(*w >> 56);
    ++w;
  }
  if (op.flags & kWait) op.wait = *w;
  return op;
}

}  // namespace tailor::replay::plan
