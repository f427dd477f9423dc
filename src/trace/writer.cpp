// SPDX-License-Identifier: MIT
// Trace writer: file header, then self-describing chunks (see format.h). Every
// chunk is assembled in one buffer and handed to a single write(2), so a reader
// sees either a whole chunk or a cut one at the end of the file.
#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_initStaticCCtx: a context in our own memory
#include "tailor/trace/writer.h"

#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include <cerrno>
#include <algorithm>
#include <cstring>

#include "trace/byte_io.h"
#include "trace/event_codec.h"
#include "trace/format.h"
#include "trace/hash.h"

namespace tailor::trace {

namespace {
// zstd levels by pace (writer.h). On a recorder's columns (robot_kinematics,
// 112 KB chunks, zstd -b): 1 at 580 MB/s (5.5x smaller), -1 at 790, -5 at
// 1020 (3.7x), -10 at 1430 (2.9x), against 450 MB/s at 3 (5.9x).
constexpr int kPaceLevels[Writer::kMaxPace] = {1, -1, -5, -10};
std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }
}  // namespace

bool Writer::init(std::size_t max_events, int zstd_level) noexcept {
  release();
  if (max_events == 0 || max_events > format::kMaxChunkEvents) {
    error_ = EINVAL;
    return false;
  }
  max_events_ = max_events;
  level_ = zstd_level;
  std::size_t encoded_cap = codec::max_encoded_size(max_events);
  // One bound for the whole payload, and the small-input margin once more
  // for each frame (codec ZstdFrames): the bound of a sum of frames.
  chunk_capacity_ = format::kChunkHeaderSize + ZSTD_compressBound(encoded_cap) + format::kFrames * (ZSTD_compressBound(0) + 1);
  ZSTD_compressionParameters params = ZSTD_getCParams(level_, encoded_cap, 0);
  std::size_t cctx_size = ZSTD_estimateCCtxSize_usingCParams(params);

  std::size_t sizes[4] = {round_up(codec::workspace_size(max_events), 64), round_up(encoded_cap, 64),
                          round_up(chunk_capacity_, 64), round_up(cctx_size, 64)};
  memory_size_ = round_up(sizes[0] + sizes[1] + sizes[2] + sizes[3], 4096);
  void* m = mmap(nullptr, memory_size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) {
    error_ = errno;
    memory_ = nullptr;
    return false;
  }
  memory_ = static_cast<std::uint8_t*>(m);
  workspace_ = memory_;
  encoded_ = workspace_ + sizes[0];
  chunk_ = encoded_ + sizes[1];
  std::uint8_t* cctx_mem = chunk_ + sizes[2];
  ZSTD_CCtx* cctx = ZSTD_initStaticCCtx(cctx_mem, sizes[3]);
  if (!cctx) {
    error_ = ENOMEM;
    release();
    return false;
  }
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level_);
  current_level_ = level_;
  cctx_ = cctx;
  return true;
}

void Writer::release() noexcept {
  if (memory_) munmap(memory_, memory_size_);
  memory_ = workspace_ = encoded_ = chunk_ = nullptr;
  cctx_ = nullptr;
  memory_size_ = 0;
}

