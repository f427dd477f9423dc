// SPDX-License-Identifier: MIT
// The install layout resolved at run time (layout.h). The relative paths from
// the binary directory are computed by CMake from GNUInstallDirs and passed
// as TAILOR_REL_* definitions (src/layout/CMakeLists.txt).
#include "layout/layout.h"

#include <cstdlib>
#include <stdexcept>
#include <system_error>

namespace fs = std::filesystem;

namespace tailor::layout {

namespace {

struct Entry {
  const char* variable;
  const char* relative;  // from the binary directory
  const char* what;      // for messages
};

Entry entry(Item item) {
  switch (item) {
    case Item::kDataDir:
      return {"TAILOR_DATA_DIR", TAILOR_REL_DATADIR, "tailor's data directory"};
    case Item::kRecorder:
      return {"TAILOR_RECORD_LIB", TAILOR_REL_PKGLIBDIR "/libtailor-record.so", "the recorder libtailor-record.so"};
    case Item::kReplayDriver:
      return {"TAILOR_REPLAY_DRIVER", TAILOR_REL_LIBEXECDIR "/tailor-replay-driver", "tailor-replay-driver"};
    case Item::kLibtailor:
      return {"TAILOR_LIB", TAILOR_REL_LIBDIR "/libtailor.so", "libtailor.so"};
    case Item::kRunHelper:
      return {"TAILOR_RUN_HELPER", TAILOR_REL_LIBEXECDIR "/tailor-run", "tailor-run"};
    case Item::kMpiPlugin:
      return {"TAILOR_MPI_LIB", TAILOR_REL_PKGLIBDIR "/libtailor-mpi.so", "the MPI plugin libtailor-mpi.so"};
  }
  throw std::logic_error("layout: unknown item");
}

}  // namespace

fs::path executable_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot read /proc/self/exe: " + ec.message());
  return exe.parent_path();
}

const char* variable(Item item) { return entry(item).variable; }

fs::path expected(Item item) {
  const Entry e = entry(item);
  if (const char* env = std::getenv(e.variable); env != nullptr && *env != '\0') return env;
  return (executable_dir() / e.relative).lexically_normal();
}

fs::path find(Item item) {
  const Entry e = entry(item);
  const fs::path p = expected(item);
  if (fs::exists(p)) return p;
  const char* env = std::getenv(e.variable);
  if (env != nullptr && *env != '\0') throw std::runtime_error(std::string(e.variable) + "=" + env + ": no such file");
  throw std::runtime_error("cannot find " + std::string(e.what) + " at " + p.string() + " (set " + e.variable +
                           " to its path)");
}

fs::path data_file(const std::string& relative) {
  const fs::path dir = find(Item::kDataDir);
  const fs::path p = dir / relative;
  if (!fs::exists(p))
    throw std::runtime_error("cannot find " + relative + " in tailor's data directory " + dir.string() + " (set " +
                             variable(Item::kDataDir) + ")");
  return p;
}

}  // namespace tailor::layout
