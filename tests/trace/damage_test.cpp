// SPDX-License-Identifier: MIT
// Damaged, foreign, cut and random input for the trace Reader: it must say
// what is wrong and where (tailor::trace::Error with the byte offset of the
// damaged header or payload), read a cut trace up to its last whole chunk,
// and never crash or throw anything else.
//
// The on-disk layout is restated on purpose in chunk_layout.h (see
// src/trace/format.h): these tests patch files at byte level, re-checksumming
// where they want the damage to get past the checksums, so a silent layout
// change fails them.
#include <gtest/gtest.h>

#include <array>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "tailor/trace/event.h"
#include "tailor/trace/metadata.h"
#include "tailor/trace/reader.h"
#include "tailor/trace/writer.h"
#include "common/temp_dir.h"
#include "common/trace_file.h"
#include "trace/chunk_layout.h"

namespace {

namespace tr = tailor::trace;
using tr::Event;
using tr::Op;
using namespace tailor::test::layout;  // the format, as documented in src/trace/format.h

struct ChunkAt {
  std::size_t offset;  // of the header
  std::uint8_t type;
  std::uint32_t count;
  std::uint32_t stored;
  std::size_t payload() const { return offset + kChunkHeader; }
  std::size_t end() const { return payload() + stored; }
};

// Walks the chunks of a well-formed file.
std::vector<ChunkAt> chunks_of(const Bytes& b) {
  std::vector<ChunkAt> v;
  for (std::size_t at = header_end(b); at + kChunkHeader <= b.size();) {
    ChunkAt c{at, b[at + kType], get<std::uint32_t>(b, at + kCount), get<std::uint32_t>(b, at + kStoredSize)};
    if (c.end() > b.size()) break;
    v.push_back(c);
    at = c.end();
  }
  return v;
}

// A whole chunk (header and payload) with correct checksums.
Bytes make_chunk(std::uint8_t type, std::uint8_t codec, std::uint32_t thread, std::uint32_t count, const Bytes& payload,
                 std::uint64_t first = 0, std::uint64_t last = 0, std::optional<std::uint32_t> raw_size = {}) {
  // Sized once and filled in place: growing it by insert() trips a false
  // -Warray-bounds in gcc 12 at -O3.
  Bytes c(kChunkHeader + payload.size(), 0);
  put<std::uint32_t>(c, 0, kChunkMagic);
  c[kType] = type;
  c[kCodec] = codec;
  put<std::uint32_t>(c, kThread, thread);
  put<std::uint32_t>(c, kCount, count);
  put<std::uint32_t>(c, kRawSize, raw_size.value_or(static_cast<std::uint32_t>(payload.size())));
  put<std::uint32_t>(c, kStoredSize, static_cast<std::uint32_t>(payload.size()));
  put<std::uint64_t>(c, kFirstTime, first);
  put<std::uint64_t>(c, kLastTime, last);
  std::copy(payload.begin(), payload.end(), c.begin() + kChunkHeader);
  rehash_chunk(c, 0);
  return c;
}

Bytes end_payload(std::uint8_t reason, std::int32_t status) {
  Bytes p(32, 0);
  p[0] = reason;
  put<std::int32_t>(p, 4, status);
  return p;
}

// --- files -------------------------------------------------------------------

using tailor::test::TempDir;

Event damaged_ev(std::uint64_t time, Op op, std::uint64_t size, std::uint64_t address, std::uint64_t aux = 0) {
  return tailor::test::event(0, time, op, size, address, aux, 0, 0x400000 + size);
}

// A small trace of several chunks, with the byte range of every chunk and the
// events each event chunk holds.
struct SmallTrace {
  Bytes bytes;
  std::size_t header_end = 0;
  struct Part {
    std::size_t begin, end;
    std::vector<Event> events;  // with thread set; empty for non-event chunks
    bool modules = false;
  };
  std::vector<Part> parts;
  std::vector<tr::Module> modules;
};

SmallTrace make_small_trace(const TempDir& dir, bool with_end = true) {
  SmallTrace t;
  std::string path = dir.file("small.trace");
  tailor::test::TraceOut out(path, 64);
  tr::Writer& w = out.writer();
  if (!w.write_header(tailor::test::process_header(42, 1000, "/bin/prog", {"prog\0x", 6})))
    throw std::runtime_error("header failed");
  t.header_end = w.bytes_written();

  auto part = [&](auto&& write, std::vector<Event> events, bool modules) {
    std::size_t begin = w.bytes_written();
    if (!write()) throw std::runtime_error("write failed");
    t.parts.push_back({begin, w.bytes_written(), std::move(events), modules});
  };
  t.modules = {{0x400000, 0x400000, 0x401000, 900, "/bin/prog", "beef"}, {0x7f0000, 0x7f0000, 0x7f8000, 901, "/lib/libc.so", ""}};
  tr::ModuleFields mf[2] = {{0x400000, 0x400000, 0x401000, 900, "/bin/prog", "beef"},
                            {0x7f0000, 0x7f0000, 0x7f8000, 901, "/lib/libc.so", ""}};
  part([&] { return w.write_modules(mf, 2); }, {}, true);
  struct Batch {
    std::uint32_t thread;
    std::vector<Event> events;
  };
  std::vector<Batch> batches = {
      {0, {damaged_ev(2000, Op::Malloc, 10, 0x1000), damaged_ev(2100, Op::Malloc, 20, 0x2000), damaged_ev(2200, Op::Free, 0, 0x1000)}},
      {1, {damaged_ev(2050, Op::New, 30, 0x3000), damaged_ev(2150, Op::Delete, 0, 0x3000)}},
      {0, {damaged_ev(2300, Op::Realloc, 40, 0x4000, 0x2000), damaged_ev(2400, Op::Free, 0, 0x4000)}},
      {1, {damaged_ev(2250, Op::Calloc, 3, 0x5000, 8)}},
  };
  for (auto& b : batches) {
    for (auto& e : b.events) e.thread = b.thread;
    part([&] { return w.write_events(b.thread, b.events.data(), b.events.size()); }, b.events, false);
  }
  if (with_end) {
    tr::EndRecord end{tr::EndReason::Exit, 0, 8, 0, 3000};
    part([&] { return w.write_end(end); }, {}, false);
  }
  out.close();
  t.bytes = read_file(path);
  std::filesystem::remove(path);
  return t;
}

std::vector<Event> time_sorted(std::vector<Event> v) {
  std::stable_sort(v.begin(), v.end(), [](const Event& a, const Event& b) { return a.time_ns < b.time_ns; });
  return v;
}

// Opens `bytes` as a trace; returns the Error it raised, if any (other
// exception types fail the test).
std::optional<tr::Error> open_error(const TempDir& dir, const Bytes& bytes, bool read_events = true) {
  std::string path = dir.file("t.trace");
  write_file(path, bytes);
  try {
    tr::Reader r(path);
    if (read_events) r.read_all();
  } catch (const tr::Error& e) {
    return e;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "unexpected exception type: " << e.what();
  }
  return std::nullopt;
}

bool mentions(const std::optional<tr::Error>& e, const std::string& what) {
  return e && std::string(e->what()).find(what) != std::string::npos;
}

// --- foreign and empty input ----------------------------------------------------

TEST(Damage, EmptyFile) {
  TempDir dir;
  auto e = open_error(dir, {});
  ASSERT_TRUE(e);
  EXPECT_EQ(e->offset(), 0u);
  EXPECT_TRUE(mentions(e, "not a tailor trace")) << e->what();
}

TEST(Damage, ElfFileIsNotATrace) {
  try {
    tr::Reader r("/proc/self/exe");  // this test program
    FAIL() << "an ELF file was accepted";
  } catch (const tr::Error& e) {
    EXPECT_EQ(e.offset(), 0u);
    EXPECT_NE(std::string(e.what()).find("not a tailor trace"), std::string::npos) << e.what();
  }
}

TEST(Damage, TextFileIsNotATrace) {
  TempDir dir;
  std::string text = "malloc 16 -> 0x1000\nfree 0x1000\n";
  auto e = open_error(dir, Bytes(text.begin(), text.end()));
  ASSERT_TRUE(e);
  EXPECT_TRUE(mentions(e, "not a tailor trace")) << e->what();
  // Shorter than the magic, and a prefix of it.
  e = open_error(dir, Bytes{'T', 'A', 'I', 'L'});
  ASSERT_TRUE(e);
  EXPECT_TRUE(mentions(e, "not a tailor trace")) << e->what();
}

TEST(Damage, MissingFileAndDirectory) {
  TempDir dir;
  EXPECT_THROW(tr::Reader(dir.file("does-not-exist")), tr::Error);
  EXPECT_THROW(tr::Reader(dir.file("")), tr::Error);  // the directory itself
}

TEST(Damage, ErrorNamesFileAndOffset) {
  tr::Error e("some.trace", 1234, "chunk header checksum mismatch");
  EXPECT_EQ(e.offset(), 1234u);
  std::string what = e.what();
  EXPECT_NE(what.find("some.trace"), std::string::npos) << what;
  EXPECT_NE(what.find("1234"), std::string::npos) << what;
  EXPECT_NE(what.find("checksum"), std::string::npos) << what;
}

// --- the file header --------------------------------------------------------------

TEST(Damage, NewerVersionIsRefused) {
  TempDir dir;
  SmallTrace t = make_small_trace(dir);
  for (std::uint16_t version : {std::uint16_t(tr::kFormatVersion + 1), std::uint16_t(0xffff), std::uint16_t(0)}) {
    Bytes b = t.bytes;
    put<std::uint16_t>(b, 8, version);
    auto e = open_error(dir, b);
    ASSERT_TRUE(e) << "version " << version << " accepted";
    EXPECT_EQ(e->offset(), 8u);
    EXPECT_TRUE(mentions(e, "version")) << e->what();
  }
}

TEST(Damage, FlippedByteInFileHeaderBody) {
  TempDir dir;
  SmallTrace t = make_small_trace(dir);
  // Every byte of the body and of its hash.
  for (std::size_t at = kFilePrefix; at < t.header_end; ++at) {
    Bytes b = t.bytes;
    b[at] ^= 0x10;
    auto e = open_error(dir, b);
    ASSERT_TRUE(e) << "flip at " << at << " not detected";
    EXPECT_EQ(e->offset(), kFilePrefix) << "flip at " << at;
    EXPECT_TRUE(mentions(e, "checksum")) << "flip at " << at << ": " << e->what();
  }
}

TEST(Damage, FlippedByteInFilePrefix) {
  TempDir dir;
  SmallTrace t = make_small_trace(dir);
  for (std::size_t at = 0; at < kFilePrefix; ++at) {
    if (at == 10 || at == 11) continue;  // flags: none defined, not checked (see the report of this suite)
    Bytes b = t.bytes;
    b[at] ^= 0x80;
    auto e = open_error(dir, b);
    ASSERT_TRUE(e) << "flip at " << at << " not detected";
    if (at < 8) {
      EXPECT_EQ(e->offset(), 0u);
      EXPECT_TRUE(mentions(e, "not a tailor trace")) << e->what();
    } else if (at < 10) {
      EXPECT_EQ(e->offset(), 8u);
      EXPECT_TRUE(mentions(e, "version")) << e->what();
    }
  }
}

// --- chunk headers and payloads ---------------------------------------------------

TEST(Damage, FlippedByteInEveryChunkHeader) {
  TempDir dir;
  SmallTrace t = make_small_trace(dir);
  std::vector<ChunkAt> chunks = chunks_of(t.bytes);
  ASSERT_EQ(chunks.size(), t.parts.size());
  for (const auto& c : chunks) {
    for (std::size_t i = 0; i < kChunkHeader; ++i) {
      for (std::uint8_t mask : {std::uint8_t{0x01}, std::uint8_t{0xff}}) {
        Bytes b = t.bytes;
        b[c.offset + i] ^= mask;
        auto e = open_error(dir, b, false);
        ASSERT_TRUE(e) << "chunk at " << c.offset << ", byte " << i << " flipped: not detected";
        EXPECT_EQ(e->offset(), c.offset) << "byte " << i << ": " << e->what();
        if (i < 4)
          EXPECT_TRUE(mentions(e, "magic")) << e->what();
        else
          EXPECT_TRUE(mentions(e, "checksum")) << e->what();
      }
    }
  }
}

TEST(Damage, FlippedByteInEveryChunkPayload) {
  TempDir dir;
  SmallTrace t = make_small_trace(dir);
  std::vector<ChunkAt> chunks = chunks_of(t.bytes);
  std::set<std::uint8_t> types;
  for (const auto& c : chunks) {
    types.insert(c.type);
    ASSERT_GT(c.stored, 0u);
    for (std::size_t at = c.payload(); at < c.end(); ++at) {
      Bytes b = t.bytes;
      b[at] ^= 0x04;
      auto e = open_error(dir, b, false);
      ASSERT_TRUE(e) << "payload byte " << at << " of chunk at " << c.offset << " flipped: not detected";
      EXPECT_EQ(e->offset(), c.payload());
      EXPECT_TRUE(mentions(e, "checksum")) << e->what();
    }
  }
  EXPECT_EQ(types, (std::set<std::uint8_t>{kEvents, kModules, kEnd}));
}

// --- cut traces -----------------------------------------------------------------------

TEST(Damage, TruncatedAtEveryByte) {
  TempDir dir;
  SmallTrace t = make_small_trace(dir);
  ASSERT_GE(t.parts.size(), 6u);
  std::string path = dir.file("cut.trace");
  for (std::size_t size = 0; size < t.bytes.size(); ++size) {
    SCOPED_TRACE("cut to " + std::to_string(size) + " of " + std::to_string(t.bytes.size()) + " bytes");
    write_file(path, t.bytes.data(), size);
    if (size < t.header_end) {
      // Not even a whole file header: not a trace at all.
      EXPECT_THROW(tr::Reader r(path), tr::Error);
      continue;
    }
    std::vector<Event> whole;
    bool modules = false;
    std::size_t whole_chunks = 0;
    bool at_boundary = size == t.header_end;
    for (const auto& p : t.parts) {
      if (p.end == size) at_boundary = true;
      if (p.end > size) continue;
      ++whole_chunks;
      whole.insert(whole.end(), p.events.begin(), p.events.end());
      modules = modules || p.modules;
    }
    try {
      tr::Reader r(path);
      EXPECT_FALSE(r.complete());
      EXPECT_FALSE(r.end().has_value());
      EXPECT_NE(r.cut().find("trace cut at byte"), std::string::npos) << r.cut();
      if (at_boundary) {
        EXPECT_NE(r.cut().find("no end record"), std::string::npos) << r.cut();
      }
      EXPECT_EQ(r.chunk_count(), whole_chunks);
      EXPECT_EQ(r.event_count(), whole.size());
      EXPECT_EQ(r.modules().size(), modules ? t.modules.size() : 0u);
      EXPECT_EQ(r.header().pid, 42u);
      std::vector<Event> got = r.read_all();
      EXPECT_TRUE(got == time_sorted(whole)) << got.size() << " events read, " << whole.size() << " expected";
    } catch (const std::exception& e) {
      ADD_FAILURE() << "threw: " << e.what();
    }
  }
}

TEST(Damage, TraceWithoutEndRecord) {
  TempDir dir;
  SmallTrace t = make_small_trace(dir, false);
  std::string path = dir.file("noend.trace");
  write_file(path, t.bytes);
  tr::Reader r(path);
  EXPECT_FALSE(r.complete());
  EXPECT_FALSE(r.end().has_value());
  EXPECT_NE(r.cut().find("no end record"), std::string::npos) << r.cut();
  std::vector<Event> all;
  for (const auto& p : t.parts) all.insert(all.end(), p.events.begin(), p.events.end());
  EXPECT_EQ(r.event_count(), 8u);
  EXPECT_TRUE(r.read_all() == time_sorted(all));
}

TEST(Damage, CompleteTraceReadsBack) {
  // The baseline of the tests above: the undamaged trace is complete.
  TempDir dir;
  SmallTrace t = make_small_trace(dir);
  auto e = open_error(dir, t.bytes);
  EXPECT_FALSE(e) << e->what();
  std::string path = dir.file("whole.trace");
  write_file(path, t.bytes);
  tr::Reader r(path);
  EXPECT_TRUE(r.complete()) << r.cut();
  EXPECT_EQ(r.modules(), t.modules);
}

TEST(Damage, ChunkAfterEndRecord) {
  TempDir dir;
  SmallTrace t = make_small_trace(dir);
  Bytes b = t.bytes;
  std::size_t at = b.size();
  Bytes extra = make_chunk(kEnd, kRaw, 0, 1, end_payload(1, 0));
  b.insert(b.end(), extra.begin(), extra.end());
  auto e = open_error(dir, b);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->offset(), at);
  EXPECT_TRUE(mentions(e, "after the end record")) << e->what();
}

