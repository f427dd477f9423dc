// SPDX-License-Identifier: MIT
// The size classes `tailor tune` proposes for a program from its trace
// (docs/allocator.md, "Added classes"): libtailor's default series rounds a
// request up to a multiple of 16, by steps that widen with the size (32
// bytes above 128, 64 above 256 at the default spacing). At the moment the
// program holds the most, each size's live blocks waste the distance to
// their class; a class of its own saves that, at the cost of pages of its
// own (a 64 KiB slice at least).
//
//   classes: multiples of 16 above 128 bytes (alignment unchanged);
//   exact:   multiples of 8 from 24, 8-byte aligned (by choice only: C's
//            rule for malloc and GCC's vectorizer expect 16).
//
// A size is proposed when its blocks at the peak would give back at least
// kMinSaving bytes; at most 48 of each kind (config.h's limit), the ones
// that save most.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "simulate/replay_trace.h"

namespace tailor::tune {

struct ClassProposal {
  std::vector<std::uint32_t> classes;  ///< increasing, multiples of 16
  std::vector<std::uint32_t> exact;    ///< increasing, multiples of 8
  std::uint64_t peak_block_bytes = 0;  ///< bytes of the default classes' blocks live at the peak
  std::uint64_t classes_saving = 0;    ///< bytes `classes` give back at the peak
  std::uint64_t exact_saving = 0;      ///< bytes `exact` gives back on top of them
};

/// Bytes a proposed class must save at the peak: a slice of pages of its own.
constexpr std::uint64_t kMinSaving = 64 * 1024;

/// The proposal for the trace, against libtailor's default series
/// (class_spacing 4, middle_max 128K).
ClassProposal propose_classes(const simulate::ReplayTrace& trace);

/// "144,208": a list as the config file writes it.
std::string class_list(const std::vector<std::uint32_t>& sizes);

}  // namespace tailor::tune
