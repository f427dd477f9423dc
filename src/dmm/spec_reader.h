// SPDX-License-Identifier: MIT
// Reading a DMM spec (docs/dmm.md, "The model") from its JSON DOM
// (json_reader.h) into the plain-data SpecView (spec.h), with every rule a
// spec must obey checked, and a failure named by the JSON path of the field
// at fault and why. Freestanding, so that libtailor (TAILOR_DMM=FILE.json)
// and the simulator read a spec through the same code: a spec means one
// thing wherever it runs.
//
// Storage: the allocators go into SpecStorage; class bounds and the exact
// sizes into a caller-supplied pool of words (spec_pool_words(text length)
// always suffices).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "dmm/json_reader.h"
#include "dmm/spec.h"
#include "dmm/text.h"

namespace tailor::dmm {

struct SpecStorage {
  static constexpr std::size_t kMaxAllocators = 64;
  AllocatorView allocators[kMaxAllocators];
  char name[128] = "";
  SpecView view;
};

/// Why a spec was rejected: the JSON path of the field and the reason.
struct SpecProblem {
  TextBuffer<160> field;
  TextBuffer<320> why;
};

/// Words of pool a spec text of `length` bytes may need (one per number at most).
constexpr std::size_t spec_pool_words(std::size_t length) noexcept { return length / 2 + 2; }

namespace spec_detail {

template <class E>
struct Name {
  E value;
  const char* name;
};

inline constexpr Name<Mechanism> kMechanisms[] = {
    {Mechanism::kSegregatedFreeLists, "segregated_free_lists"},
    {Mechanism::kSimpleSegregatedStorage, "simple_segregated_storage"},
    {Mechanism::kSegregatedFit, "segregated_fit"},
    {Mechanism::kExactSegregatedFit, "exact_segregated_fit"},
    {Mechanism::kStrictSegregatedFit, "strict_segregated_fit"},
    {Mechanism::kBinaryBuddy, "binary_buddy"},
    {Mechanism::kFibonacciBuddy, "fibonacci_buddy"},
};
inline constexpr Name<Structure> kStructures[] = {
    {Structure::kSll, "sll"}, {Structure::kDll, "dll"}, {Structure::kBst, "btree"}};
inline constexpr Name<Fit> kFits[] = {
    {Fit::kFirst, "first"}, {Fit::kBest, "best"}, {Fit::kExact, "exact"}, {Fit::kFarthest, "farthest"}};
inline constexpr Name<Policy> kPolicies[] = {{Policy::kFifo, "fifo"}, {Policy::kLifo, "lifo"}};
inline constexpr Name<ClassKind> kClassKinds[] = {
    {ClassKind::kSingle, "single"}, {ClassKind::kPowersOfTwo, "powers_of_two"}, {ClassKind::kExact, "exact"}};

inline constexpr Name<bool> kLists[] = {{false, "class"}, {true, "area"}};

inline bool is_buddy(Mechanism m) noexcept { return m == Mechanism::kBinaryBuddy || m == Mechanism::kFibonacciBuddy; }

// Reads one allocator; every failure fills `problem` and returns false.
class AllocatorReader {
 public:
  AllocatorReader(std::size_t index, SpecProblem& problem, std::uint64_t*& pool, std::uint64_t* pool_end)
      : index_(index), p_(problem), pool_(pool), pool_end_(pool_end) {}