// --- damage that gets past the checksums -----------------------------------------------

class Crafted : public ::testing::Test {
 protected:
  void SetUp() override {
    SmallTrace t = make_small_trace(dir_, false);
    base_ = Bytes(t.bytes.begin(), t.bytes.begin() + static_cast<std::ptrdiff_t>(t.header_end));
  }
  // The file header followed by `chunk` (then an end record unless told not to).
  std::optional<tr::Error> open(const Bytes& chunk, bool end = true) {
    Bytes b = base_;
    b.insert(b.end(), chunk.begin(), chunk.end());
    if (end) {
      Bytes e = make_chunk(kEnd, kRaw, 0, 1, end_payload(1, 0));
      b.insert(b.end(), e.begin(), e.end());
    }
    return open_error(dir_, b);
  }
  std::size_t at() const { return base_.size(); }  // where the crafted chunk starts

  TempDir dir_;
  Bytes base_;
};

// An Events payload with the Raw codec, laid out as event_encoder.cpp documents:
// six u32 column lengths, then the columns (kinds, time, size, address, aux,
// callsite); the first kind byte holds the op and says which of size, aux and
// callsite the event has (0x10, 0x20, 0x40).
struct RawEvents {
  Bytes col[6];
  static void varint(Bytes& b, std::uint64_t v) {
    while (v >= 0x80) {
      b.push_back(static_cast<std::uint8_t>(v | 0x80));
      v >>= 7;
    }
    b.push_back(static_cast<std::uint8_t>(v));
  }
  static std::uint64_t zigzag(std::int64_t v) {
    return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
  }
  Bytes payload() const {
    Bytes p;
    for (const auto& c : col) {
      Bytes len(4);
      put<std::uint32_t>(len, 0, static_cast<std::uint32_t>(c.size()));
      p.insert(p.end(), len.begin(), len.end());
    }
    for (const auto& c : col) p.insert(p.end(), c.begin(), c.end());
    return p;
  }
};

