// SPDX-License-Identifier: MIT
// Whole files in and out, with errors that name the file and what it was
// for: the grammar, DMM specs, config files, checkpoints and reports all
// read and write this way.
//
// write_file_atomically writes a temporary file beside the target, flushes
// it to disk and renames it over the target, so that a reader (or a crash)
// sees the old file or the new one, never half of one: the user's config,
// tune's outputs, the search's checkpoints and the HTML report.
// Header-only, std and POSIX only.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace tailor::util {

// The bytes of `path`; std::runtime_error "PATH: cannot read the WHAT: why".
inline std::string read_file(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot read the " + what + ": " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw std::runtime_error(path + ": cannot read the " + what);
  return text.str();
}

// Replaces `path` by `text` whole, in a folder that exists; throws
// std::runtime_error "PATH: cannot write the WHAT: why", leaving the old
// file as it was.
inline void write_file_atomically(const std::string& path, const std::string& text, const char* what) {
  const auto fail = [&](const std::string& why) {
    throw std::runtime_error(path + ": cannot write the " + what + ": " + why);
  };
  const std::filesystem::path target = std::filesystem::absolute(path);
  const std::string tmp = target.string() + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(std::strerror(errno));
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int e = errno;
      ::close(fd);
      std::remove(tmp.c_str());
      fail(std::strerror(e));
    }
    done += static_cast<std::size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0;
  const int sync_error = errno;
  const bool closed = ::close(fd) == 0;
  if (!synced || !closed) {
    const int e = synced ? errno : sync_error;
    std::remove(tmp.c_str());
    fail(std::strerror(e));
  }
  if (std::rename(tmp.c_str(), target.c_str()) != 0) {
    const int e = errno;
    std::remove(tmp.c_str());
    fail(std::string("cannot replace it: ") + std::strerror(e));
  }
}

}  // namespace tailor::util