  bool read(const JsonValue& j, AllocatorView& a) {
    if (!j.is_object()) return fail("", "must be an object");
    static const char* const kKeys[] = {"sizes",   "mechanism", "structure", "fit",       "policy", "split",
                                        "coalesce", "classes",   "header",    "alignment", "system", "lists"};
    for (const JsonValue& m : j.items()) {
      bool known = false;
      for (const char* k : kKeys) known = known || key_is(m, k);
      if (!known)
        return fail_key(m, "unknown field (known: sizes, mechanism, structure, fit, policy, split, coalesce, classes, "
                           "header, alignment, system, lists)");
    }
    const JsonValue* mech = j.find("mechanism");
    if (mech == nullptr) return fail("mechanism", "missing");
    if (!word(*mech, "mechanism", kMechanisms, a.mechanism)) return false;
    apply_defaults(a);

    const JsonValue* sizes = j.find("sizes");
    if (sizes == nullptr || !sizes->is_object()) return fail("sizes", "missing; give {\"min\": M, \"max\": N}");
    for (const JsonValue& m : sizes->items())
      if (!key_is(m, "min") && !key_is(m, "max")) {
        p_.field.append("allocators[").append_uint(index_).append("].sizes.").append_visible(m.key(), m.key_size(), 40);
        p_.why.append("unknown field (known: min, max)");
        return false;
      }
    if (!number(*sizes, "min", "sizes.min", true, a.min)) return false;
    const JsonValue* max = sizes->find("max");
    if (max != nullptr && !max->is_null()) {
      if (!number(*sizes, "max", "sizes.max", true, a.max)) return false;
      a.bounded = true;
    }
    if (a.bounded && a.max <= a.min) {
      fail("sizes.max", "must be above sizes.min (");
      p_.why.append_uint(a.min).append(")");
      return false;
    }
    if (const JsonValue* v = j.find("structure"); v && !word(*v, "structure", kStructures, a.structure)) return false;
    if (const JsonValue* v = j.find("fit"); v && !word(*v, "fit", kFits, a.fit)) return false;
    if (const JsonValue* v = j.find("policy"); v && !word(*v, "policy", kPolicies, a.policy)) return false;
    if (const JsonValue* v = j.find("split"); v && !boolean(*v, "split", a.split)) return false;
    if (const JsonValue* v = j.find("coalesce"); v && !boolean(*v, "coalesce", a.coalesce)) return false;
    if (const JsonValue* v = j.find("classes"); v && !classes(*v, a)) return false;
    if (const JsonValue* v = j.find("lists"); v && !word(*v, "lists", kLists, a.area_lists)) return false;
    if (j.find("header") && !number(j, "header", "header", false, a.header)) return false;
    if (j.find("alignment") && !number(j, "alignment", "alignment", false, a.alignment)) return false;
    if (const JsonValue* s = j.find("system")) {
      if (!s->is_object()) return fail("system", "must be an object");
      for (const JsonValue& m : s->items())
        if (!key_is(m, "granularity") && !key_is(m, "chunk") && !key_is(m, "returns")) {
          p_.field.append("allocators[").append_uint(index_).append("].system.").append_visible(m.key(), m.key_size(), 40);
          p_.why.append("unknown field (known: granularity, chunk, returns)");
          return false;
        }
      if (s->find("granularity") && !number(*s, "granularity", "system.granularity", false, a.granularity)) return false;
      if (s->find("chunk") && !number(*s, "chunk", "system.chunk", false, a.chunk)) return false;
      if (const JsonValue* v = s->find("returns"); v && !boolean(*v, "system.returns", a.returns)) return false;
    }
    return check(a);
  }