TEST_F(Crafted, HandEncodedRawEventsChunkDecodes) {
  // Two events of thread 6 with base time 1000: malloc(24) at 0x5000 and a
  // realloc of it to 48 bytes at 0x4000 (old block 0x5000), call sites 0x400100 / 0x4000f0.
  RawEvents r;
  r.col[0] = {1 | 0x10 | 0x40, 0, 3 | 0x10 | 0x20 | 0x40, 0};  // malloc has no aux
  RawEvents::varint(r.col[1], RawEvents::zigzag(0));    // 1000 - base
  RawEvents::varint(r.col[1], RawEvents::zigzag(500));  // 1500 - 1000
  RawEvents::varint(r.col[2], 24);
  RawEvents::varint(r.col[2], 48);
  RawEvents::varint(r.col[3], RawEvents::zigzag(0x5000));
  RawEvents::varint(r.col[3], RawEvents::zigzag(-0x1000));
  RawEvents::varint(r.col[4], RawEvents::zigzag(0x5000 - 0x4000));  // realloc: old - new
  RawEvents::varint(r.col[5], RawEvents::zigzag(0x400100));
  RawEvents::varint(r.col[5], RawEvents::zigzag(-0x10));
  auto e = open(make_chunk(kEvents, kRaw, 6, 2, r.payload(), 1000, 1500));
  EXPECT_FALSE(e) << e->what();

  std::string path = dir_.file("t.trace");  // written by open()
  tr::Reader reader(path);
  std::vector<Event> got = reader.read_all();
  ASSERT_EQ(got.size(), 2u);
  Event a = damaged_ev(1000, Op::Malloc, 24, 0x5000);
  a.callsite = 0x400100;
  a.thread = 6;
  Event b = damaged_ev(1500, Op::Realloc, 48, 0x4000, 0x5000);
  b.callsite = 0x4000f0;
  b.thread = 6;
  EXPECT_TRUE(got[0] == a);
  EXPECT_TRUE(got[1] == b);
}

