// SPDX-License-Identifier: MIT
// Unwinding by cached call-frame rules; see cfi_unwinder.h.
//
// A rule is read from the FDE that libgcc's _Unwind_Find_FDE finds for the
// address (the modules' .eh_frame_hdr tables, through dl_iterate_phdr): the
// CIE's initial instructions, then the FDE's up to the address, as DWARF 5
// section 6.4 and the x86-64 psABI describe them. Nothing here allocates:
// the tables are mmap'd, the parser works on the mapped sections.
#include "record/cfi_unwinder.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

#include "record/mapped_table.h"

// libgcc's look-up (unwind-dw2-fde.h; exported by libgcc_s since GCC 3.0).
struct dwarf_eh_bases {
  void* tbase;
  void* dbase;
  void* func;
};
extern "C" const void* _Unwind_Find_FDE(void* pc, dwarf_eh_bases* bases);

namespace tailor::record {

enum : std::uint8_t { kEmpty, kStep, kOutermost, kCannot };
constexpr unsigned kRbp = 6, kRsp = 7, kReturnAddress = 16;

struct FrameRule {
  std::uint64_t address;  // a return address (the rule is the one at address - 1); 0: empty slot
  FrameShape shape;
};
static_assert(sizeof(FrameRule) == 16);

namespace {

std::atomic<std::uint64_t> g_generation{0};

// ------------------------------------------------------------ the parser

std::uint64_t uleb(const std::uint8_t*& p, const std::uint8_t* end, bool& ok) {
  std::uint64_t v = 0;
  for (unsigned shift = 0; p < end && shift < 64; shift += 7) {
    const std::uint8_t b = *p++;
    v |= std::uint64_t{b & 0x7fu} << shift;
    if (!(b & 0x80)) return v;
  }
  ok = false;
  return 0;
}

std::int64_t sleb(const std::uint8_t*& p, const std::uint8_t* end, bool& ok) {
  std::int64_t v = 0;
  unsigned shift = 0;
  for (; p < end && shift < 64;) {
    const std::uint8_t b = *p++;
    v |= static_cast<std::int64_t>(std::uint64_t{b & 0x7fu} << shift);
    shift += 7;
    if (!(b & 0x80)) {
      if (shift < 64 && (b & 0x40)) v |= -(std::int64_t{1} << shift);
      return v;
    }
  }
  ok = false;
  return 0;
}

// Skips a pointer of DW_EH_PE encoding `enc` (its value is not needed: the
// function's start comes from _Unwind_Find_FDE).
void skip_pointer(const std::uint8_t*& p, const std::uint8_t* end, std::uint8_t enc, bool& ok) {
  if (enc == 0xff) return;  // DW_EH_PE_omit
  switch (enc & 0x0f) {
    case 0x00: p += 8; break;                // absptr
    case 0x01: uleb(p, end, ok); break;      // uleb128
    case 0x09: sleb(p, end, ok); break;      // sleb128
    case 0x02: case 0x0a: p += 2; break;     // (s)data2
    case 0x03: case 0x0b: p += 4; break;     // (s)data4
    case 0x04: case 0x0c: p += 8; break;     // (s)data8
    default: ok = false;
  }
  if (p > end) ok = false;
}

// A register's rule, for the three that matter.
struct RegRule {
  std::uint8_t how = 0;  // 0: unchanged; 1: saved at CFA + offset; 2: undefined; 3: other (not followed)
  std::int64_t offset = 0;
};
struct Row {
  unsigned cfa_reg = kRsp;
  std::int64_t cfa_offset = 8;
  bool cfa_other = false;  // an expression or another register
  RegRule rbp, ra;
};

struct Cie {
  const std::uint8_t* instructions = nullptr;
  const std::uint8_t* end = nullptr;
  std::uint64_t code_align = 1;
  std::int64_t data_align = -8;
  std::uint8_t fde_encoding = 0;
  bool has_augmentation_data = false;
  bool signal_frame = false;
};

// A section entry at p: its contents' start and end (the length word skipped).
bool entry(const std::uint8_t* p, const std::uint8_t*& body, const std::uint8_t*& end) {
  std::uint32_t len32;
  std::memcpy(&len32, p, 4);
  if (len32 == 0) return false;
  if (len32 == 0xffffffffu) {
    std::uint64_t len64;
    std::memcpy(&len64, p + 4, 8);
    body = p + 12;
    end = body + len64;
  } else {
    body = p + 4;
    end = body + len32;
  }
  return true;
}

bool parse_cie(const std::uint8_t* p, Cie& cie) {
  const std::uint8_t* body;
  const std::uint8_t* end;
  if (!entry(p, body, end)) return false;
  bool ok = true;
  const std::uint8_t* q = body + 4;  // the CIE id (0 in .eh_frame)
  const std::uint8_t version = *q++;
  const char* aug = reinterpret_cast<const char*>(q);
  while (q < end && *q) ++q;
  ++q;
  if (aug[0] != 0 && aug[0] != 'z') return false;  // an augmentation we cannot skip
  if (version >= 4) q += 2;                         // address and segment selector sizes
  cie.code_align = uleb(q, end, ok);
  cie.data_align = sleb(q, end, ok);
  const std::uint64_t ra_reg = version == 1 ? *q++ : uleb(q, end, ok);
  if (!ok || ra_reg != kReturnAddress) return false;
  if (aug[0] == 'z') {
    cie.has_augmentation_data = true;
    const std::uint64_t len = uleb(q, end, ok);
    const std::uint8_t* data = q;
    q += len;
    for (const char* a = aug + 1; *a && ok; ++a) {
      switch (*a) {
        case 'R': cie.fde_encoding = *data++; break;
        case 'L': ++data; break;  // the LSDA's encoding (the pointer is in the FDE)
        case 'P': {
          const std::uint8_t enc = *data++;
          skip_pointer(data, q, enc, ok);
          break;
        }
        case 'S': cie.signal_frame = true; break;
        case 'B': break;  // AArch64's; none here
        default: ok = false;
      }
    }
  }
  cie.instructions = q;
  cie.end = end;
  return ok && q <= end;
}

// Runs the call-frame instructions [p, end) on `row` while the location
// stays at most `pc` (from `loc`). `initial` is the CIE's row (DW_CFA_restore).
bool run(const std::uint8_t* p, const std::uint8_t* end, const Cie& cie, std::uint64_t loc, std::uint64_t pc,
         Row& row, const Row& initial) {
  constexpr int kStates = 16;
  Row saved[kStates];
  int depth = 0;
  bool ok = true;
  auto reg_rule = [&](std::uint64_t reg) -> RegRule* {
    return reg == kRbp ? &row.rbp : reg == kReturnAddress ? &row.ra : nullptr;
  };
  auto restore = [&](std::uint64_t reg) {
    if (RegRule* r = reg_rule(reg)) *r = reg == kRbp ? initial.rbp : initial.ra;
  };
  auto set = [&](std::uint64_t reg, std::uint8_t how, std::int64_t offset) {
    if (RegRule* r = reg_rule(reg)) *r = {how, offset};
  };
  auto advance = [&](std::uint64_t delta) {
    loc += delta * cie.code_align;
    return loc <= pc;
  };
  while (p < end && ok) {
    const std::uint8_t op = *p++;
    const std::uint8_t low = op & 0x3f;
    switch (op >> 6) {
      case 1:
        if (!advance(low)) return true;
        continue;
      case 2: set(low, 1, static_cast<std::int64_t>(uleb(p, end, ok)) * cie.data_align); continue;
      case 3: restore(low); continue;
      default: break;
    }
    switch (op) {
      case 0x00: break;  // nop
      case 0x02: case 0x03: case 0x04: {  // advance_loc1, 2, 4
        const unsigned bytes = op == 0x02 ? 1 : op == 0x03 ? 2 : 4;
        if (p + bytes > end) return false;
        std::uint32_t delta = 0;
        std::memcpy(&delta, p, bytes);  // little-endian
        p += bytes;
        if (!advance(delta)) return true;
        break;
      }
      case 0x05: {  // offset_extended
        const std::uint64_t reg = uleb(p, end, ok);
        set(reg, 1, static_cast<std::int64_t>(uleb(p, end, ok)) * cie.data_align);
        break;
      }
      case 0x06: restore(uleb(p, end, ok)); break;       // restore_extended
      case 0x07: set(uleb(p, end, ok), 2, 0); break;     // undefined
      case 0x08: set(uleb(p, end, ok), 0, 0); break;     // same_value
      case 0x09: {                                       // register
        const std::uint64_t reg = uleb(p, end, ok);
        uleb(p, end, ok);
        set(reg, 3, 0);
        break;
      }
      case 0x0a:  // remember_state
        if (depth == kStates) return false;
        saved[depth++] = row;
        break;
      case 0x0b:  // restore_state
        if (depth == 0) return false;
        row = saved[--depth];
        break;
      case 0x0c:  // def_cfa
        row.cfa_reg = static_cast<unsigned>(uleb(p, end, ok));
        row.cfa_offset = static_cast<std::int64_t>(uleb(p, end, ok));
        row.cfa_other = false;
        break;
      case 0x0d:  // def_cfa_register
        row.cfa_reg = static_cast<unsigned>(uleb(p, end, ok));
        row.cfa_other = false;
        break;
      case 0x0e: row.cfa_offset = static_cast<std::int64_t>(uleb(p, end, ok)); break;  // def_cfa_offset
      case 0x0f: {  // def_cfa_expression
        const std::uint64_t len = uleb(p, end, ok);
        p += len;
        row.cfa_other = true;
        break;
      }
      case 0x10: case 0x16: {  // expression, val_expression
        const std::uint64_t reg = uleb(p, end, ok);
        const std::uint64_t len = uleb(p, end, ok);
        p += len;
        set(reg, 3, 0);
        break;
      }
      case 0x11: {  // offset_extended_sf
        const std::uint64_t reg = uleb(p, end, ok);
        set(reg, 1, sleb(p, end, ok) * cie.data_align);
        break;
      }
      case 0x12:  // def_cfa_sf
        row.cfa_reg = static_cast<unsigned>(uleb(p, end, ok));
        row.cfa_offset = sleb(p, end, ok) * cie.data_align;
        row.cfa_other = false;
        break;
      case 0x13: row.cfa_offset = sleb(p, end, ok) * cie.data_align; break;  // def_cfa_offset_sf
      case 0x14: case 0x15: {  // val_offset(_sf)
        const std::uint64_t reg = uleb(p, end, ok);
        if (op == 0x14) uleb(p, end, ok); else sleb(p, end, ok);
        set(reg, 3, 0);
        break;
      }
      case 0x2e: uleb(p, end, ok); break;  // GNU_args_size
      case 0x2f: {                         // GNU_negative_offset_extended
        const std::uint64_t reg = uleb(p, end, ok);
        set(reg, 1, -static_cast<std::int64_t>(uleb(p, end, ok)) * cie.data_align);
        break;
      }
      default: return false;  // DW_CFA_set_loc and vendor operations: not followed
    }
  }
  return ok && p <= end;
}

// The rule of return address `ra` (at ra - 1, the call instruction).
FrameShape learn(std::uint64_t ra) {
  FrameShape r{};
  r.kind = kCannot;
  const std::uint64_t pc = ra - 1;
  dwarf_eh_bases bases{};
  const auto* fde = static_cast<const std::uint8_t*>(_Unwind_Find_FDE(reinterpret_cast<void*>(pc), &bases));
  if (fde == nullptr) {  // no call-frame information: code nothing can unwind (libunwind stops too)
    r.kind = kOutermost;
    return r;
  }
  const std::uint8_t* body;
  const std::uint8_t* end;
  if (!entry(fde, body, end)) return r;
  std::uint32_t cie_offset;
  std::memcpy(&cie_offset, body, 4);
  Cie cie;
  if (!parse_cie(body - cie_offset, cie) || cie.signal_frame) return r;
  const std::uint8_t* q = body + 4;
  bool ok = true;
  skip_pointer(q, end, cie.fde_encoding, ok);                 // pc_begin
  skip_pointer(q, end, cie.fde_encoding & 0x0f, ok);          // pc_range (no application)
  if (cie.has_augmentation_data) q += uleb(q, end, ok);
  if (!ok || q > end) return r;
  Row row;
  const Row none;
  if (!run(cie.instructions, cie.end, cie, 0, ~std::uint64_t{0}, row, none)) return r;
  const Row initial = row;
  const auto func = reinterpret_cast<std::uint64_t>(bases.func);
  if (!run(q, end, cie, func, pc, row, initial)) return r;
  if (row.ra.how == 2) {
    r.kind = kOutermost;
    return r;
  }
  if (row.cfa_other || (row.cfa_reg != kRsp && row.cfa_reg != kRbp) || row.ra.how != 1 || row.rbp.how == 2 ||
      row.rbp.how == 3 || row.cfa_offset < -(std::int64_t{1} << 30) || row.cfa_offset > (std::int64_t{1} << 30) ||
      row.ra.offset < -128 || row.ra.offset > 127 || row.rbp.offset < -32768 || row.rbp.offset > 32767 ||
      (row.rbp.how == 1 && row.rbp.offset == 0))
    return r;
  r.cfa_offset = static_cast<std::int32_t>(row.cfa_offset);
  r.cfa_is_rbp = row.cfa_reg == kRbp;
  r.ra_offset = static_cast<std::int8_t>(row.ra.offset);
  r.rbp_offset = row.rbp.how == 1 ? static_cast<std::int16_t>(row.rbp.offset) : 0;
  r.kind = kStep;
  return r;
}

// ------------------------------------------------------------- the table

std::size_t slot_of(std::uint64_t address, std::uint64_t capacity) {
  return static_cast<std::size_t>((address * 0x9e3779b97f4a7c15ull) >> 32) & (capacity - 1);
}

bool grow(FrameRules& rules) {
  return grow_mapped_table(
      rules.table, rules.capacity, 512, [](const FrameRule& r) { return r.address != 0; },
      [](const FrameRule& r, std::size_t capacity) { return slot_of(r.address, capacity); });
}

const FrameRule* rule_of(FrameRules& rules, std::uint64_t address) {
  std::size_t at = slot_of(address, rules.capacity);
  for (;; at = (at + 1) & (rules.capacity - 1)) {
    const FrameRule& r = rules.table[at];
    if (r.address == address) return &r;
    if (r.address == 0) break;
  }
  if (2 * (rules.count + 1) > rules.capacity) {
    if (!grow(rules)) return nullptr;
    at = slot_of(address, rules.capacity);
    while (rules.table[at].address != 0) at = (at + 1) & (rules.capacity - 1);
  }
  rules.table[at] = {address, learn(address)};
  ++rules.count;
  return &rules.table[at];
}

}  // namespace

__thread std::uintptr_t stack_lo __attribute__((tls_model("initial-exec")));
__thread std::uintptr_t stack_hi __attribute__((tls_model("initial-exec")));

namespace {

std::uintptr_t hex(const char*& p, const char* end) {
  std::uintptr_t v = 0;
  for (; p < end; ++p) {
    const char c = *p;
    const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) break;
    v = v << 4 | static_cast<std::uintptr_t>(d);
  }
  return v;
}

// The mapping of /proc/self/maps that holds `at`, read with open and read
// into a buffer on the stack: pthread_getattr_np allocates (the maps file's
// stdio buffer, the thread's CPU set), and a program's heap laid out
// otherwise by the first walk's allocations ran 40% slower (olden_tsp
// under --sample). `main_stack`: the line is the main thread's "[stack]".
bool mapping_of(std::uintptr_t at, std::uintptr_t& lo, std::uintptr_t& hi, bool& main_stack) {
  const int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[4096];
  std::size_t have = 0;
  bool found = false, skipping = false;  // skipping: the rest of a line longer than the buffer
  while (!found) {
    const ssize_t n = read(fd, buf + have, sizeof buf - have);
    if (n <= 0) break;
    have += static_cast<std::size_t>(n);
    const char* line = buf;
    const char* end = buf + have;
    for (const char* nl; !found && (nl = static_cast<const char*>(std::memchr(line, '\n', end - line))); line = nl + 1) {
      if (skipping) {
        skipping = false;
        continue;
      }
      const char* p = line;
      const std::uintptr_t a = hex(p, nl);
      if (p == nl || *p++ != '-') continue;
      const std::uintptr_t b = hex(p, nl);
      if (a <= at && at < b) {
        lo = a;
        hi = b;
        main_stack = nl - line >= 7 && std::memcmp(nl - 7, "[stack]", 7) == 0;
        found = true;
      }
    }
    have = static_cast<std::size_t>(end - line);
    if (have == sizeof buf) {  // one line fills the buffer: its start was looked at, skip its rest
      const char* p = buf;
      const std::uintptr_t a = hex(p, end);
      if (p < end && *p++ == '-') {
        const std::uintptr_t b = hex(p, end);
        if (a <= at && at < b) lo = a, hi = b, main_stack = false, found = true;
      }
      have = 0;
      skipping = true;
    }
    std::memmove(buf, line, have);
  }
  close(fd);
  return found;
}

}  // namespace

