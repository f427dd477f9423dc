// SPDX-License-Identifier: MIT
// Names of operations and flags, as dumps and reports print them.
#include "tailor/trace/event.h"

namespace tailor::trace {

std::string_view op_name(Op op) noexcept {
  switch (op) {
    case Op::Malloc: return "malloc";
    case Op::Calloc: return "calloc";
    case Op::Realloc: return "realloc";
    case Op::Free: return "free";
    case Op::Memalign: return "memalign";
    case Op::PosixMemalign: return "posix_memalign";
    case Op::AlignedAlloc: return "aligned_alloc";
    case Op::Valloc: return "valloc";
    case Op::Pvalloc: return "pvalloc";
    case Op::New: return "new";
    case Op::Delete: return "delete";
    case Op::ThreadStart: return "thread_start";
    case Op::ThreadExit: return "thread_exit";
  }
  return "unknown";
}

std::string describe_kind(const Event& e) {
  std::string s(op_name(e.op));
  if (e.op == Op::New || e.op == Op::Delete) {
    if (e.flags & kArray) s += "[]";
  } else if (e.op == Op::Realloc && (e.flags & kArray)) {
    s = "reallocarray";
  } else if (e.op == Op::Free && (e.flags & kSized)) {
    s = (e.flags & kAligned) ? "free_aligned_sized" : "free_sized";
    return s;
  }
  std::string mods;
  auto add = [&mods](const char* m) { mods += mods.empty() ? m : std::string(",") + m; };
  if ((e.op == Op::New || e.op == Op::Delete)) {
    if (e.flags & kSized) add("sized");
    if (e.flags & kAligned) add("aligned");
    if (e.flags & kNothrow) add("nothrow");
  }
  if (!mods.empty()) s += "(" + mods + ")";
  return s;
}

}  // namespace tailor::trace
