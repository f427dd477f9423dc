// SPDX-License-Identifier: MIT
// Where a recorded process writes its trace. `tailor record -o FILE` sets
// TAILOR_RECORD_OUTPUT=FILE and TAILOR_RECORD_ROOT_PID to the pid of the
// command it starts. That process writes FILE; every other process of the
// recorded tree (fork children, and images replacing a process by exec)
// writes FILE.<pid>, or FILE.<pid>.<n> (n = 1, 2, ...) when that name is taken.
// Without `tailor record`, FILE defaults to tailor.trace in the working
// directory and no process is the root.
#pragma once

#include <cstddef>

namespace tailor::record {

/// Creates the calling process's trace file (O_EXCL, so no two processes
/// share one) and returns its descriptor, or -1 with errno set. The chosen
/// name is copied into path (cap bytes).
int create_trace_file(char* path, std::size_t cap) noexcept;

}  // namespace tailor::record
