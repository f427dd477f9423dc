// SPDX-License-Identifier: MIT
// Reading TAILOR_DMM's spec file and TAILOR_DMM_SIZES (dmm_spec_file.h).
#include "alloc/dmm_spec_file.h"

#include <cstring>
#include <new>

#include "alloc/config.h"
#include "alloc/os.h"

namespace tailor::alloc {

namespace {

constexpr std::size_t kMaxText = std::size_t{16} << 20;

std::size_t round_page(std::size_t n) { return (n + os::page_size() - 1) & ~(os::page_size() - 1); }

}  // namespace

SpecFile::~SpecFile() {
  if (scratch_ != nullptr) os::release(scratch_, scratch_bytes_);
}

bool SpecFile::load(const char* path) {
  dmm::Text error(error_, sizeof error_);
  // Scratch: the text, then the DOM's arena, then the storage and the pool.
  const std::size_t text_bytes = round_page(kMaxText);
  char* text = static_cast<char*>(os::reserve_aligned(text_bytes, os::page_size()));
  if (text == nullptr) {
    error.append("out of memory to read the file");
    return false;
  }
  const long n = os::read_file(path, text, kMaxText);
  if (n < 0 || static_cast<std::size_t>(n) >= kMaxText - 1) {
    os::release(text, text_bytes);
    error.append(n < 0 ? "cannot read the file" : "the file is larger than 16 MiB");
    return false;
  }
  const auto length = static_cast<std::size_t>(n);
  const std::size_t dom = dmm::json_arena_bound(length);
  const std::size_t pool = dmm::spec_pool_words(length) * sizeof(std::uint64_t);
  scratch_bytes_ = round_page(dom + sizeof(dmm::SpecStorage) + pool + 64);
  scratch_ = static_cast<char*>(os::reserve_aligned(scratch_bytes_, os::page_size()));
  if (scratch_ == nullptr) {
    os::release(text, text_bytes);
    error.append("out of memory to read the file");
    return false;
  }
  const dmm::JsonResult json = dmm::parse_json(text, length, scratch_, dom);
  os::release(text, text_bytes);  // the DOM keeps its own strings
  if (json.failed()) {
    error.append("not a JSON spec: ").append(json.error());
    return false;
  }
  const std::size_t storage_at = (dom + 63) & ~std::size_t{63};
  storage_ = ::new (scratch_ + storage_at) dmm::SpecStorage();
  auto* words = reinterpret_cast<std::uint64_t*>(scratch_ + storage_at + ((sizeof(dmm::SpecStorage) + 15) & ~std::size_t{15}));
  dmm::SpecProblem problem;
  if (!dmm::read_spec(*json.root(), *storage_, words, dmm::spec_pool_words(length), problem)) {
    error.append(problem.field.c_str()).append(": ").append(problem.why.c_str());
    return false;
  }
  if (storage_->name[0] == '\0') {  // the file's stem, as the simulator names it
    const char* stem = std::strrchr(path, '/');
    stem = stem ? stem + 1 : path;
    std::size_t len = std::strlen(stem);
    if (len > 5 && std::strcmp(stem + len - 5, ".json") == 0) len -= 5;
    if (len >= sizeof storage_->name) len = sizeof storage_->name - 1;
    std::memcpy(storage_->name, stem, len);
    storage_->name[len] = '\0';
  }
  return true;
}

std::size_t dmm_sizes_file(std::uint64_t* out, std::size_t cap) noexcept {
  const char* path = os::getenv("TAILOR_DMM_SIZES");
  if (path == nullptr || path[0] == '\0') return 0;
  const std::size_t bytes = round_page(kMaxText);
  char* text = static_cast<char*>(os::reserve_aligned(bytes, os::page_size()));
  if (text == nullptr) return 0;
  const long n = os::read_file(path, text, kMaxText);
  std::size_t count = 0;
  bool bad = n < 0;
  auto space = [](char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == ','; };
  for (long i = 0; !bad && i < n;) {
    while (i < n && space(text[i])) ++i;
    if (i >= n) break;
    long j = i;
    while (j < n && !space(text[j])) ++j;
    text[j] = '\0';  // j <= n, and read_file left room for a NUL at text[n]
    std::int64_t v = 0;
    bad = !parse_number(text + i, false, v) || v <= 0 || v % 8 != 0 ||
          (count > 0 && static_cast<std::uint64_t>(v) <= out[count - 1]) || count == cap;
    if (!bad) out[count++] = static_cast<std::uint64_t>(v);
    i = j + 1;
  }
  os::release(text, bytes);
  if (bad) {
    os::write_stderr("tailor: TAILOR_DMM_SIZES=", path,
                     ": not a list of increasing multiples of 8 (or too many); EXA uses every multiple of 8\n");
    return 0;
  }
  return count;
}

}  // namespace tailor::alloc
