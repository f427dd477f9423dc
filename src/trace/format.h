// SPDX-License-Identifier: MIT
// The on-disk layout of a trace file: constants and the two fixed-size headers
// (file header, chunk header). docs/trace-format.md is the prose version of
// this file; keep the two in step and bump kFormatVersion on any change.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tailor::trace::format {

inline constexpr char kFileMagic[8] = {'T', 'A', 'I', 'L', 'O', 'R', 'T', 'R'};
inline constexpr std::uint32_t kChunkMagic = 0x4b484354;  // "TCHK" little-endian

/// File header: magic(8) version(2) flags(2) body_size(4), body, body hash(8).
inline constexpr std::size_t kFilePrefixSize = 16;
inline constexpr std::uint32_t kMaxHeaderBody = 1u << 20;

/// Stacks (version 3): stack nodes (stacks.h). EventStacks (version 3): the
/// stacks of the events of the Events chunk just before it, same thread.
enum class ChunkType : std::uint8_t { Events = 1, Modules = 2, End = 3, Stacks = 4, EventStacks = 5 };
/// How an Events payload is stored. Raw and Zstd (one zstd frame): the
/// columns after their lengths in the order of enum Column (format version 1
/// writes Zstd). ZstdFrames (version 2 writes it): the columns in kFrameOrder,
/// compressed as kFrames zstd frames one after the other (frame f holds
/// columns kFrameStart[f] to kFrameStart[f + 1] - 1 of kFrameOrder; the
/// lengths are in the first), so that a reader that needs
/// neither times nor call sites decompresses only the first frame.
enum class Codec : std::uint8_t { Raw = 0, Zstd = 1, ZstdFrames = 2 };

/// Chunk header, 56 bytes, little-endian, followed by stored_size payload bytes.
struct ChunkHeader {
  std::uint32_t magic = kChunkMagic;
  ChunkType type = ChunkType::Events;
  Codec codec = Codec::Raw;
  std::uint16_t reserved = 0;
  std::uint32_t thread = 0;
  std::uint32_t count = 0;        ///< events, modules, or 1 for End
  std::uint32_t raw_size = 0;     ///< payload size after decompression
  std::uint32_t stored_size = 0;  ///< payload size in the file
  std::uint64_t first_time_ns = 0;
  std::uint64_t last_time_ns = 0;
  std::uint64_t payload_hash = 0; ///< XXH3-64 of the stored payload
  std::uint64_t header_hash = 0;  ///< XXH3-64 of the 48 bytes before it
};
inline constexpr std::size_t kChunkHeaderSize = 56;
inline constexpr std::size_t kChunkHashedSize = 48;

/// Limits a reader enforces before trusting sizes from a file.
inline constexpr std::uint32_t kMaxChunkEvents = 1u << 20;
inline constexpr std::uint32_t kMaxChunkBytes = 64u << 20;

/// Upper bound of one encoded event (two kind bytes and five varints).
inline constexpr std::size_t kMaxEncodedEvent = 2 + 5 * 10;

/// The first kind byte of an event: op and which optional columns it uses.
inline constexpr unsigned kOpMask = 0x0f;
inline constexpr unsigned kHasSize = 0x10;
inline constexpr unsigned kHasAux = 0x20;
inline constexpr unsigned kHasCallsite = 0x40;
inline constexpr unsigned kReservedKindBits = 0x80;

/// Column order inside an Events payload.
enum Column : unsigned { kKinds, kTime, kSize, kAddress, kAux, kCallsite, kColumns };

/// Where the columns of a ZstdFrames payload sit, and how they are framed:
/// those a replay reads (kinds, size, address, aux), then the times, then the
/// call sites.
inline constexpr Column kFrameOrder[kColumns] = {kKinds, kSize, kAddress, kAux, kTime, kCallsite};
inline constexpr unsigned kFrames = 3;
inline constexpr unsigned kFrameStart[kFrames + 1] = {0, 4, 5, kColumns};

/// End payload: reason(1) pad(3) status(4) events(8) dropped(8) time(8).
inline constexpr std::size_t kEndPayloadSize = 32;

}  // namespace tailor::trace::format
