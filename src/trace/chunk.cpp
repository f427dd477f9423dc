// SPDX-License-Identifier: MIT
// Decoding one Events chunk (chunk.h).
#include "trace/chunk.h"

#include <algorithm>
#include <new>

#include <zstd.h>

#include "trace/event_codec.h"
#include "tailor/trace/reader.h"

namespace tailor::trace {

void ChunkScratch::FreeContext::operator()(void* context) const noexcept {
  ZSTD_freeDCtx(static_cast<ZSTD_DCtx*>(context));
}

namespace {

// The `stored` bytes at `payload` (of the chunk at `offset`) decompressed into
// `out` with the scratch's context; their size, which must be `raw_size`
// unless only some of the chunk's frames were given (`whole` false).
std::size_t decompress(const std::string& path, std::uint64_t offset, const std::uint8_t* payload, std::size_t stored,
                       std::size_t raw_size, bool whole, ChunkScratch& scratch, std::vector<std::uint8_t>& out) {
  if (out.size() < raw_size) out.resize(raw_size);
  if (!scratch.zstd) {
    scratch.zstd.reset(ZSTD_createDCtx());
    if (!scratch.zstd) throw std::bad_alloc();
  }
  const std::size_t n =
      ZSTD_decompressDCtx(static_cast<ZSTD_DCtx*>(scratch.zstd.get()), out.data(), raw_size, payload, stored);
  if (ZSTD_isError(n)) throw Error(path, offset, std::string("cannot decompress chunk: ") + ZSTD_getErrorName(n));
  if (whole && n != raw_size)
    throw Error(path, offset,
                "chunk decompresses to " + std::to_string(n) + " bytes, header says " + std::to_string(raw_size));
  return n;
}

}  // namespace

void decode_chunk(const std::string& path, const std::uint8_t* data, const ChunkRef& ref, ChunkScratch& scratch,
                  std::vector<Event>& events, unsigned skip) {
  const std::uint8_t* payload = data + ref.offset + format::kChunkHeaderSize;
  const std::uint8_t* raw = payload;
  std::size_t raw_size = ref.h.raw_size;
  codec::Layout layout = codec::Layout::kColumnOrder;
  if (ref.h.codec == format::Codec::Zstd || ref.h.codec == format::Codec::ZstdFrames) {
    // The frames this reading needs: all of a Zstd payload; of a ZstdFrames
    // one, those codec::frames_needed says (the rest is never decompressed).
    std::size_t stored = ref.h.stored_size;
    bool whole = true;
    if (ref.h.codec == format::Codec::ZstdFrames) {
      layout = codec::Layout::kFrameOrder;
      const unsigned frames = codec::frames_needed(skip);
      if (frames < format::kFrames) {
        whole = false;
        stored = 0;
        for (unsigned f = 0; f < frames; ++f) {
          const std::size_t frame = ZSTD_findFrameCompressedSize(payload + stored, ref.h.stored_size - stored);
          if (ZSTD_isError(frame))
            throw Error(path, ref.offset,
                        "cannot find frame " + std::to_string(f + 1) + " of chunk: " + ZSTD_getErrorName(frame));
          stored += frame;
        }
      }
    }
    raw_size = decompress(path, ref.offset, payload, stored, ref.h.raw_size, whole, scratch, scratch.bytes);
    raw = scratch.bytes.data();
  } else if (ref.h.raw_size != ref.h.stored_size) {
    throw Error(path, ref.offset, "raw chunk with different raw and stored sizes");
  }
  if (events.size() < ref.h.count) events.resize(ref.h.count);
  std::string why;
  if (!codec::decode(raw, raw_size, ref.h.count, ref.h.thread, ref.h.first_time_ns, events.data(), why,
                     codec::DecodePath::kBest, skip, layout))
    throw Error(path, ref.offset, "bad event chunk: " + why);
  if (ref.stacks_offset == 0 || (skip & codec::kSkipCallsite)) return;
  chunk_payload(path, data, ref.stacks_offset, ref.stacks_h, scratch, scratch.stack_bytes);
  if (!codec::decode_stacks(scratch.stack_bytes.data(), ref.stacks_h.raw_size, ref.h.count, *ref.stack_ids,
                            events.data(), why))
    throw Error(path, ref.stacks_offset, "bad event stacks chunk: " + why);
}

void chunk_payload(const std::string& path, const std::uint8_t* data, std::uint64_t offset,
                   const format::ChunkHeader& h, ChunkScratch& scratch, std::vector<std::uint8_t>& out) {
  const std::uint8_t* payload = data + offset + format::kChunkHeaderSize;
  if (h.codec == format::Codec::Raw) {
    if (h.raw_size != h.stored_size) throw Error(path, offset, "raw chunk with different raw and stored sizes");
    if (out.size() < h.raw_size) out.resize(h.raw_size);
    std::copy(payload, payload + h.raw_size, out.begin());
    return;
  }
  if (h.codec != format::Codec::Zstd)
    throw Error(path, offset + 5, "unknown codec " + std::to_string(static_cast<int>(h.codec)) + " for this chunk type");
  decompress(path, offset, payload, h.stored_size, h.raw_size, true, scratch, out);
}

}  // namespace tailor::trace
