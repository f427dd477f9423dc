// SPDX-License-Identifier: MIT
// Turns call-site addresses of a recorded process into function names and
// source lines, after the fact, from the trace's module map and the ELF files
// (with their DWARF, when present) still on disk. Uses elfutils' libdw.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tailor/trace/metadata.h"

namespace tailor::analyze {

struct Symbol {
  std::string function;  ///< demangled, or empty if unknown
  std::string file;      ///< source file of the line in `function`, or empty
  int line = 0;
  std::string inlined_file;  ///< innermost position when the address is in inlined code, or empty
  int inlined_line = 0;
  std::string module;    ///< path of the object holding the address, or empty
  std::uint64_t offset = 0;  ///< address minus the module's load address

  /// "function (file:line)", "function (file:line, inlined file:line)",
  /// "function (module)", or "module+0xoffset".
  std::string to_string() const;
};

class Symbolizer {
 public:
  explicit Symbolizer(const std::vector<trace::Module>& modules);
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  /// Symbol of a return address (the call instruction just before it is looked up).
  Symbol resolve_return_address(std::uint64_t address);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tailor::analyze
