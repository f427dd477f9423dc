// SPDX-License-Identifier: MIT
// Which ELF objects the traced process has mapped, so that call sites (return
// addresses) can be symbolized after the process is gone. Scanned with
// dl_iterate_phdr when recording starts and again at every flush (a cheap
// check of the loader's add counter when nothing changed), which catches
// dlopen'ed modules without interposing dlopen (that would change the caller
// dlopen sees, and with it RUNPATH and $ORIGIN lookups).
#pragma once

#include <cstddef>
#include <cstdint>

#include "tailor/trace/writer.h"

namespace tailor::record {

/// Collects modules not reported since the last forget_modules(), up to cap,
/// into out (their strings stay valid until the next call). Not reentrant:
/// callers serialize.
std::size_t scan_new_modules(trace::ModuleFields* out, std::size_t cap, std::uint64_t now_ns,
                             const char* executable) noexcept;

/// Treats every module as unreported again (a new trace file starts).
void forget_modules() noexcept;

}  // namespace tailor::record
