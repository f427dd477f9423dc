// SPDX-License-Identifier: MIT
// One heap event as the trace library hands it to analyzers and takes it from
// the recorder. The meaning of each field per operation is the contract between
// `tailor record` and every consumer (stats, simulate, search, replay); it is
// written down in docs/trace-format.md and must change only with the format
// version.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tailor::trace {

/// What the traced program called. Values are part of the on-disk format.
enum class Op : std::uint8_t {
  Malloc = 1,         ///< size = bytes, address = result
  Calloc = 2,         ///< size = element count, aux = element size, address = result
  Realloc = 3,        ///< size = new bytes, address = new block, aux = old block
  Free = 4,           ///< address = block; size = size passed to free_sized (flag Sized)
  Memalign = 5,       ///< size = bytes, aux = alignment, address = result
  PosixMemalign = 6,  ///< size = bytes, aux = alignment, address = result (0 on error)
  AlignedAlloc = 7,   ///< size = bytes, aux = alignment, address = result
  Valloc = 8,         ///< size = bytes, aux = page size, address = result
  Pvalloc = 9,        ///< size = bytes, aux = page size, address = result
  New = 10,           ///< operator new; flags say array / aligned / nothrow; aux = alignment
  Delete = 11,        ///< operator delete; flags say array / sized / aligned; size, aux as passed
  ThreadStart = 12,   ///< size = kernel thread id
  ThreadExit = 13,    ///< no payload
};
inline constexpr std::uint8_t kMaxOp = 13;

/// Modifiers of an operation. Values are part of the on-disk format.
enum Flag : std::uint8_t {
  kArray = 1 << 0,    ///< new[] / delete[]; reallocarray for Realloc
  kSized = 1 << 1,    ///< the call passed the block's size (sized delete, free_sized)
  kAligned = 1 << 2,  ///< the call passed an alignment (aligned new/delete, free_aligned_sized)
  kNothrow = 1 << 3,  ///< the nothrow form of operator new / delete
};

/// One event. Time is CLOCK_MONOTONIC in nanoseconds. `thread` is the
/// recorder's dense thread index (0 = the first thread that allocated).
struct Event {
  std::uint64_t time_ns = 0;
  std::uint64_t size = 0;
  std::uint64_t address = 0;
  std::uint64_t aux = 0;
  std::uint64_t callsite = 0;  ///< return address into the caller of the allocation function
  std::uint32_t thread = 0;
  std::uint32_t stack = 0;     ///< whole call stack (stacks.h; Reader::stacks()), 0 if not recorded
  Op op = Op::Malloc;
  std::uint8_t flags = 0;

  friend bool operator==(const Event&, const Event&) = default;
};

/// True for the operations that return a new block (Realloc excluded).
constexpr bool is_allocation(Op op) noexcept {
  switch (op) {
    case Op::Malloc: case Op::Calloc: case Op::Memalign: case Op::PosixMemalign:
    case Op::AlignedAlloc: case Op::Valloc: case Op::Pvalloc: case Op::New:
      return true;
    default:
      return false;
  }
}

/// True for the operations that release a block.
constexpr bool is_release(Op op) noexcept { return op == Op::Free || op == Op::Delete; }

/// True for the allocation calls that take an alignment.
constexpr bool is_aligned(const Event& e) noexcept {
  switch (e.op) {
    case Op::Memalign: case Op::PosixMemalign: case Op::AlignedAlloc: case Op::Valloc: case Op::Pvalloc:
      return true;
    case Op::New:
      return (e.flags & kAligned) != 0;
    default:
      return false;
  }
}

/// Bytes the program asked for in an allocation or realloc event; calloc's
/// count * size saturates at UINT64_MAX when it overflows (the call then failed).
constexpr std::uint64_t requested_bytes(const Event& e) noexcept {
  if (e.op == Op::Calloc) {
    std::uint64_t bytes = 0;
    return __builtin_mul_overflow(e.size, e.aux, &bytes) ? UINT64_MAX : bytes;
  }
  return e.size;
}

/// Stable lower-case name of an operation ("malloc", "posix_memalign", "new", ...).
std::string_view op_name(Op op) noexcept;

/// The name an event is shown under in dumps: op name plus its flags, e.g. "new[]", "delete(sized,aligned)".
std::string describe_kind(const Event& e);

}  // namespace tailor::trace
