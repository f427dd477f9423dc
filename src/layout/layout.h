// SPDX-License-Identifier: MIT
// Where tailor's own files are at run time: the data of share/tailor (the DMM
// grammar, DMM specs), the recorder preload library, the replay driver,
// libtailor.so and the MPI plugin. Every one is found relative to the running `tailor` binary,
// by the same relative path in the build tree and in an installed prefix
// (the build tree mirrors the install layout, see the top CMakeLists.txt),
// so a prefix can be moved after install and no lookup depends on the source
// tree. Each can be overridden by an environment variable.
#pragma once

#include <filesystem>
#include <string>

namespace tailor::layout {

enum class Item {
  kDataDir,       ///< PREFIX/share/tailor; TAILOR_DATA_DIR
  kRecorder,      ///< PREFIX/lib/tailor/libtailor-record.so; TAILOR_RECORD_LIB
  kReplayDriver,  ///< PREFIX/libexec/tailor/tailor-replay-driver; TAILOR_REPLAY_DRIVER
  kLibtailor,     ///< PREFIX/lib/libtailor.so; TAILOR_LIB
  kRunHelper,     ///< PREFIX/libexec/tailor/tailor-run; TAILOR_RUN_HELPER
  kMpiPlugin,     ///< PREFIX/lib/tailor/libtailor-mpi.so; TAILOR_MPI_LIB
};

/// The directory of the running executable (/proc/self/exe).
std::filesystem::path executable_dir();

/// The environment variable that overrides `item`.
const char* variable(Item item);

/// Where `item` should be: the overriding variable's value if it is set and
/// not empty, else its place relative to executable_dir(). Not checked.
std::filesystem::path expected(Item item);

/// expected(item), checked to exist. Throws std::runtime_error naming the
/// path looked at and the variable that overrides it.
std::filesystem::path find(Item item);

/// A file under the data directory (e.g. "search/dmm.bnf"), checked to exist.
std::filesystem::path data_file(const std::string& relative);

}  // namespace tailor::layout
