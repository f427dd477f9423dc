// SPDX-License-Identifier: MIT
// The recorded workload the simulator tests check every DMM on: wl_cfrac at
// size 2 (about 1 M events) recorded with `tailor record`. Tests that use it
// skip under a sanitizer (recording needs LD_PRELOAD) and when the workloads
// are not built.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "common/temp_dir.h"

#if defined(TAILOR_SANITIZED)
#define TAILOR_SKIP_UNLESS_CFRAC() GTEST_SKIP() << "records under LD_PRELOAD, which the sanitizer runtimes do not allow"
#elif !defined(WL_CFRAC)
#define TAILOR_SKIP_UNLESS_CFRAC() GTEST_SKIP() << "the workloads are not built (TAILOR_BUILD_BENCH=OFF)"
#else
#define TAILOR_SKIP_UNLESS_CFRAC() (void)0
#endif

namespace tailor::test {

/// Records wl_cfrac --size 2 into `dir`; returns the trace's path ("" and a
/// test failure if recording failed).
inline std::string record_cfrac([[maybe_unused]] const TempDir& dir) {
#if defined(WL_CFRAC) && !defined(TAILOR_SANITIZED)
  const std::string path = dir.file("cfrac.trace");
  const std::string cmd = std::string(TAILOR_BIN) + " record -o " + path + " -- " + WL_CFRAC +
                          " --size 2 > /dev/null 2> " + dir.file("record.err");
  if (std::system(cmd.c_str()) != 0) {
    ADD_FAILURE() << cmd;
    return "";
  }
  return path;
#else
  return "";
#endif
}

}  // namespace tailor::test
