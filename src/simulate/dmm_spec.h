// SPDX-License-Identifier: MIT
// DmmSpec: the DMM model of the DMM simulator paper as data (docs/dmm.md, "The model"). A
// DMM is an ordered list of allocators, each owning a range (min, max] of
// request sizes; each allocator has a mechanism, a free-list structure, a
// fit, a policy, splitting and coalescing, a header size and alignment, its
// size classes, and how it obtains memory from the system. Specs are read
// from and written to JSON; every rule a spec must obey is checked on
// reading, and a bad spec is rejected with a SpecError naming the field (a
// JSON path such as `allocators[1].fit`) and why. dmm.h builds the
// simulated DMM from a spec.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "dmm/spec.h"
#include "simulate/dmm_names.h"

namespace tailor::simulate {

/// How an allocator's range is cut into size classes (one free list each).
struct ClassesSpec {
  using Kind = dmm::ClassKind;
  Kind kind = Kind::kSingle;
  std::vector<std::uint64_t> bounds;  ///< kBounds only
};

struct AllocatorSpec {
  std::uint64_t min = 0;                ///< exclusive lower bound of request sizes
  std::optional<std::uint64_t> max;     ///< inclusive upper bound; none: no bound
  Mechanism mechanism = Mechanism::kSegregatedFreeLists;
  Structure structure = Structure::kSll;
  Fit fit = Fit::kFirst;
  Policy policy = Policy::kLifo;
  bool split = false;
  bool coalesce = false;
  ClassesSpec classes;
  std::uint64_t header = 8;          ///< bytes before a block's data
  std::uint64_t alignment = 16;      ///< of every block's data
  std::uint64_t granularity = 4096;  ///< system requests are multiples of it
  std::uint64_t chunk = 4096;        ///< least bytes per system request (a buddy's largest block)
  bool returns = false;              ///< whole free regions go back to the system
  bool area_lists = false;           ///< simple_segregated_storage: a free list per area ("lists": "area")
};

struct DmmSpec {
  std::string name;
  std::vector<AllocatorSpec> allocators;
  /// The request sizes (increasing multiples of 8) that make "exact"
  /// classes, carried in the file when the search wrote it (the trace's), so
  /// that the DMM run for real has the classes the simulation had; empty:
  /// the trace's sizes where one is simulated.
  std::vector<std::uint64_t> exact_sizes;

  /// True if some allocator's classes are "exact".
  bool uses_exact_classes() const noexcept;
};

/// The freestanding view of a spec (dmm/spec.h) that dmm::Composite builds
/// from; it points into `spec` and `exact_sizes`, which must outlive it.
class SpecViewHolder {
 public:
  SpecViewHolder(const DmmSpec& spec, const std::vector<std::uint64_t>& exact_sizes);
  const dmm::SpecView& view() const noexcept { return view_; }

 private:
  std::vector<dmm::AllocatorView> allocators_;
  dmm::SpecView view_;
};

/// A spec that breaks a rule. what(): "ORIGIN: FIELD: why".
class SpecError : public std::invalid_argument {
 public:
  SpecError(const std::string& origin, const std::string& field, const std::string& why);
  const std::string& field() const noexcept { return field_; }
  const std::string& why() const noexcept { return why_; }

 private:
  std::string field_, why_;
};

/// Reads and checks a spec; `origin` (a file name) prefixes errors.
DmmSpec parse_dmm_spec(const nlohmann::json& json, const std::string& origin = "spec");
/// Reads a spec from a JSON file (errors name the file; a JSON syntax error its byte).
DmmSpec load_dmm_spec(const std::string& path);
/// The spec as JSON, every field written (parse_dmm_spec(to_json(s)) == s).
nlohmann::json to_json(const DmmSpec& spec);

/// Checks a (valid) spec against a trace whose largest request (routing
/// size) is `largest_request` bytes: the last range must reach it. Throws SpecError.
void check_covers(const DmmSpec& spec, std::uint64_t largest_request, const std::string& origin = "spec");

/// The index of the allocator whose range holds a routing size of `bytes` (0 counts as 1).
std::size_t allocator_for(const DmmSpec& spec, std::uint64_t bytes) noexcept;

/// A byte string that two specs share exactly when they are equal
/// (operator==): a cache key, much cheaper to make than to_json(s).dump().
/// Not a file format: it may change between builds.
std::string identity(const AllocatorSpec& a);
std::string identity(const DmmSpec& spec);

bool operator==(const ClassesSpec& a, const ClassesSpec& b) noexcept;
bool operator==(const AllocatorSpec& a, const AllocatorSpec& b) noexcept;
bool operator==(const DmmSpec& a, const DmmSpec& b) noexcept;

}  // namespace tailor::simulate
