// SPDX-License-Identifier: MIT
// Reading, checking and writing DMM specs (dmm_spec.h). The rules checked
// here are those docs/dmm.md states for the model; each failure names the
// JSON path of the field at fault.
#include "dmm_spec.h"

#include <algorithm>
#include <bit>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace tailor::simulate {

namespace {

using nlohmann::json;

template <class E>
struct Name {
  E value;
  const char* name;
};

constexpr Name<Mechanism> kMechanisms[] = {
    {Mechanism::kSegregatedFreeLists, "segregated_free_lists"},
    {Mechanism::kSimpleSegregatedStorage, "simple_segregated_storage"},
    {Mechanism::kSegregatedFit, "segregated_fit"},
    {Mechanism::kExactSegregatedFit, "exact_segregated_fit"},
    {Mechanism::kStrictSegregatedFit, "strict_segregated_fit"},
    {Mechanism::kBinaryBuddy, "binary_buddy"},
    {Mechanism::kFibonacciBuddy, "fibonacci_buddy"},
};
constexpr Name<Structure> kStructures[] = {{Structure::kSll, "sll"}, {Structure::kDll, "dll"}, {Structure::kBst, "btree"}};
constexpr Name<Fit> kFits[] = {{Fit::kFirst, "first"}, {Fit::kBest, "best"}, {Fit::kExact, "exact"}, {Fit::kFarthest, "farthest"}};
constexpr Name<Policy> kPolicies[] = {{Policy::kFifo, "fifo"}, {Policy::kLifo, "lifo"}};
constexpr Name<ClassesSpec::Kind> kClassKinds[] = {{ClassesSpec::Kind::kSingle, "single"},
                                                   {ClassesSpec::Kind::kPowersOfTwo, "powers_of_two"},
                                                   {ClassesSpec::Kind::kExact, "exact"}};

template <class E, std::size_t N>
const char* name_of(const Name<E> (&names)[N], E value) noexcept {
  for (const auto& n : names)
    if (n.value == value) return n.name;
  return "?";
}

// A JSON integer >= 0 (JSON text gives unsigned numbers, code may give signed ones).
bool is_count(const json& v) { return v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0); }

bool is_buddy(Mechanism m) noexcept { return m == Mechanism::kBinaryBuddy || m == Mechanism::kFibonacciBuddy; }

// Reads one allocator object; `at` is its path ("allocators[2]").
class AllocatorReader {
 public:
  AllocatorReader(const std::string& origin, std::string at) : origin_(origin), at_(std::move(at)) {}

  [[noreturn]] void fail(const std::string& field, const std::string& why) const {
    throw SpecError(origin_, field.empty() ? at_ : at_ + "." + field, why);
  }

  AllocatorSpec read(const json& j) {
    if (!j.is_object()) fail("", "must be an object");
    static const char* const kKeys[] = {"sizes", "mechanism", "structure", "fit",       "policy", "split",
                                        "coalesce", "classes", "header",   "alignment", "system"};
    for (const auto& [key, value] : j.items())
      if (std::find_if(std::begin(kKeys), std::end(kKeys), [&](const char* k) { return key == k; }) == std::end(kKeys))
        fail(key, "unknown field (known: sizes, mechanism, structure, fit, policy, split, coalesce, classes, header, "
                  "alignment, system)");

    AllocatorSpec a;
    if (!j.contains("mechanism")) fail("mechanism", "missing");
    a.mechanism = word(j, "mechanism", kMechanisms);
    apply_defaults(a);

    if (!j.contains("sizes") || !j["sizes"].is_object()) fail("sizes", "missing; give {\"min\": M, \"max\": N}");
    const json& sizes = j["sizes"];
    for (const auto& [key, value] : sizes.items())
      if (key != "min" && key != "max") fail("sizes." + key, "unknown field (known: min, max)");
    a.min = number(sizes, "min", "sizes.min", true);
    if (sizes.contains("max") && !sizes["max"].is_null()) a.max = number(sizes, "max", "sizes.max", true);
    if (a.max && *a.max <= a.min) fail("sizes.max", "must be above sizes.min (" + std::to_string(a.min) + ")");

    if (j.contains("structure")) a.structure = word(j, "structure", kStructures);
    if (j.contains("fit")) a.fit = word(j, "fit", kFits);
    if (j.contains("policy")) a.policy = word(j, "policy", kPolicies);
    if (j.contains("split")) a.split = boolean(j, "split", "split");
    if (j.contains("coalesce")) a.coalesce = boolean(j, "coalesce", "coalesce");
    if (j.contains("classes")) a.classes = classes(j["classes"], a);
    if (j.contains("header")) a.header = number(j, "header", "header", false);
    if (j.contains("alignment")) a.alignment = number(j, "alignment", "alignment", false);
    if (j.contains("system")) {
      const json& s = j["system"];
      if (!s.is_object()) fail("system", "must be an object");
      for (const auto& [key, value] : s.items())
        if (key != "granularity" && key != "chunk" && key != "returns")
          fail("system." + key, "unknown field (known: granularity, chunk, returns)");
      if (s.contains("granularity")) a.granularity = number(s, "granularity", "system.granularity", false);
      if (s.contains("chunk")) a.chunk = number(s, "chunk", "system.chunk", false);
      if (s.contains("returns")) a.returns = boolean(s, "returns", "system.returns");
    }
    check(a);
    return a;
  }

