// SPDX-License-Identifier: MIT
// From a phenotype (the text the grammar derives: "alloc max=N key=v ...;"
// entries, share/search/dmm.bnf) to a DMM spec (src/simulate/dmm_spec.h).
// Ranges are repaired into a tiling: the first ten entries are kept, sorted
// by max (an entry repeating a max is dropped), each range starts where the
// previous one ends, and the last takes every larger size. The spec is then
// checked as any spec is; a phenotype the model rejects is invalid.
#pragma once

#include <string>

#include "simulate/dmm_spec.h"

namespace tailor::search {

/// Most allocators in a searched DMM (the DMM simulator paper: 1 to 10).
inline constexpr std::size_t kMaxAllocators = 10;

/// Throws simulate::SpecError (field and why) for a phenotype the model rejects.
simulate::DmmSpec phenotype_to_spec(const std::string& phenotype, const std::string& name = "found");

}  // namespace tailor::search
