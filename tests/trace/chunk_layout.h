// SPDX-License-Identifier: MIT
// The on-disk layout of a trace (src/trace/format.h, docs/trace-format.md),
// restated for the tests that patch trace files at byte level, with what they
// all need for it: a file as bytes, the chunks' fields and their checksums.
// Restated on purpose rather than included: a silent layout change fails the
// tests. Written once here for damage_test.cpp and parallel_read_test.cpp.
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#endif
#include <xxhash.h>

namespace tailor::test::layout {

using Bytes = std::vector<std::uint8_t>;

constexpr std::size_t kFilePrefix = 16;  // magic(8) version(2) flags(2) body_size(4)
constexpr std::size_t kChunkHeader = 56;
constexpr std::size_t kChunkHashed = 48;
constexpr std::uint32_t kChunkMagic = 0x4b484354;
enum ChunkType : std::uint8_t { kEvents = 1, kModules = 2, kEnd = 3, kStacks = 4, kEventStacks = 5 };
enum Codec : std::uint8_t { kRaw = 0, kZstd = 1 };
// Field offsets inside a chunk header.
constexpr std::size_t kType = 4, kCodec = 5, kThread = 8, kCount = 12, kRawSize = 16, kStoredSize = 20,
                      kFirstTime = 24, kLastTime = 32, kPayloadHash = 40, kHeaderHash = 48;

inline std::uint64_t hash64(const std::uint8_t* p, std::size_t n) { return XXH3_64bits(p, n); }

template <class T>
T get(const Bytes& b, std::size_t at) {
  T v;
  std::memcpy(&v, b.data() + at, sizeof v);
  return v;
}
template <class T>
void put(Bytes& b, std::size_t at, T v) {
  std::memcpy(b.data() + at, &v, sizeof v);
}

/// Where the first chunk of a file starts: after the prefix, the header body and its hash.
inline std::size_t header_end(const Bytes& b) { return kFilePrefix + get<std::uint32_t>(b, 12) + 8; }

/// Makes a chunk's checksums right again after its bytes were changed.
inline void rehash_chunk(Bytes& b, std::size_t at) {
  if (at + kChunkHeader > b.size()) return;
  std::uint32_t stored = get<std::uint32_t>(b, at + kStoredSize);
  if (at + kChunkHeader + stored <= b.size())
    put<std::uint64_t>(b, at + kPayloadHash, hash64(b.data() + at + kChunkHeader, stored));
  put<std::uint64_t>(b, at + kHeaderHash, hash64(b.data() + at, kChunkHashed));
}

inline void write_file(const std::string& path, const std::uint8_t* data, std::size_t n) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(n));
  if (!out) throw std::runtime_error("cannot write " + path);
}
inline void write_file(const std::string& path, const Bytes& b) { write_file(path, b.data(), b.size()); }

inline Bytes read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

}  // namespace tailor::test::layout
