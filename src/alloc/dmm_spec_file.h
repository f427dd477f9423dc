// SPDX-License-Identifier: MIT
// Loading a DMM spec file for TAILOR_DMM inside malloc's set-up: the file
// is read and parsed (dmm/json_reader.h) into scratch pages mapped for the
// purpose, the spec read and checked by dmm/spec_reader.h (the reader the
// simulator uses), and the scratch given back once the DMM is built.
#pragma once

#include <cstddef>
#include <cstdint>

#include "dmm/spec_reader.h"

namespace tailor::alloc {

class SpecFile {
 public:
  SpecFile() = default;
  ~SpecFile();
  SpecFile(const SpecFile&) = delete;
  SpecFile& operator=(const SpecFile&) = delete;

  /// Reads `path`; false with error() saying why ("line 3, column 5: ...",
  /// "allocators[1].fit: unknown fit ...", "cannot read the file").
  bool load(const char* path);
  const dmm::SpecView& view() const noexcept { return storage_->view; }
  const char* error() const noexcept { return error_; }

 private:
  char* scratch_ = nullptr;
  std::size_t scratch_bytes_ = 0;
  dmm::SpecStorage* storage_ = nullptr;
  char error_[512] = "";
};

/// Reads the request sizes of TAILOR_DMM_SIZES (a file of whitespace-
/// separated numbers, the trace's sizes for the built-in EXA) into
/// out[0..cap), increasing multiples of 8; returns how many (0: none set).
std::size_t dmm_sizes_file(std::uint64_t* out, std::size_t cap) noexcept;

}  // namespace tailor::alloc