TEST_F(Crafted, BadEventChunks) {
  RawEvents good;
  good.col[0] = {1 | 0x70, 0};  // malloc with size, aux and callsite present
  for (int c = 1; c < 6; ++c) RawEvents::varint(good.col[c], 1);
  const Bytes ok = good.payload();
  ASSERT_FALSE(open(make_chunk(kEvents, kRaw, 0, 1, ok)));

  // Found when the file is opened: the offset is the field's.
  auto e = open(make_chunk(kEvents, kRaw, 0, 0, ok));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->offset(), at() + kCount);
  EXPECT_TRUE(mentions(e, "event count")) << e->what();

  e = open(make_chunk(kEvents, 7, 0, 1, ok));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->offset(), at() + kCodec);
  EXPECT_TRUE(mentions(e, "codec")) << e->what();

  e = open(make_chunk(9, kRaw, 0, 1, ok));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->offset(), at() + kType);
  EXPECT_TRUE(mentions(e, "chunk type")) << e->what();

  e = open(make_chunk(kEvents, kRaw, 0, (1u << 20) + 1, ok));
  ASSERT_TRUE(e);
  EXPECT_TRUE(mentions(e, "event count")) << e->what();

  e = open(make_chunk(kEvents, kRaw, 0, 1, ok, 0, 0, (64u << 20) + 1));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->offset(), at());
  EXPECT_TRUE(mentions(e, "over the limit")) << e->what();

  // Found when the events are decoded: the offset is the chunk's.
  auto decode_error = [&](const Bytes& chunk, const char* what) {
    auto err = open(chunk);
    ASSERT_TRUE(err) << what;
    EXPECT_EQ(err->offset(), at()) << err->what();
    EXPECT_TRUE(mentions(err, what)) << err->what();
  };
  decode_error(make_chunk(kEvents, kRaw, 0, 2, ok), "kind column");
  decode_error(make_chunk(kEvents, kRaw, 0, 1, ok, 0, 0, 3), "raw");  // raw chunk, raw size != stored size
  Bytes short_payload(ok.begin(), ok.end() - 1);
  decode_error(make_chunk(kEvents, kRaw, 0, 1, short_payload), "column lengths");
  RawEvents bad_op = good;
  bad_op.col[0] = {0, 0};
  decode_error(make_chunk(kEvents, kRaw, 0, 1, bad_op.payload()), "unknown operation");
  bad_op.col[0] = {14 | 0x70, 0};
  decode_error(make_chunk(kEvents, kRaw, 0, 1, bad_op.payload()), "unknown operation");
  bad_op.col[0] = {1 | 0x70 | 0x80, 0};  // reserved kind bit
  decode_error(make_chunk(kEvents, kRaw, 0, 1, bad_op.payload()), "kind bits");
  RawEvents absent = good;
  absent.col[0] = {1 | 0x60, 0};  // says no size, but the size column has one
  decode_error(make_chunk(kEvents, kRaw, 0, 1, absent.payload()), "size column is longer");
  RawEvents long_col = good;
  long_col.col[3] = {1, 1};  // two varints for one event
  decode_error(make_chunk(kEvents, kRaw, 0, 1, long_col.payload()), "address column is longer");
  RawEvents cut_varint = good;
  cut_varint.col[2] = {0x80};  // continuation bit, then nothing
  decode_error(make_chunk(kEvents, kRaw, 0, 1, cut_varint.payload()), "size column is shorter");
  RawEvents overlong = good;
  overlong.col[5] = Bytes(11, 0x80);
  overlong.col[5].back() = 0;
  decode_error(make_chunk(kEvents, kRaw, 0, 1, overlong.payload()), "callsite column");
  // Zstd chunks: not zstd at all, and a size that does not match.
  decode_error(make_chunk(kEvents, kZstd, 0, 1, ok, 0, 0, static_cast<std::uint32_t>(ok.size())), "decompress");
}

