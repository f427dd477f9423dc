// SPDX-License-Identifier: MIT
// Reading, checking and writing DMM specs (dmm_spec.h). The rules checked
// here are those docs/dmm.md states for the model; each failure names the
// JSON path of the field at fault.
#include "simulate/dmm_spec.h"

#include "dmm/spec_reader.h"
#include "util/file.h"

#include <algorithm>
#include <bit>
#include <nlohmann/json.hpp>
#include <memory>
#include <vector>

namespace tailor::simulate {

namespace {

using nlohmann::json;

// The names of the model's words are the reader's (dmm/spec_reader.h).
using dmm::spec_detail::is_buddy;
using dmm::spec_detail::kClassKinds;
using dmm::spec_detail::kFits;
using dmm::spec_detail::kPolicies;
using dmm::spec_detail::kStructures;
using dmm::spec_detail::Name;

template <class E, std::size_t N>
const char* name_of(const Name<E> (&names)[N], E value) noexcept {
  for (const auto& n : names)
    if (n.value == value) return n.name;
  return "?";
}

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
    v.area_lists = a.area_lists;
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

namespace {

// A spec read by dmm/spec_reader.h (the reader libtailor uses for
// TAILOR_DMM) turned into the simulator's own DmmSpec.
DmmSpec from_view(const dmm::SpecView& v) {
  DmmSpec spec;
  spec.name = v.name;
  for (std::size_t i = 0; i < v.count; ++i) {
    const dmm::AllocatorView& a = v.allocators[i];
    AllocatorSpec out;
    out.min = a.min;
    if (a.bounded) out.max = a.max;
    out.mechanism = a.mechanism;
    out.structure = a.structure;
    out.fit = a.fit;
    out.policy = a.policy;
    out.split = a.split;
    out.coalesce = a.coalesce;
    out.classes.kind = a.classes;
    out.classes.bounds.assign(a.bounds, a.bounds + a.bound_count);
    out.header = a.header;
    out.alignment = a.alignment;
    out.granularity = a.granularity;
    out.chunk = a.chunk;
    out.returns = a.returns;
    out.area_lists = a.area_lists;
    spec.allocators.push_back(std::move(out));
  }
  spec.exact_sizes.assign(v.exact_sizes, v.exact_sizes + v.exact_size_count);
  return spec;
}

// Reads the JSON text of a spec; a syntax error is reported by `syntax`.
template <class Syntax>
DmmSpec read_text(const std::string& text, const std::string& origin, Syntax syntax) {
  std::vector<unsigned char> arena(dmm::json_arena_bound(text.size()));
  const dmm::JsonResult doc = dmm::parse_json(text.data(), text.size(), arena.data(), arena.size());
  if (doc.failed()) syntax(doc);
  auto storage = std::make_unique<dmm::SpecStorage>();
  std::vector<std::uint64_t> pool(dmm::spec_pool_words(text.size()));
  dmm::SpecProblem problem;
  if (!dmm::read_spec(*doc.root(), *storage, pool.data(), pool.size(), problem))
    throw SpecError(origin, problem.field.c_str(), problem.why.c_str());
  return from_view(storage->view);
}

}  // namespace

DmmSpec parse_dmm_spec(const json& j, const std::string& origin) {
  return read_text(j.dump(), origin, [&](const dmm::JsonResult& doc) -> void {
    throw SpecError(origin, "(top)", std::string("not JSON: ") + doc.error());  // cannot happen: j is JSON
  });
}

DmmSpec load_dmm_spec(const std::string& path) {
  DmmSpec spec = read_text(util::read_file(path, "DMM spec"), path, [&](const dmm::JsonResult& doc) -> void {
    throw std::runtime_error(path + ": not JSON (at byte " + std::to_string(doc.error_location().offset) +
                             ", " + doc.error() + ")");
  });
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
    if (a.mechanism == dmm::Mechanism::kSimpleSegregatedStorage) one["lists"] = a.area_lists ? "area" : "class";
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

namespace {

void put_word(std::string& out, std::uint64_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); }

void put_identity(std::string& out, const AllocatorSpec& a) {
  // Every field operator== compares (the static_assert below catches a new one).
  put_word(out, a.min);
  put_word(out, a.max.has_value());
  put_word(out, a.max.value_or(0));
  const char small[] = {static_cast<char>(a.mechanism), static_cast<char>(a.structure), static_cast<char>(a.fit),
                        static_cast<char>(a.policy),    static_cast<char>(a.split),     static_cast<char>(a.coalesce),
                        static_cast<char>(a.classes.kind), static_cast<char>(a.returns), static_cast<char>(a.area_lists)};
  out.append(small, sizeof small);
  put_word(out, a.classes.bounds.size());
  for (std::uint64_t b : a.classes.bounds) put_word(out, b);
  put_word(out, a.header);
  put_word(out, a.alignment);
  put_word(out, a.granularity);
  put_word(out, a.chunk);
}
static_assert(sizeof(AllocatorSpec) == 104, "AllocatorSpec changed: add the new field to put_identity and operator==");

}  // namespace

std::string identity(const AllocatorSpec& a) {
  std::string out;
  out.reserve(128);
  put_identity(out, a);
  return out;
}

std::string identity(const DmmSpec& spec) {
  std::string out;
  out.reserve(16 + spec.name.size() + 112 * spec.allocators.size() + 8 * spec.exact_sizes.size());
  put_word(out, spec.name.size());
  out += spec.name;
  put_word(out, spec.allocators.size());
  for (const AllocatorSpec& a : spec.allocators) put_identity(out, a);
  put_word(out, spec.exact_sizes.size());
  for (std::uint64_t v : spec.exact_sizes) put_word(out, v);
  return out;
}

bool operator==(const ClassesSpec& a, const ClassesSpec& b) noexcept {
  return a.kind == b.kind && a.bounds == b.bounds;
}
bool operator==(const AllocatorSpec& a, const AllocatorSpec& b) noexcept {
  return a.min == b.min && a.max == b.max && a.mechanism == b.mechanism && a.structure == b.structure &&
         a.fit == b.fit && a.policy == b.policy && a.split == b.split && a.coalesce == b.coalesce &&
         a.classes == b.classes && a.header == b.header && a.alignment == b.alignment &&
         a.granularity == b.granularity && a.chunk == b.chunk && a.returns == b.returns &&
         a.area_lists == b.area_lists;
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