  void check(const AllocatorSpec& a) const {
    const char* mech = to_string(a.mechanism);
    if (a.alignment < 8 || !std::has_single_bit(a.alignment)) fail("alignment", "must be a power of two of at least 8");
    if (a.alignment > 4096) fail("alignment", "must be at most 4096");
    if (a.header % 8 != 0 || a.header > 4096) fail("header", "must be a multiple of 8 up to 4096");
    if (a.granularity < 16 || !std::has_single_bit(a.granularity) || a.granularity > (std::uint64_t{1} << 30))
      fail("system.granularity", "must be a power of two from 16 to 2^30");
    if (a.chunk == 0 || a.chunk > (std::uint64_t{1} << 36)) fail("system.chunk", "must be from 1 to 2^36");
    if (a.classes.kind == ClassesSpec::Kind::kBounds) {
      for (std::size_t i = 0; i < a.classes.bounds.size(); ++i) {
        const std::uint64_t b = a.classes.bounds[i];
        if (b == 0 || b % 8 != 0 || (i > 0 && b <= a.classes.bounds[i - 1]))
          fail("classes[" + std::to_string(i) + "]", "bounds must be increasing non-zero multiples of 8");
        if (b <= a.min || (a.max && b > *a.max + 7))
          fail("classes[" + std::to_string(i) + "]", "bound " + std::to_string(b) + " lies outside sizes");
      }
    }
    switch (a.mechanism) {
      case Mechanism::kSegregatedFreeLists:
      case Mechanism::kSegregatedFit:
        if (a.header < 8) fail("header", std::string(mech) + " keeps a size word before each block: at least 8");
        if (a.returns && !a.coalesce)
          fail("system.returns", "returning memory needs coalesce: without it no free block ever spans a region");
        break;
      case Mechanism::kExactSegregatedFit:
      case Mechanism::kStrictSegregatedFit:
        if (a.split || a.coalesce)
          fail(a.split ? "split" : "coalesce",
               std::string(mech) + " keeps one block size per list: it cannot split or coalesce (use segregated_fit)");
        if (a.returns) fail("system.returns", std::string(mech) + " cannot return memory: it never coalesces");
        if (a.header < 8) fail("header", std::string(mech) + " keeps a size word before each block: at least 8");
        if (a.mechanism == Mechanism::kExactSegregatedFit && a.classes.kind != ClassesSpec::Kind::kExact)
          fail("classes", "exact_segregated_fit has one class per size the trace uses: classes must be \"exact\"");
        break;
      case Mechanism::kSimpleSegregatedStorage:
        if (a.split || a.coalesce)
          fail(a.split ? "split" : "coalesce", "simple_segregated_storage never splits or coalesces");
        if (a.returns)
          fail("system.returns", "simple_segregated_storage cannot return memory: an area's free blocks are spread "
                                 "over its class's list");
        if (a.header != 0) fail("header", "simple_segregated_storage has no block headers: header must be 0");
        if (!a.max) fail("sizes.max", "simple_segregated_storage needs bounded classes: give a max");
        if (!std::has_single_bit(a.chunk)) fail("system.chunk", "an area is a power of two of bytes");
        if (2 * std::max<std::uint64_t>(16, a.alignment) + ((*a.max + 15) & ~std::uint64_t{15}) > a.chunk)
          fail("system.chunk", "an area of " + std::to_string(a.chunk) + " bytes cannot hold a block of the range's "
                               "largest size (" + std::to_string(*a.max) + ")");
        break;
      case Mechanism::kBinaryBuddy:
      case Mechanism::kFibonacciBuddy:
        if (a.structure != Structure::kDll || a.policy != Policy::kLifo || a.fit != Fit::kFirst)
          fail(a.structure != Structure::kDll ? "structure" : a.policy != Policy::kLifo ? "policy" : "fit",
               std::string(mech) + " keeps one doubly linked LIFO list per block size, taken from its head: "
                                   "structure dll, fit first, policy lifo");
        if (a.header != 16 || a.alignment != 16)
          fail(a.header != 16 ? "header" : "alignment", std::string(mech) + " has 16-byte headers and alignment");
        if (a.returns) fail("system.returns", std::string(mech) + " keeps its chunks (only blocks above the largest "
                                                                  "are obtained and returned one by one)");
        if (a.coalesce && !a.split)
          fail("coalesce", "a buddy system without splitting has no buddies to coalesce");
        if (a.mechanism == Mechanism::kBinaryBuddy && (!std::has_single_bit(a.chunk) || a.chunk < 64))
          fail("system.chunk", "a binary buddy's largest block is a power of two of at least 64 bytes");
        break;
    }
  }

