// SPDX-License-Identifier: MIT
// PlanFile: where a replay plan goes for the drivers to read. FILE when the
// user keeps it; otherwise a temporary file unlinked as soon as it is
// created and opened, by tailor and the drivers, as /dev/fd/N (the
// descriptor is inherited), so that nothing is left behind however tailor
// ends. Used by `tailor replay` and `tailor validate`.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>
#include <string>

namespace tailor::replay {

class PlanFile {
 public:
  explicit PlanFile(const std::string& keep) {
    if (!keep.empty()) {
      path_ = keep;
      return;
    }
    std::string pattern = (std::filesystem::temp_directory_path() / "tailor-replay-XXXXXX").string();
    fd_ = mkstemp(pattern.data());  // no O_CLOEXEC: the drivers inherit it
    if (fd_ < 0) throw std::runtime_error("cannot create a temporary file in " + pattern);
    ::unlink(pattern.c_str());
    path_ = "/dev/fd/" + std::to_string(fd_);
  }
  ~PlanFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  PlanFile(const PlanFile&) = delete;
  PlanFile& operator=(const PlanFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace tailor::replay