bool Writer::write_all(const std::uint8_t* data, std::size_t size) noexcept {
  while (size > 0) {
    ssize_t n = ::write(fd_, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      error_ = errno;
      return false;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
    bytes_ += static_cast<std::uint64_t>(n);
  }
  return true;
}

bool Writer::write_header(const HeaderFields& h) noexcept {
  // Small and written once: assemble it in the chunk buffer.
  std::size_t body = 4 + 4 * 3 + 8 * 2 + 4 + h.executable.size() + 4 + h.command_line.size() + 8;
  std::size_t total = format::kFilePrefixSize + body + 8;
  if (!memory_ || total > chunk_capacity_ || body > format::kMaxHeaderBody) {
    error_ = memory_ ? E2BIG : EINVAL;
    return false;
  }
  std::uint8_t* p = chunk_;
  std::memcpy(p, format::kFileMagic, sizeof format::kFileMagic);
  p += sizeof format::kFileMagic;
  p = io::put_u16(p, kFormatVersion);
  p = io::put_u16(p, 0);
  p = io::put_u32(p, static_cast<std::uint32_t>(body));
  std::uint8_t* body_begin = p;
  p = io::put_u8(p, static_cast<std::uint8_t>(sizeof(void*)));
  p = io::put_u8(p, 1);  // little-endian
  p = io::put_u16(p, 0);
  p = io::put_u32(p, h.page_size);
  p = io::put_u32(p, h.pid);
  p = io::put_u32(p, h.ppid);
  p = io::put_u64(p, h.start_realtime_ns);
  p = io::put_u64(p, h.start_monotonic_ns);
  p = io::put_u32(p, static_cast<std::uint32_t>(h.executable.size()));
  if (!h.executable.empty()) std::memcpy(p, h.executable.data(), h.executable.size());  // an empty view may be null
  p += h.executable.size();
  p = io::put_u32(p, static_cast<std::uint32_t>(h.command_line.size()));
  if (!h.command_line.empty()) std::memcpy(p, h.command_line.data(), h.command_line.size());
  p += h.command_line.size();
  p = io::put_u64(p, h.sample_interval);
  p = io::put_u64(p, hash64(body_begin, body));
  return write_all(chunk_, static_cast<std::size_t>(p - chunk_));
}

bool Writer::emit_chunk(std::uint8_t type, std::uint8_t codec_id, std::uint32_t thread, std::uint32_t count,
                        std::uint32_t raw_size, std::uint32_t stored_size, std::uint64_t first_ns,
                        std::uint64_t last_ns) noexcept {
  std::uint8_t* p = chunk_;
  p = io::put_u32(p, format::kChunkMagic);
  p = io::put_u8(p, type);
  p = io::put_u8(p, codec_id);
  p = io::put_u16(p, 0);
  p = io::put_u32(p, thread);
  p = io::put_u32(p, count);
  p = io::put_u32(p, raw_size);
  p = io::put_u32(p, stored_size);
  p = io::put_u64(p, first_ns);
  p = io::put_u64(p, last_ns);
  p = io::put_u64(p, hash64(chunk_ + format::kChunkHeaderSize, stored_size));
  io::put_u64(p, hash64(chunk_, format::kChunkHashedSize));
  return write_all(chunk_, format::kChunkHeaderSize + stored_size);
}

bool Writer::write_events(std::uint32_t thread, const Event* events, std::size_t n, unsigned pace) noexcept {
  return write_events(thread, events, n, pace, TimeMap{});
}

bool Writer::write_events(std::uint32_t thread, const Event* events, std::size_t n, unsigned pace,
                          const TimeMap& time) noexcept {
  if (n == 0) return true;
  if (!memory_ || n > max_events_) {
    error_ = memory_ ? E2BIG : EINVAL;
    return false;
  }
  std::uint64_t first, last;
  std::size_t raw = codec::encode(events, n, time, workspace_, encoded_, first, last);
  if (!compress_and_emit(thread, n, raw, pace, first, last)) return false;
  const std::size_t stacks = codec::encode_stacks(events, n, encoded_);
  return stacks == 0 ||
         emit_compressed(static_cast<std::uint8_t>(format::ChunkType::EventStacks), thread, n, stacks, first, last);
}

bool Writer::write_packed(std::uint32_t thread, const PackedEvent* slots, std::size_t n, unsigned pace,
                          const TimeMap& time, std::size_t& events) noexcept {
  events = 0;
  if (n == 0) return true;
  if (!memory_ || n > max_events_) {
    error_ = memory_ ? E2BIG : EINVAL;
    return false;
  }
  std::uint64_t first, last;
  std::size_t count = 0;
  std::size_t raw = codec::encode(slots, n, time, workspace_, encoded_, count, first, last);
  if (raw == 0) {
    error_ = EINVAL;
    return false;
  }
  if (!compress_and_emit(thread, count, raw, pace, first, last)) return false;
  events = count;
  const std::size_t stacks = codec::encode_stacks(slots, n, encoded_);
  return stacks == 0 ||
         emit_compressed(static_cast<std::uint8_t>(format::ChunkType::EventStacks), thread, count, stacks, first, last);
}

bool Writer::write_stacks(std::uint32_t thread, const StackNode* nodes, std::size_t n) noexcept {
  if (n == 0) return true;
  if (!memory_ || n > max_events_) {
    error_ = memory_ ? E2BIG : EINVAL;
    return false;
  }
  for (std::size_t i = 0; i < n; ++i)
    if (nodes[i].id == 0 || (i > 0 && nodes[i].id <= nodes[i - 1].id) || nodes[i].parent >= nodes[i].id) {
      error_ = EINVAL;
      return false;
    }
  const std::size_t raw = codec::encode_stack_nodes(nodes, n, encoded_);
  return emit_compressed(static_cast<std::uint8_t>(format::ChunkType::Stacks), thread, n, raw, 0, 0);
}

bool Writer::emit_compressed(std::uint8_t type, std::uint32_t thread, std::size_t count, std::size_t raw,
                             std::uint64_t first, std::uint64_t last) noexcept {
  const std::size_t stored = ZSTD_compress2(static_cast<ZSTD_CCtx*>(cctx_), chunk_ + format::kChunkHeaderSize,
                                            chunk_capacity_ - format::kChunkHeaderSize, encoded_, raw);
  if (ZSTD_isError(stored)) {
    error_ = EIO;
    return false;
  }
  return emit_chunk(type, static_cast<std::uint8_t>(format::Codec::Zstd), thread, static_cast<std::uint32_t>(count),
                    static_cast<std::uint32_t>(raw), static_cast<std::uint32_t>(stored), first, last);
}

bool Writer::compress_and_emit(std::uint32_t thread, std::size_t n, std::size_t raw, unsigned pace, std::uint64_t first,
                               std::uint64_t last) noexcept {
  int level = pace == 0 ? level_ : std::min(level_, kPaceLevels[std::min(pace, kMaxPace) - 1]);
  if (level != current_level_) {
    ZSTD_CCtx_setParameter(static_cast<ZSTD_CCtx*>(cctx_), ZSTD_c_compressionLevel, level);
    current_level_ = level;
  }
  // One frame per group of columns (format::Codec::ZstdFrames), so that a
  // reader decompresses only those it reads.
  std::size_t frame_bytes[format::kFrames];
  codec::frame_bytes(encoded_, frame_bytes);
  std::size_t stored = 0;
  const std::uint8_t* from = encoded_;
  for (const std::size_t bytes : frame_bytes) {
    const std::size_t frame = ZSTD_compress2(static_cast<ZSTD_CCtx*>(cctx_), chunk_ + format::kChunkHeaderSize + stored,
                                             chunk_capacity_ - format::kChunkHeaderSize - stored, from, bytes);
    if (ZSTD_isError(frame)) {
      error_ = EIO;
      return false;
    }
    stored += frame;
    from += bytes;
  }
  return emit_chunk(static_cast<std::uint8_t>(format::ChunkType::Events), static_cast<std::uint8_t>(format::Codec::ZstdFrames),
                    thread, static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(raw),
                    static_cast<std::uint32_t>(stored), first, last);
}

bool Writer::write_modules(const ModuleFields* modules, std::size_t n) noexcept {
  if (n == 0) return true;
  if (!memory_) {
    error_ = EINVAL;
    return false;
  }
  std::uint8_t* const payload = chunk_ + format::kChunkHeaderSize;
  std::uint8_t* p = payload;
  std::uint64_t first = UINT64_MAX, last = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const ModuleFields& m = modules[i];
    std::size_t need = 8 * 4 + 4 + m.path.size() + 4 + m.build_id.size();
    if (static_cast<std::size_t>(p - chunk_) + need > chunk_capacity_) {
      error_ = E2BIG;
      return false;
    }
    p = io::put_u64(p, m.load_address);
    p = io::put_u64(p, m.start);
    p = io::put_u64(p, m.end);
    p = io::put_u64(p, m.time_ns);
    p = io::put_u32(p, static_cast<std::uint32_t>(m.path.size()));
    if (!m.path.empty()) std::memcpy(p, m.path.data(), m.path.size());
    p += m.path.size();
    p = io::put_u32(p, static_cast<std::uint32_t>(m.build_id.size()));
    if (!m.build_id.empty()) std::memcpy(p, m.build_id.data(), m.build_id.size());
    p += m.build_id.size();
    if (m.time_ns < first) first = m.time_ns;
    if (m.time_ns > last) last = m.time_ns;
  }
  auto size = static_cast<std::uint32_t>(p - payload);
  return emit_chunk(static_cast<std::uint8_t>(format::ChunkType::Modules), static_cast<std::uint8_t>(format::Codec::Raw),
                    0, static_cast<std::uint32_t>(n), size, size, first, last);
}

bool Writer::write_end(const EndRecord& end) noexcept {
  if (!memory_) {
    error_ = EINVAL;
    return false;
  }
  std::uint8_t* p = chunk_ + format::kChunkHeaderSize;
  p = io::put_u8(p, static_cast<std::uint8_t>(end.reason));
  p = io::put_u8(p, 0);
  p = io::put_u16(p, 0);
  p = io::put_u32(p, static_cast<std::uint32_t>(end.status));
  p = io::put_u64(p, end.events);
  p = io::put_u64(p, end.dropped);
  io::put_u64(p, end.time_ns);
  return emit_chunk(static_cast<std::uint8_t>(format::ChunkType::End), static_cast<std::uint8_t>(format::Codec::Raw), 0,
                    1, format::kEndPayloadSize, format::kEndPayloadSize, end.time_ns, end.time_ns);
}

}  // namespace tailor::trace
