// SPDX-License-Identifier: MIT
// Runs a shell command for the replay tests and returns its exit status,
// stdout and stderr apart (the error tests check that stderr is one line).
#pragma once

#include <stdlib.h>
#include <sys/wait.h>

#include <fstream>
#include <sstream>
#include <string>

#include "common/temp_dir.h"

namespace tailor::test {

struct CommandOutput {
  int status = -1;  ///< exit status, or -1 if it did not exit normally
  std::string out;
  std::string err;
};

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline CommandOutput run_command(const std::string& command) {
  TempDir dir;
  const std::string out = dir.file("out"), err = dir.file("err");
  const int st = std::system((command + " >" + out + " 2>" + err + " </dev/null").c_str());
  CommandOutput o;
  o.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  o.out = read_file(out);
  o.err = read_file(err);
  return o;
}

}  // namespace tailor::test