 private:
  void apply_defaults(AllocatorSpec& a) const {
    switch (a.mechanism) {
      case Mechanism::kSegregatedFreeLists: a.classes.kind = ClassesSpec::Kind::kSingle; break;
      case Mechanism::kSegregatedFit:
        a.classes.kind = ClassesSpec::Kind::kPowersOfTwo;
        a.split = a.coalesce = true;
        a.structure = Structure::kDll;
        break;
      case Mechanism::kExactSegregatedFit:
        a.classes.kind = ClassesSpec::Kind::kExact;
        a.fit = Fit::kExact;
        a.policy = Policy::kFifo;
        break;
      case Mechanism::kStrictSegregatedFit: a.classes.kind = ClassesSpec::Kind::kPowersOfTwo; break;
      case Mechanism::kSimpleSegregatedStorage:
        a.classes.kind = ClassesSpec::Kind::kPowersOfTwo;
        a.header = 0;
        a.chunk = 65536;
        break;
      case Mechanism::kBinaryBuddy:
      case Mechanism::kFibonacciBuddy:
        a.classes.kind = ClassesSpec::Kind::kPowersOfTwo;
        a.structure = Structure::kDll;
        a.split = a.coalesce = true;
        a.header = 16;
        a.chunk = std::uint64_t{1} << 20;
        break;
    }
  }

  ClassesSpec classes(const json& c, const AllocatorSpec& a) const {
    ClassesSpec out;
    if (c.is_array()) {
      out.kind = ClassesSpec::Kind::kBounds;
      for (std::size_t i = 0; i < c.size(); ++i) {
        if (!is_count(c[i])) fail("classes[" + std::to_string(i) + "]", "must be a non-negative integer");
        out.bounds.push_back(c[i].get<std::uint64_t>());
      }
      if (out.bounds.empty()) fail("classes", "an empty list of bounds");
      if (is_buddy(a.mechanism)) fail("classes", std::string(to_string(a.mechanism)) + " has its own classes");
      return out;
    }
    if (is_buddy(a.mechanism)) fail("classes", std::string(to_string(a.mechanism)) + " has its own classes: leave classes out");
    out.kind = word(c, "classes", kClassKinds, true);
    return out;
  }

  template <class E, std::size_t N>
  E word(const json& j, const char* key, const Name<E> (&names)[N], bool self = false) const {
    const json& v = self ? j : j[key];
    std::string known;
    for (const auto& n : names) known += (known.empty() ? "" : ", ") + std::string(n.name);
    if (!v.is_string()) fail(key, std::string("must be a string (one of ") + known + ")");
    const std::string s = v.get<std::string>();
    for (const auto& n : names)
      if (s == n.name) return n.value;
    fail(key, "unknown " + std::string(key) + " '" + s + "' (known: " + known + ")");
  }