// Stacks chunks: nodes as varint (id step, parent, zigzag address step);
// event stacks as zigzag varint steps. Damage past the checksums is reported
// with the offset of the chunk that holds it.
TEST_F(Crafted, BadStackChunks) {
  auto varint = RawEvents::varint;
  auto nodes = [&](std::vector<std::array<std::uint64_t, 3>> list) {
    Bytes b;
    for (const auto& n : list) {
      varint(b, n[0]);
      varint(b, n[1]);
      varint(b, RawEvents::zigzag(static_cast<std::int64_t>(n[2])));
    }
    return b;
  };
  RawEvents one;
  one.col[0] = {1 | 0x50, 0};  // malloc with size and callsite
  varint(one.col[1], 0);
  varint(one.col[2], 24);
  varint(one.col[3], 0x5000);
  varint(one.col[5], RawEvents::zigzag(0x401000));
  const Bytes events = make_chunk(kEvents, kRaw, 3, 1, one.payload(), 100, 100);
  const Bytes node_chunk = make_chunk(kStacks, kRaw, 3, 2, nodes({{1, 0, 0x400000}, {1, 1, 0x1000}}));
  auto with = [](std::initializer_list<Bytes> chunks) {
    Bytes b;
    for (const Bytes& c : chunks) b.insert(b.end(), c.begin(), c.end());
    return b;
  };
  Bytes stack_of_event;
  varint(stack_of_event, RawEvents::zigzag(2));
  const Bytes event_stacks = make_chunk(kEventStacks, kRaw, 3, 1, stack_of_event, 100, 100);
  ASSERT_FALSE(open(with({node_chunk, events, event_stacks})));
  {
    tr::Reader reader(dir_.file("t.trace"));
    std::vector<Event> got = reader.read_all();
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(reader.stacks().frames(got[0].stack), (std::vector<std::uint64_t>{0x401000, 0x400000}));
  }

  auto error_at = [&](const Bytes& file, std::size_t offset, const char* what) {
    auto e = open(file);
    ASSERT_TRUE(e) << what;
    EXPECT_EQ(e->offset(), offset) << e->what();
    EXPECT_TRUE(mentions(e, what)) << e->what();
  };
  const std::size_t second = at() + node_chunk.size();  // the chunk after the nodes
  error_at(make_chunk(kStacks, kRaw, 3, 1, nodes({{2, 1, 0x1000}})), at(), "no stack chunk before it defines");
  error_at(make_chunk(kStacks, kRaw, 3, 2, nodes({{1, 0, 0x1000}, {0, 0, 0x2000}})), at(), "ids ascend");
  error_at(make_chunk(kStacks, kRaw, 3, 3, nodes({{1, 0, 0x1000}})), at(), "overruns");
  error_at(with({node_chunk, make_chunk(kStacks, kRaw, 3, 1, nodes({{2, 0, 0x1000}}))}), second, "defined twice");
  error_at(make_chunk(kStacks, kRaw, 3, 1, nodes({{1u << 30, 0, 0x1000}})), at(), "far beyond");
  error_at(with({node_chunk, event_stacks}), second, "does not follow the events chunk");
  error_at(with({node_chunk, events, make_chunk(kEventStacks, kRaw, 4, 1, stack_of_event, 100, 100)}),
           second + events.size(), "does not follow the events chunk");  // another thread's
  Bytes unknown;
  varint(unknown, RawEvents::zigzag(7));
  error_at(with({node_chunk, events, make_chunk(kEventStacks, kRaw, 3, 1, unknown, 100, 100)}),
           second + events.size(), "names stack 7");
}

