// SPDX-License-Identifier: MIT
// Decoding one Events chunk (chunk.h).
#include "chunk.h"

#include <new>

#include <zstd.h>

#include "event_codec.h"
#include "tailor/trace/reader.h"

namespace tailor::trace {

void ChunkScratch::FreeContext::operator()(void* context) const noexcept {
  ZSTD_freeDCtx(static_cast<ZSTD_DCtx*>(context));
}

void decode_chunk(const std::string& path, const std::uint8_t* data, const ChunkRef& ref, ChunkScratch& scratch,
                  std::vector<Event>& events, unsigned skip) {
  const std::uint8_t* payload = data + ref.offset + format::kChunkHeaderSize;
  const std::uint8_t* raw = payload;
  if (ref.h.codec == format::Codec::Zstd) {
    if (scratch.bytes.size() < ref.h.raw_size) scratch.bytes.resize(ref.h.raw_size);
    if (!scratch.zstd) {
      scratch.zstd.reset(ZSTD_createDCtx());
      if (!scratch.zstd) throw std::bad_alloc();
    }
    std::size_t n = ZSTD_decompressDCtx(static_cast<ZSTD_DCtx*>(scratch.zstd.get()), scratch.bytes.data(),
                                        ref.h.raw_size, payload, ref.h.stored_size);
    if (ZSTD_isError(n))
      throw Error(path, ref.offset, std::string("cannot decompress chunk: ") + ZSTD_getErrorName(n));
    if (n != ref.h.raw_size)
      throw Error(path, ref.offset,
                  "chunk decompresses to " + std::to_string(n) + " bytes, header says " + std::to_string(ref.h.raw_size));
    raw = scratch.bytes.data();
  } else if (ref.h.raw_size != ref.h.stored_size) {
    throw Error(path, ref.offset, "raw chunk with different raw and stored sizes");
  }
  if (events.size() < ref.h.count) events.resize(ref.h.count);
  std::string why;
  if (!codec::decode(raw, ref.h.raw_size, ref.h.count, ref.h.thread, ref.h.first_time_ns, events.data(), why,
                     codec::DecodePath::kBest, skip))
    throw Error(path, ref.offset, "bad event chunk: " + why);
}

}  // namespace tailor::trace
