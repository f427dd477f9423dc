// SPDX-License-Identifier: MIT
// How a subcommand that read a trace ends: a trace cut short (its process
// killed mid-write) is still read up to the cut, so the subcommand succeeds,
// with one warning in the same words from every subcommand.
#pragma once

#include <string_view>

#include "tailor/trace/reader.h"

namespace tailor::cli {

/// The exit status of `tailor COMMAND` once it has read `r`: 0, after a
/// warning on standard error, `tailor COMMAND: TRACE: why`, if the trace was
/// cut short.
int exit_status(const trace::Reader& r, std::string_view command);

}  // namespace tailor::cli