TEST_F(Crafted, BadModuleAndEndChunks) {
  Bytes module(8 * 4 + 4 + 3 + 4 + 0, 0);
  put<std::uint32_t>(module, 32, 3);
  std::memcpy(module.data() + 36, "/ab", 3);
  ASSERT_FALSE(open(make_chunk(kModules, kRaw, 0, 1, module)));

  auto e = open(make_chunk(kModules, kRaw, 0, 2, module));  // claims two, holds one
  ASSERT_TRUE(e);
  EXPECT_EQ(e->offset(), at() + kChunkHeader);
  EXPECT_TRUE(mentions(e, "overruns")) << e->what();

  Bytes long_path = module;
  put<std::uint32_t>(long_path, 32, 0xffffffff);  // path length past the chunk
  e = open(make_chunk(kModules, kRaw, 0, 1, long_path));
  ASSERT_TRUE(e);
  EXPECT_TRUE(mentions(e, "overruns")) << e->what();

  e = open(make_chunk(kModules, kZstd, 0, 1, module));
  ASSERT_TRUE(e);
  EXPECT_TRUE(mentions(e, "raw")) << e->what();

  e = open(make_chunk(kEnd, kRaw, 0, 1, Bytes(31, 0)), false);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->offset(), at() + kChunkHeader);
  EXPECT_TRUE(mentions(e, "wrong size")) << e->what();

  for (std::uint8_t reason : {std::uint8_t{0}, std::uint8_t{5}, std::uint8_t{255}}) {
    e = open(make_chunk(kEnd, kRaw, 0, 1, end_payload(reason, 0)), false);
    ASSERT_TRUE(e) << "reason " << int(reason);
    EXPECT_TRUE(mentions(e, "unknown reason")) << e->what();
  }
}