bool thread_stack_bounds() noexcept {
  if (stack_hi != 0) return true;
  // Not from a handler on an alternate signal stack: that is not the stack
  // the thread's other calls run on.
  stack_t alternate;
  if (sigaltstack(nullptr, &alternate) == 0 && (alternate.ss_flags & SS_ONSTACK)) return false;
  const auto sp = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
  std::uintptr_t lo = 0, hi = 0;
  bool main_stack = false;
  if (!mapping_of(sp, lo, hi, main_stack)) return false;
  if (main_stack) {  // the kernel grows it down to the limit as it is used
    rlimit limit{};
    lo = getrlimit(RLIMIT_STACK, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < hi
             ? hi - limit.rlim_cur
             : 0;
  }
  stack_lo = lo;
  stack_hi = hi;
  return true;
}

void frame_rules_modules_changed() noexcept { g_generation.fetch_add(1, std::memory_order_release); }

__attribute__((noinline)) int cfi_backtrace(FrameRules& rules, std::uint64_t* out, int max) noexcept {
  std::uint64_t ip, sp, bp;
  // The walk starts here: this instruction's address, with the stack and
  // frame pointers as they are at it. As a "return address" (the rule at
  // address - 1), the label's address plus one.
  asm volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2" : "=r"(ip), "=r"(sp), "=r"(bp));
  if (!thread_stack_bounds() || sp < stack_lo || sp >= stack_hi) return -1;  // not the thread's stack (sigaltstack)
  const std::uint64_t generation = g_generation.load(std::memory_order_acquire);
  if (rules.generation != generation) {
    if (rules.table) std::memset(rules.table, 0, rules.capacity * sizeof(FrameRule));
    rules.count = 0;
    rules.walks[0].n = rules.walks[1].n = -1;
    rules.generation = generation;
  }
  if (!rules.table && !grow(rules)) return -1;
  if (max > kMaxWalk) max = kMaxWalk;
  const Walk& last = rules.walks[rules.last];
  Walk& now = rules.walks[rules.last ^ 1];
  std::uint64_t address = ip + 1;
  int n = 0;
  int j = last.n < 0 ? kMaxWalk + 1 : 0;  // the last walk's frame to compare with; past its end: none
  for (;;) {
    now.frames[n] = {address, sp, bp, 0, 0, {}};
    if (n == max) break;
    if (j <= last.n) {
      while (j < last.n && last.frames[j].sp < sp) ++j;
      const WalkFrame& f = last.frames[j];
      if (f.sp == sp && f.address == address && f.bp == bp) {
        // The last walk from frame j on, as far as what it read is still
        // there. (Its slots lie above sp, in this thread's stack, unless the
        // walk was another thread's: a thread log passes on to a new thread
        // when one ends, and its stack may lie elsewhere.)
        int m = j;
        while (m < last.n) {
          const WalkFrame& g = last.frames[m];
          if (g.ra_at + 8 > stack_hi || g.bp_at + 8 > stack_hi) break;
          if (*reinterpret_cast<const std::uint64_t*>(g.ra_at) != last.frames[m + 1].address) break;
          if (g.bp_at != 0 && *reinterpret_cast<const std::uint64_t*>(g.bp_at) != last.frames[m + 1].bp) break;
          ++m;
        }
        int i = j;
        for (; i < m && n < max; ++i) {
          now.frames[n] = last.frames[i];
          out[n++] = last.frames[i + 1].address;
        }
        // On from the last walk's frame i (its end, the first frame whose
        // caller changed, or this walk's limit), looked at as usual.
        address = last.frames[i].address;
        sp = last.frames[i].sp;
        bp = last.frames[i].bp;
        j = kMaxWalk + 1;
        continue;
      }
      if (f.sp < sp) j = kMaxWalk + 1;  // the last walk ended below this frame
    }
    const FrameShape* r;
    if (n < last.n && last.frames[n].address == address) {
      r = &last.frames[n].shape;
    } else {
      const FrameRule* rule = rule_of(rules, address);
      if (rule == nullptr) return -1;
      r = &rule->shape;
    }
    if (r->kind == kCannot) return -1;
    if (r->kind == kOutermost) break;
    now.frames[n].shape = *r;
    const std::uint64_t cfa = (r->cfa_is_rbp ? bp : sp) + static_cast<std::int64_t>(r->cfa_offset);
    const std::uint64_t ra_at = cfa + r->ra_offset;
    // Every frame lies above the last, inside the stack: a rule that says
    // otherwise (a frame pointer not set up as the rule assumes) ends it.
    if (cfa <= sp || ra_at < sp || ra_at + 8 > stack_hi) break;
    now.frames[n].ra_at = ra_at;
    if (r->rbp_offset != 0) {
      const std::uint64_t bp_at = cfa + r->rbp_offset;
      if (bp_at < sp || bp_at + 8 > stack_hi) break;
      now.frames[n].bp_at = bp_at;
      bp = *reinterpret_cast<const std::uint64_t*>(bp_at);
    }
    address = *reinterpret_cast<const std::uint64_t*>(ra_at);
    sp = cfa;
    if (address == 0) break;
    out[n++] = address;
  }
  now.n = n;
  rules.last ^= 1;
  return n;
}

}  // namespace tailor::record