  std::uint64_t number(const json& j, const char* key, const std::string& field, bool zero_ok) const {
    if (!j.contains(key)) fail(field, "missing");
    const json& v = j[key];
    if (!is_count(v) || (!zero_ok && v.get<std::uint64_t>() == 0 && field != "header"))
      fail(field, zero_ok ? "must be a non-negative integer" : "must be a positive integer");
    return v.get<std::uint64_t>();
  }

  bool boolean(const json& j, const char* key, const std::string& field) const {
    if (!j[key].is_boolean()) fail(field, "must be true or false");
    return j[key].get<bool>();
  }

  const std::string& origin_;
  std::string at_;
};

}  // namespace

SpecViewHolder::SpecViewHolder(const DmmSpec& spec, const std::vector<std::uint64_t>& exact_sizes) {
  for (const AllocatorSpec& a : spec.allocators) {
    dmm::AllocatorView v;
    v.min = a.min;
    v.bounded = a.max.has_value();
    v.max = a.max.value_or(0);
    v.mechanism = a.mechanism;
    v.structure = a.structure;
    v.fit = a.fit;
    v.policy = a.policy;
    v.split = a.split;
    v.coalesce = a.coalesce;
    v.classes = a.classes.kind;
    v.bounds = a.classes.bounds.data();
    v.bound_count = a.classes.bounds.size();
    v.header = a.header;
    v.alignment = a.alignment;
    v.granularity = a.granularity;
    v.chunk = a.chunk;
    v.returns = a.returns;
    allocators_.push_back(v);
  }
  view_.name = spec.name.c_str();
  view_.allocators = allocators_.data();
  view_.count = allocators_.size();
  view_.exact_sizes = exact_sizes.data();
  view_.exact_size_count = exact_sizes.size();
}

SpecError::SpecError(const std::string& origin, const std::string& field, const std::string& why)
    : std::invalid_argument(origin + ": " + field + ": " + why), field_(field), why_(why) {}

DmmSpec parse_dmm_spec(const json& j, const std::string& origin) {
  if (!j.is_object()) throw SpecError(origin, "(top)", "a DMM spec is a JSON object with \"allocators\"");
  for (const auto& [key, value] : j.items())
    if (key != "name" && key != "allocators" && key != "exact_sizes")
      throw SpecError(origin, key, "unknown field (known: name, allocators, exact_sizes)");
  DmmSpec spec;
  if (j.contains("name")) {
    if (!j["name"].is_string() || j["name"].get<std::string>().empty())
      throw SpecError(origin, "name", "must be a non-empty string");
    spec.name = j["name"].get<std::string>();
  }
  if (!j.contains("allocators") || !j["allocators"].is_array() || j["allocators"].empty())
    throw SpecError(origin, "allocators", "must be a non-empty array of allocators");
  const json& list = j["allocators"];
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = "allocators[" + std::to_string(i) + "]";
    spec.allocators.push_back(AllocatorReader(origin, at).read(list[i]));
    const AllocatorSpec& a = spec.allocators.back();
    if (i == 0 && a.min != 0)
      throw SpecError(origin, at + ".sizes.min",
                      "the first allocator must start at 0: sizes (0, " + std::to_string(a.min) + "] are covered by none");
    if (i > 0) {
      const AllocatorSpec& p = spec.allocators[i - 1];
      const std::string prev = "allocators[" + std::to_string(i - 1) + "]";
      if (!p.max)
        throw SpecError(origin, prev + ".sizes.max", "only the last allocator may have no max: " + at + " follows it");
      if (a.min > *p.max)
        throw SpecError(origin, at + ".sizes.min",
                        "sizes (" + std::to_string(*p.max) + ", " + std::to_string(a.min) + "] are covered by none");
      if (a.min < *p.max)
        throw SpecError(origin, at + ".sizes.min",
                        "overlaps " + prev + ": sizes (" + std::to_string(a.min) + ", " + std::to_string(*p.max) +
                            "] belong to both");
    }
  }
  if (spec.allocators.size() > 64) throw SpecError(origin, "allocators", "at most 64 allocators");
  if (j.contains("exact_sizes")) {
    const json& sizes = j["exact_sizes"];
    if (!sizes.is_array()) throw SpecError(origin, "exact_sizes", "must be an array of request sizes");
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      if (!is_count(sizes[i]) || sizes[i].get<std::uint64_t>() == 0 || sizes[i].get<std::uint64_t>() % 8 != 0 ||
          (i > 0 && sizes[i].get<std::uint64_t>() <= spec.exact_sizes.back()))
        throw SpecError(origin, "exact_sizes[" + std::to_string(i) + "]",
                        "sizes must be increasing non-zero multiples of 8");
      spec.exact_sizes.push_back(sizes[i].get<std::uint64_t>());
    }
  }
  return spec;
}