  bool check(const AllocatorView& a) {
    const char* mech = to_string(a.mechanism);
    if (a.alignment < 8 || !std::has_single_bit(a.alignment)) return fail("alignment", "must be a power of two of at least 8");
    if (a.alignment > 4096) return fail("alignment", "must be at most 4096");
    if (a.header % 8 != 0 || a.header > 4096) return fail("header", "must be a multiple of 8 up to 4096");
    if (a.granularity < 16 || !std::has_single_bit(a.granularity) || a.granularity > (std::uint64_t{1} << 30))
      return fail("system.granularity", "must be a power of two from 16 to 2^30");
    if (a.chunk == 0 || a.chunk > (std::uint64_t{1} << 36)) return fail("system.chunk", "must be from 1 to 2^36");
    if (a.classes == ClassKind::kBounds) {
      for (std::size_t i = 0; i < a.bound_count; ++i) {
        const std::uint64_t b = a.bounds[i];
        if (b == 0 || b % 8 != 0 || (i > 0 && b <= a.bounds[i - 1]))
          return fail_class(i, "bounds must be increasing non-zero multiples of 8");
        if (b <= a.min || (a.bounded && b > a.max + 7)) {
          fail_class(i, "bound ");
          p_.why.append_uint(b).append(" lies outside sizes");
          return false;
        }
      }
    }
    if (a.area_lists && a.mechanism != Mechanism::kSimpleSegregatedStorage)
      return fail2("lists", mech, " has no areas: \"area\" lists are simple_segregated_storage's");
    if (a.area_lists && (a.structure != Structure::kSll || a.fit != Fit::kFirst || a.policy != Policy::kLifo))
      return fail(a.structure != Structure::kSll ? "structure" : a.fit != Fit::kFirst ? "fit" : "policy",
                  "an area's free list is singly linked, taken from its head, last in first out: "
                  "\"area\" lists need structure sll, fit first, policy lifo");
    switch (a.mechanism) {
      case Mechanism::kSegregatedFreeLists:
      case Mechanism::kSegregatedFit:
        if (a.header < 8) return fail2("header", mech, " keeps a size word before each block: at least 8");
        if (a.returns && !a.coalesce)
          return fail("system.returns", "returning memory needs coalesce: without it no free block ever spans a region");
        break;
      case Mechanism::kExactSegregatedFit:
      case Mechanism::kStrictSegregatedFit:
        if (a.split || a.coalesce)
          return fail2(a.split ? "split" : "coalesce", mech,
                       " keeps one block size per list: it cannot split or coalesce (use segregated_fit)");
        if (a.returns) return fail2("system.returns", mech, " cannot return memory: it never coalesces");
        if (a.header < 8) return fail2("header", mech, " keeps a size word before each block: at least 8");
        if (a.mechanism == Mechanism::kExactSegregatedFit && a.classes != ClassKind::kExact)
          return fail("classes", "exact_segregated_fit has one class per size the trace uses: classes must be \"exact\"");
        break;
      case Mechanism::kSimpleSegregatedStorage:
        if (a.split || a.coalesce)
          return fail(a.split ? "split" : "coalesce", "simple_segregated_storage never splits or coalesces");
        if (a.returns)
          return fail("system.returns", "simple_segregated_storage cannot return memory: an area's free blocks are spread "
                                        "over its class's list");
        if (a.header != 0) return fail("header", "simple_segregated_storage has no block headers: header must be 0");
        if (!a.bounded) return fail("sizes.max", "simple_segregated_storage needs bounded classes: give a max");
        if (!std::has_single_bit(a.chunk)) return fail("system.chunk", "an area is a power of two of bytes");
        if (2 * (a.alignment > 16 ? a.alignment : 16) + ((a.max + 15) & ~std::uint64_t{15}) > a.chunk) {
          fail("system.chunk", "an area of ");
          p_.why.append_uint(a.chunk).append(" bytes cannot hold a block of the range's largest size (");
          p_.why.append_uint(a.max).append(")");
          return false;
        }
        break;
      case Mechanism::kBinaryBuddy:
      case Mechanism::kFibonacciBuddy:
        if (a.structure != Structure::kDll || a.policy != Policy::kLifo || a.fit != Fit::kFirst)
          return fail2(a.structure != Structure::kDll ? "structure" : a.policy != Policy::kLifo ? "policy" : "fit", mech,
                       " keeps one doubly linked LIFO list per block size, taken from its head: "
                       "structure dll, fit first, policy lifo");
        if (a.header != 16 || a.alignment != 16)
          return fail2(a.header != 16 ? "header" : "alignment", mech, " has 16-byte headers and alignment");
        if (a.returns)
          return fail2("system.returns", mech,
                       " keeps its chunks (only blocks above the largest are obtained and returned one by one)");
        if (a.coalesce && !a.split) return fail("coalesce", "a buddy system without splitting has no buddies to coalesce");
        if (a.mechanism == Mechanism::kBinaryBuddy && (!std::has_single_bit(a.chunk) || a.chunk < 64))
          return fail("system.chunk", "a binary buddy's largest block is a power of two of at least 64 bytes");
        break;
    }
    return true;
  }

 private:
  static bool key_is(const JsonValue& m, const char* k) noexcept {
    return m.key_size() == std::strlen(k) && std::memcmp(m.key(), k, m.key_size()) == 0;
  }

