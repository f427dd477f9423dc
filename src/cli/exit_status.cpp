// SPDX-License-Identifier: MIT
// The exit status of a subcommand that read a trace (exit_status.h).
#include "cli/exit_status.h"

#include <fmt/format.h>

namespace tailor::cli {

int exit_status(const trace::Reader& r, std::string_view command) {
  if (!r.complete()) fmt::print(stderr, "tailor {}: {}: {}\n", command, r.path(), r.cut());
  return 0;
}

}  // namespace tailor::cli