// --- fuzz --------------------------------------------------------------------------------

// A few thousand mutations of a valid trace. Half of them re-checksum every
// chunk afterwards, so that the damage reaches the decompressor, the event
// decoder and the module / end parsers instead of stopping at a checksum.
// Every file must either read or raise tailor::trace::Error.
TEST(Fuzz, MutatedTracesNeverCrash) {
  TempDir dir;
  // A base trace with more variety than SmallTrace: zstd chunks of several sizes.
  std::string base_path = dir.file("base.trace");
  {
    std::optional<tailor::test::TraceOut> out;
    ASSERT_NO_THROW(out.emplace(base_path, 256));  // the file is made and the Writer set up
    tr::Writer& w = out->writer();
    tr::HeaderFields h;
    h.executable = "/x";
    h.command_line = "x";
    ASSERT_TRUE(w.write_header(h));
    tr::ModuleFields m{1, 2, 3, 4, "/lib/a.so", "00ff"};
    ASSERT_TRUE(w.write_modules(&m, 1));
    std::mt19937_64 rng(99);
    std::uint64_t t = 0;
    for (int c = 0; c < 6; ++c) {
      std::vector<Event> events(static_cast<std::size_t>(1 + c * 40));
      for (auto& e : events) e = damaged_ev(t += rng() % 100, static_cast<Op>(1 + rng() % tr::kMaxOp), rng() % 5000, rng() % (1u << 30), rng() % 3 ? 0 : rng());
      ASSERT_TRUE(w.write_events(static_cast<std::uint32_t>(c % 3), events.data(), events.size()));
    }
    ASSERT_TRUE(w.write_end({tr::EndReason::Exit, 0, 1, 0, t}));
  }
  const Bytes base = read_file(base_path);
  const std::vector<ChunkAt> layout = chunks_of(base);
  ASSERT_EQ(layout.size(), 8u);

  std::mt19937_64 rng(20240611);
  auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  const std::uint32_t interesting[] = {0, 1, 2, 7, 8, 48, 255, 256, 4095, 65536, 1u << 20, (1u << 20) + 1,
                                       64u << 20, (64u << 20) + 1, 0x7fffffff, 0xffffffff};
  int read_ok = 0, errors = 0, decode_errors = 0;
  std::string path = dir.file("fuzz.trace");
  constexpr int kRounds = 3000;
  for (int round = 0; round < kRounds; ++round) {
    Bytes b = base;
    bool rehash = round % 2 == 0;
    switch (pick(6)) {
      case 0:  // flip a few bits anywhere
        for (std::size_t k = 1 + pick(8); k > 0; --k) b[pick(b.size())] ^= static_cast<std::uint8_t>(1u << pick(8));
        break;
      case 1:  // overwrite a run with random bytes
      {
        std::size_t at = pick(b.size()), n = 1 + pick(32);
        for (std::size_t i = at; i < std::min(b.size(), at + n); ++i) b[i] = static_cast<std::uint8_t>(rng());
        break;
      }
      case 2:  // a chunk header field set to an interesting value
      {
        const ChunkAt& c = layout[pick(layout.size())];
        const std::size_t fields[] = {kType, kCodec, kThread, kCount, kRawSize, kStoredSize, kFirstTime, kLastTime};
        std::size_t f = fields[pick(8)];
        if (f == kType || f == kCodec)
          b[c.offset + f] = static_cast<std::uint8_t>(pick(5));
        else if (f == kFirstTime || f == kLastTime)
          put<std::uint64_t>(b, c.offset + f, rng() % 2 ? rng() : rng() % 10000);
        else
          put<std::uint32_t>(b, c.offset + f, interesting[pick(std::size(interesting))]);
        rehash = true;
        break;
      }
      case 3:  // cut, then maybe garbage
        b.resize(pick(b.size()));
        for (std::size_t k = pick(3) == 0 ? pick(80) : 0; k > 0; --k) b.push_back(static_cast<std::uint8_t>(rng()));
        break;
      case 4:  // insert or delete bytes inside a payload
      {
        const ChunkAt& c = layout[pick(layout.size())];
        std::size_t at = c.payload() + pick(c.stored);
        if (rng() % 2)
          b.insert(b.begin() + static_cast<std::ptrdiff_t>(at), static_cast<std::uint8_t>(rng()));
        else
          b.erase(b.begin() + static_cast<std::ptrdiff_t>(at));
        break;
      }
      case 5:  // an event chunk's payload replaced by a random raw one
      {
        const ChunkAt& c = layout[1 + pick(6)];
        for (std::size_t i = c.payload(); i < c.end(); ++i) b[i] = static_cast<std::uint8_t>(rng() % 4 ? rng() % 3 : rng());
        b[c.offset + kCodec] = kRaw;
        put<std::uint32_t>(b, c.offset + kRawSize, c.stored);
        if (rng() % 2) put<std::uint32_t>(b, c.offset + kCount, 1 + static_cast<std::uint32_t>(pick(c.stored)));
        rehash = true;
        break;
      }
    }
    if (rehash)
      for (const auto& c : layout) rehash_chunk(b, c.offset);

    write_file(path, b);
    try {
      tr::Reader r(path);
      (void)r.header().command_line.size();
      std::uint64_t n = 0;
      Event e;
      while (r.next(e)) ++n;
      EXPECT_EQ(n, r.event_count());
      r.rewind();
      EXPECT_EQ(r.read_all().size(), n);
      ++read_ok;
    } catch (const tr::Error& e) {
      ++errors;
      std::string what = e.what();
      if (what.find("bad event chunk") != std::string::npos || what.find("decompress") != std::string::npos)
        ++decode_errors;
      EXPECT_LE(e.offset(), b.size()) << what;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "round " << round << ": not a tailor::trace::Error: " << e.what();
    }
  }
  // The fuzzer must have exercised both outcomes and reached the decoder.
  EXPECT_GT(read_ok, 50);
  EXPECT_GT(errors, kRounds / 4);
  EXPECT_GT(decode_errors, 20);
}

}  // namespace