DmmSpec load_dmm_spec(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open the DMM spec");
  json j;
  try {
    j = json::parse(in);
  } catch (const json::parse_error& e) {
    throw std::runtime_error(path + ": not JSON (at byte " + std::to_string(e.byte) + ")");
  }
  DmmSpec spec = parse_dmm_spec(j, path);
  if (spec.name.empty()) {
    std::string stem = path.substr(path.find_last_of('/') + 1);
    if (stem.size() > 5 && stem.ends_with(".json")) stem.resize(stem.size() - 5);
    spec.name = stem;
  }
  return spec;
}

json to_json(const DmmSpec& spec) {
  json list = json::array();
  for (const auto& a : spec.allocators) {
    json classes;
    if (a.classes.kind == ClassesSpec::Kind::kBounds)
      classes = a.classes.bounds;
    else
      classes = name_of(kClassKinds, a.classes.kind);
    json one = {{"sizes", {{"min", a.min}, {"max", a.max ? json(*a.max) : json(nullptr)}}},
                    {"mechanism", to_string(a.mechanism)},
                    {"structure", name_of(kStructures, a.structure)},
                    {"fit", name_of(kFits, a.fit)},
                    {"policy", name_of(kPolicies, a.policy)},
                    {"split", a.split},
                    {"coalesce", a.coalesce},
                    {"classes", classes},
                    {"header", a.header},
                    {"alignment", a.alignment},
                    {"system", {{"granularity", a.granularity}, {"chunk", a.chunk}, {"returns", a.returns}}}};
    if (is_buddy(a.mechanism)) one.erase("classes");
    list.push_back(std::move(one));
  }
  json j = {{"allocators", list}};
  if (!spec.name.empty()) j["name"] = spec.name;
  if (!spec.exact_sizes.empty()) j["exact_sizes"] = spec.exact_sizes;
  return j;
}

void check_covers(const DmmSpec& spec, std::uint64_t largest_request, const std::string& origin) {
  const AllocatorSpec& last = spec.allocators.back();
  if (last.max && largest_request > *last.max)
    throw SpecError(origin, "allocators[" + std::to_string(spec.allocators.size() - 1) + "].sizes.max",
                    "the trace requests " + std::to_string(largest_request) + " bytes, above the last range's max (" +
                        std::to_string(*last.max) + "); give no max to cover every size");
}

std::size_t allocator_for(const DmmSpec& spec, std::uint64_t bytes) noexcept {
  if (bytes == 0) bytes = 1;
  for (std::size_t i = 0; i < spec.allocators.size(); ++i)
    if (!spec.allocators[i].max || bytes <= *spec.allocators[i].max) return i;
  return spec.allocators.size() - 1;
}

bool operator==(const ClassesSpec& a, const ClassesSpec& b) noexcept {
  return a.kind == b.kind && a.bounds == b.bounds;
}
bool operator==(const AllocatorSpec& a, const AllocatorSpec& b) noexcept {
  return a.min == b.min && a.max == b.max && a.mechanism == b.mechanism && a.structure == b.structure &&
         a.fit == b.fit && a.policy == b.policy && a.split == b.split && a.coalesce == b.coalesce &&
         a.classes == b.classes && a.header == b.header && a.alignment == b.alignment &&
         a.granularity == b.granularity && a.chunk == b.chunk && a.returns == b.returns;
}
bool operator==(const DmmSpec& a, const DmmSpec& b) noexcept {
  return a.name == b.name && a.allocators == b.allocators && a.exact_sizes == b.exact_sizes;
}

bool DmmSpec::uses_exact_classes() const noexcept {
  for (const AllocatorSpec& a : allocators)
    if (a.classes.kind == ClassesSpec::Kind::kExact) return true;
  return false;
}

}  // namespace tailor::simulate
