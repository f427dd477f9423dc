// SPDX-License-Identifier: MIT
// An Events chunk as the reader indexed it, and its decoding: the one step
// that turns a chunk's checked bytes into events, shared by the reader's
// calling thread and its decoding threads (chunk_pipeline.h). Kept apart from
// reader.cpp so that both can call it and neither owns it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "trace/format.h"
#include "tailor/trace/event.h"

namespace tailor::trace {

struct ChunkRef {
  std::uint64_t offset = 0;    ///< of the chunk header in the file
  std::uint64_t sequence = 0;  ///< the chunk's position among all chunks of the file
  format::ChunkHeader h;
  /// The EventStacks chunk after it (offset 0: none), and the reader's map
  /// of the writer's stack ids to its own (Reader::stacks()).
  std::uint64_t stacks_offset = 0;
  format::ChunkHeader stacks_h;
  const std::vector<std::uint32_t>* stack_ids = nullptr;
};

/// What one decoding thread keeps from one chunk to the next: the buffer of
/// decompressed bytes and zstd's decompression context (ZSTD_decompress would
/// allocate and set up a new one, about 160 KB, for every chunk: 5% of
/// reading's CPU). Made empty; filled at the first chunk.
struct ChunkScratch {
  struct FreeContext {
    void operator()(void* context) const noexcept;
  };
  std::vector<std::uint8_t> bytes;
  std::vector<std::uint8_t> stack_bytes;  // an EventStacks payload, decompressed
  std::unique_ptr<void, FreeContext> zstd;  // a ZSTD_DCtx
};

/// Decompresses and decodes the Events chunk `ref` of the file mapped at
/// `data` into events[0..ref.h.count) (events grows if it must; once a buffer
/// has held a chunk this size, no allocation happens). `scratch` holds the
/// decompressed bytes. Throws Error naming `path` and the chunk's offset.
/// Thread-safe for distinct scratch and events buffers. `skip`: columns
/// left undecoded (codec::Skip); stacks go with the call sites.
void decode_chunk(const std::string& path, const std::uint8_t* data, const ChunkRef& ref,
                  ChunkScratch& scratch, std::vector<Event>& events, unsigned skip = 0);

/// The payload of the chunk at `offset` with header `h` (codec Raw or Zstd,
/// one frame) into `out`; throws Error naming `path` and the offset.
void chunk_payload(const std::string& path, const std::uint8_t* data, std::uint64_t offset,
                   const format::ChunkHeader& h, ChunkScratch& scratch, std::vector<std::uint8_t>& out);

}  // namespace tailor::trace