  void at(const char* field) {
    p_.field.append("allocators[").append_uint(index_).append("]");
    if (field[0] != '\0') p_.field.append(".").append(field);
  }
  bool fail(const char* field, const char* why) {
    at(field);
    p_.why.append(why);
    return false;
  }
  bool fail2(const char* field, const char* a, const char* b) {
    at(field);
    p_.why.append(a).append(b);
    return false;
  }
  bool fail_key(const JsonValue& m, const char* why) {
    p_.field.append("allocators[").append_uint(index_).append("].").append_visible(m.key(), m.key_size(), 40);
    p_.why.append(why);
    return false;
  }
  bool fail_class(std::size_t i, const char* why) {
    p_.field.append("allocators[").append_uint(index_).append("].classes[").append_uint(i).append("]");
    p_.why.append(why);
    return false;
  }

  void apply_defaults(AllocatorView& a) const {
    switch (a.mechanism) {
      case Mechanism::kSegregatedFreeLists: a.classes = ClassKind::kSingle; break;
      case Mechanism::kSegregatedFit:
        a.classes = ClassKind::kPowersOfTwo;
        a.split = a.coalesce = true;
        a.structure = Structure::kDll;
        break;
      case Mechanism::kExactSegregatedFit:
        a.classes = ClassKind::kExact;
        a.fit = Fit::kExact;
        a.policy = Policy::kFifo;
        break;
      case Mechanism::kStrictSegregatedFit: a.classes = ClassKind::kPowersOfTwo; break;
      case Mechanism::kSimpleSegregatedStorage:
        a.classes = ClassKind::kPowersOfTwo;
        a.header = 0;
        a.chunk = 65536;
        break;
      case Mechanism::kBinaryBuddy:
      case Mechanism::kFibonacciBuddy:
        a.classes = ClassKind::kPowersOfTwo;
        a.structure = Structure::kDll;
        a.split = a.coalesce = true;
        a.header = 16;
        a.chunk = std::uint64_t{1} << 20;
        break;
    }
  }

  bool classes(const JsonValue& c, AllocatorView& a) {
    if (c.is_array()) {
      a.classes = ClassKind::kBounds;
      if (c.size() == 0) return fail("classes", "an empty list of bounds");
      if (static_cast<std::size_t>(pool_end_ - pool_) < c.size()) return fail("classes", "too many bounds");
      a.bounds = pool_;
      std::size_t i = 0;
      for (const JsonValue& b : c.items()) {
        if (!b.is_uint64()) return fail_class(i, "must be a non-negative integer");
        pool_[i++] = b.as_uint64();
      }
      a.bound_count = i;
      pool_ += i;
      if (is_buddy(a.mechanism)) return fail2("classes", to_string(a.mechanism), " has its own classes");
      return true;
    }
    if (is_buddy(a.mechanism)) return fail2("classes", to_string(a.mechanism), " has its own classes: leave classes out");
    return word(c, "classes", kClassKinds, a.classes);
  }

  template <class E, std::size_t N>
  bool word(const JsonValue& v, const char* key, const Name<E> (&names)[N], E& out) {
    if (v.is_string())
      for (const auto& n : names)
        if (v.string_equals(n.name)) {
          out = n.value;
          return true;
        }
    at(key);
    if (!v.is_string()) {
      p_.why.append("must be a string (one of ");
    } else {
      p_.why.append("unknown ").append(key).append(" '").append_visible(v.string_data(), v.string_size(), 40);
      p_.why.append("' (known: ");
    }
    for (std::size_t i = 0; i < N; ++i) p_.why.append(i ? ", " : "").append(names[i].name);
    p_.why.append(")");
    return false;
  }

  bool number(const JsonValue& j, const char* key, const char* field, bool zero_ok, std::uint64_t& out) {
    const JsonValue* v = j.find(key);
    if (v == nullptr) return fail(field, "missing");
    if (!v->is_uint64() || (!zero_ok && v->as_uint64() == 0 && std::strcmp(field, "header") != 0))
      return fail(field, zero_ok ? "must be a non-negative integer" : "must be a positive integer");
    out = v->as_uint64();
    return true;
  }

  bool boolean(const JsonValue& v, const char* field, bool& out) {
    if (!v.is_bool()) return fail(field, "must be true or false");
    out = v.as_bool();
    return true;
  }

  std::size_t index_;
  SpecProblem& p_;
  std::uint64_t*& pool_;
  std::uint64_t* pool_end_;
};

}  // namespace spec_detail

/// Reads the spec at `root` into `out` (its view points into `out` and
/// `pool`). False with `problem` filled if the spec breaks a rule. A spec
/// may carry "exact_sizes": the request sizes (increasing multiples of 8)
/// that make its "exact" classes, as the search writes them.
inline bool read_spec(const JsonValue& root, SpecStorage& out, std::uint64_t* pool, std::size_t pool_words,
                      SpecProblem& problem) {
  using namespace spec_detail;
  std::uint64_t* cursor = pool;
  std::uint64_t* const end = pool + pool_words;
  out.view = SpecView{};
  out.view.name = out.name;
  if (!root.is_object()) {
    problem.field.append("(top)");
    problem.why.append("a DMM spec is a JSON object with \"allocators\"");
    return false;
  }
  for (const JsonValue& m : root.items()) {
    const bool known = (m.key_size() == 4 && std::memcmp(m.key(), "name", 4) == 0) ||
                       (m.key_size() == 10 && std::memcmp(m.key(), "allocators", 10) == 0) ||
                       (m.key_size() == 11 && std::memcmp(m.key(), "exact_sizes", 11) == 0);
    if (!known) {
      problem.field.append_visible(m.key(), m.key_size(), 40);
      problem.why.append("unknown field (known: name, allocators, exact_sizes)");
      return false;
    }
  }
  if (const JsonValue* name = root.find("name")) {
    if (!name->is_string() || name->string_size() == 0 || name->string_size() >= sizeof out.name) {
      problem.field.append("name");
      problem.why.append("must be a non-empty string of at most 127 bytes");
      return false;
    }
    std::memcpy(out.name, name->string_data(), name->string_size());
    out.name[name->string_size()] = '\0';
  }
  const JsonValue* list = root.find("allocators");
  if (list == nullptr || !list->is_array() || list->size() == 0) {
    problem.field.append("allocators");
    problem.why.append("must be a non-empty array of allocators");
    return false;
  }
  if (list->size() > SpecStorage::kMaxAllocators) {
    problem.field.append("allocators");
    problem.why.append("at most 64 allocators");
    return false;
  }
  std::size_t i = 0;
  for (const JsonValue& item : list->items()) {
    AllocatorView& a = out.allocators[i];
    a = AllocatorView{};
    if (!AllocatorReader(i, problem, cursor, end).read(item, a)) return false;
    if (i == 0 && a.min != 0) {
      problem.field.append("allocators[0].sizes.min");
      problem.why.append("the first allocator must start at 0: sizes (0, ").append_uint(a.min).append("] are covered by none");
      return false;
    }
    if (i > 0) {
      const AllocatorView& p = out.allocators[i - 1];
      if (!p.bounded) {
        problem.field.append("allocators[").append_uint(i - 1).append("].sizes.max");
        problem.why.append("only the last allocator may have no max: allocators[").append_uint(i).append("] follows it");
        return false;
      }
      if (a.min != p.max) {
        problem.field.append("allocators[").append_uint(i).append("].sizes.min");
        if (a.min > p.max) {
          problem.why.append("sizes (").append_uint(p.max).append(", ").append_uint(a.min).append("] are covered by none");
        } else {
          problem.why.append("overlaps allocators[").append_uint(i - 1).append("]: sizes (").append_uint(a.min);
          problem.why.append(", ").append_uint(p.max).append("] belong to both");
        }
        return false;
      }
    }
    ++i;
  }
  out.view.allocators = out.allocators;
  out.view.count = i;
  if (const JsonValue* sizes = root.find("exact_sizes")) {
    if (!sizes->is_array() || static_cast<std::size_t>(end - cursor) < sizes->size()) {
      problem.field.append("exact_sizes");
      problem.why.append("must be an array of request sizes");
      return false;
    }
    std::size_t k = 0;
    for (const JsonValue& s : sizes->items()) {
      if (!s.is_uint64() || s.as_uint64() == 0 || s.as_uint64() % 8 != 0 || (k > 0 && s.as_uint64() <= cursor[k - 1])) {
        problem.field.append("exact_sizes[").append_uint(k).append("]");
        problem.why.append("sizes must be increasing non-zero multiples of 8");
        return false;
      }
      cursor[k++] = s.as_uint64();
    }
    out.view.exact_sizes = cursor;
    out.view.exact_size_count = k;
    cursor += k;
  }
  return true;
}

}  // namespace tailor::dmm
