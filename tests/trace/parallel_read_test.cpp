// SPDX-License-Identifier: MIT
// Parallel decoding (src/trace/chunk_pipeline.h) against sequential reading
// (Reader::set_decode_threads(1), where the caller decodes each chunk when the
// merge reaches it): the same events in the same order for every decoding
// thread count, on traces of every shape the merge meets (one thread, many
// interleaved threads, ties, clocks that go back, chunks of very different
// sizes), and on damaged and cut traces the same events before the damage,
// then the same Error or the same cut; also with other threads decoding for
// the reader through Reader::help_decode, as simulations do.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <zstd.h>

#include "common/temp_dir.h"
#include "common/trace_file.h"
#include "tailor/trace/reader.h"
#include "tailor/trace/writer.h"
#include "trace/chunk_layout.h"

namespace {

namespace tr = tailor::trace;
using tr::Event;
using tr::Op;
using tailor::test::TempDir;
// The chunk header, as docs/trace-format.md lays it out (restated on purpose in
// chunk_layout.h: the tests patch bytes).
using namespace tailor::test::layout;

struct Shape {
  const char* name;
  int threads;
  int chunks;
  std::size_t max_events;
  bool ties;        // threads share timestamps
  bool backwards;   // a thread's clock sometimes steps back between chunks
};

#if defined(TAILOR_SANITIZED)
constexpr int kBigChunks = 8;  // a third of the events: under TSan the big shape took most of a minute
// Decoding threads beside the helpers: two only (races need both sides busy).
constexpr unsigned kDecodeThreads[] = {2u};
#else
constexpr int kBigChunks = 24;
constexpr unsigned kDecodeThreads[] = {1u, 2u};
#endif

const Shape kShapes[] = {
    {"one_thread", 1, 300, 200, false, false},
    {"seven_threads", 7, 600, 64, false, false},
    {"ties_across_threads", 4, 400, 32, true, false},
    {"clocks_step_back", 5, 400, 100, false, true},
    {"big_and_small_chunks", 3, kBigChunks, tr::Writer::kDefaultChunkEvents, false, false},
};

// Writes a trace of `shape` with the public Writer; returns its bytes.
Bytes write_trace(const std::string& path, const Shape& shape, std::uint64_t seed) {
  tailor::test::TraceOut out(path, shape.max_events, 1);
  tr::Writer& w = out.writer();
  tr::HeaderFields h;
  h.page_size = 4096;
  h.executable = "/bin/shape";
  if (!w.write_header(h)) throw std::runtime_error("write_header failed");
  std::mt19937_64 rng(seed);
  std::vector<std::uint64_t> clock(static_cast<std::size_t>(shape.threads), 1000);
  std::vector<Event> events;
  for (int c = 0; c < shape.chunks; ++c) {
    const auto t = static_cast<std::uint32_t>(rng() % static_cast<std::uint64_t>(shape.threads));
    std::uint64_t& now = clock[t];
    if (shape.backwards && rng() % 4 == 0) now -= std::min<std::uint64_t>(now, rng() % 5000);
    const std::size_t n = c % 7 == 0 ? shape.max_events : 1 + rng() % shape.max_events;
    events.assign(n, Event{});
    for (Event& e : events) {
      now += shape.ties ? (rng() % 3 == 0 ? 0 : 10) : 1 + rng() % 50;
      if (shape.ties) now -= now % 10;
      e.time_ns = now;
      e.op = rng() % 3 == 0 ? Op::Free : (rng() % 5 == 0 ? Op::Realloc : Op::Malloc);
      e.size = rng() % 5000;
      e.address = 0x100000 + 16 * (rng() % 100000);
      e.aux = e.op == Op::Realloc ? 0x100000 + 16 * (rng() % 100000) : 0;
      e.callsite = 0x400000 + rng() % 256;
    }
    if (!w.write_events(t, events.data(), events.size())) throw std::runtime_error("write_events failed");
  }
  tr::EndRecord end;
  if (!w.write_end(end)) throw std::runtime_error("write_end failed");
  out.close();
  return read_file(path);
}

// What one reading gives: the events before the end or the first Error, and
// the Error's text, or the cut.
struct Reading {
  std::vector<Event> events;
  std::optional<std::string> error;
  std::string cut;
};

// How a Reading takes the events: next() one by one, next_run() runs, or
// the two alternating.
enum class How { events, runs, mixed };

// Threads that call Reader::help_decode() until they are destroyed.
class Helpers {
 public:
  Helpers(tr::Reader& reader, unsigned n) {
    for (unsigned i = 0; i < n; ++i)
      threads_.emplace_back([this, &reader] {
        while (!stop_.load(std::memory_order_relaxed))
          if (!reader.help_decode()) std::this_thread::yield();
      });
  }
  ~Helpers() {
    stop_ = true;
    for (std::thread& t : threads_) t.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

// times, sites: the columns read (Reader::set_columns); helpers: threads
// calling help_decode() meanwhile.
Reading read(const std::string& path, unsigned threads, How how = How::events, bool times = true, bool sites = true,
             unsigned helpers = 0) {
  Reading r;
  try {
    tr::Reader reader(path);
    Helpers helping(reader, helpers);
    reader.set_decode_threads(threads);
    if (!times || !sites) reader.set_columns(times, sites);
    r.cut = reader.cut();
    Event e;
    const Event* run = nullptr;
    for (bool by_run = how == How::runs;; by_run = how == How::mixed ? !by_run : by_run) {
      if (by_run) {
        const std::size_t n = reader.next_run(run);
        if (n == 0) break;
        r.events.insert(r.events.end(), run, run + n);
      } else {
        if (!reader.next(e)) break;
        r.events.push_back(e);
      }
    }
  } catch (const tr::Error& e) {
    r.error = e.what();
  }
  return r;
}

void expect_same(const Reading& want, const Reading& got, unsigned threads) {
  SCOPED_TRACE(std::to_string(threads) + " decoding threads");
  EXPECT_EQ(got.error, want.error);
  EXPECT_EQ(got.cut, want.cut);
  ASSERT_EQ(got.events.size(), want.events.size());
  for (std::size_t i = 0; i < want.events.size(); ++i)
    ASSERT_TRUE(got.events[i] == want.events[i]) << "event " << i << " differs";
}

const unsigned kThreadCounts[] = {2, 3, 8};

// Offsets of the Events chunks of a well-formed file.
std::vector<std::size_t> event_chunks(const Bytes& b) {
  std::vector<std::size_t> v;
  for (std::size_t at = header_end(b); at + kChunkHeader <= b.size();) {
    std::uint32_t stored = 0;
    std::memcpy(&stored, b.data() + at + kStoredSize, 4);
    if (b[at + kType] == kEvents) v.push_back(at);
    at += kChunkHeader + stored;
  }
  return v;
}

// Damages a chunk's payload past its checksums, so that decoding fails.
void damage_payload(Bytes& b, std::size_t at, std::mt19937_64& rng) {
  std::uint32_t stored = 0;
  std::memcpy(&stored, b.data() + at + kStoredSize, 4);
  for (int i = 0; i < 4; ++i) b[at + kChunkHeader + rng() % stored] ^= static_cast<std::uint8_t>(1 + rng() % 255);
  rehash_chunk(b, at);
}

// The trace of each shape written with `seed` to a file of a TempDir, then
// `check(shape, path, its bytes)`, which may write other files next to it.
// Stops at the first fatal failure, as an ASSERT in the loop of a test does.
template <class Check>
void on_every_shape(std::uint64_t seed, Check check) {
  TempDir dir;
  const std::string path = dir.file("shape.trace");
  for (const Shape& shape : kShapes) {
    SCOPED_TRACE(shape.name);
    const Bytes bytes = write_trace(path, shape, seed);
    check(shape, path, bytes);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// The same, each trace read sequentially, which must succeed; then
// `check(shape, path, that reading)`.
template <class Check>
void on_every_shape_read(std::uint64_t seed, Check check) {
  on_every_shape(seed, [&](const Shape& shape, const std::string& path, const Bytes&) {
    const Reading sequential = read(path, 1);
    ASSERT_FALSE(sequential.error) << *sequential.error;
    check(shape, path, sequential);
  });
}

// The trace of one shape, written with a seed to a file of its own.
struct ShapeFile {
  ShapeFile(const Shape& shape, std::uint64_t seed) { write_trace(path, shape, seed); }
  TempDir dir;
  std::string path = dir.file("shape.trace");
};

TEST(ParallelRead, SameEventsAsSequentialOnEveryShape) {
  on_every_shape_read(7, [](const Shape&, const std::string& path, const Reading& want) {
    ASSERT_GT(want.events.size(), 1000u);
    for (unsigned threads : kThreadCounts) expect_same(want, read(path, threads), threads);
  });
}

TEST(ParallelRead, RunsGiveTheSameEventsAsNext) {
  on_every_shape_read(13, [](const Shape&, const std::string& path, const Reading& want) {
    for (unsigned threads : {1u, 2u, 8u}) {
      SCOPED_TRACE("runs");
      expect_same(want, read(path, threads, How::runs), threads);
      SCOPED_TRACE("runs and single events alternating");
      expect_same(want, read(path, threads, How::mixed), threads);
    }
  });
}

TEST(ParallelRead, RewindInTheMiddleStartsOver) {
  const ShapeFile f(kShapes[1], 3);
  tr::Reader sequential(f.path);
  sequential.set_decode_threads(1);
  const std::vector<Event> want = sequential.read_all();
  tr::Reader r(f.path);
  r.set_decode_threads(4);
  Event e;
  for (int i = 0; i < 5000; ++i) ASSERT_TRUE(r.next(e));
  r.rewind();
  std::vector<Event> got;
  while (r.next(e)) got.push_back(e);
  EXPECT_TRUE(got == want);
  EXPECT_TRUE(r.read_all() == want);
}

TEST(ParallelRead, DamagedChunksGiveTheSameEventsThenTheSameError) {
  std::mt19937_64 rng(11);
  on_every_shape(5, [&](const Shape&, const std::string& path, const Bytes& good) {
    const std::vector<std::size_t> chunks = event_chunks(good);
    ASSERT_GT(chunks.size(), 3u);
    for (std::size_t k : {std::size_t{0}, chunks.size() / 3, chunks.size() / 2, chunks.size() - 1}) {
      SCOPED_TRACE("damaged chunk " + std::to_string(k));
      Bytes bad = good;
      damage_payload(bad, chunks[k], rng);
      write_file(path, bad);
      const Reading want = read(path, 1);
      for (unsigned threads : kThreadCounts) expect_same(want, read(path, threads), threads);
      expect_same(want, read(path, 1, How::runs), 1);
      expect_same(want, read(path, 2, How::runs), 2);
    }
  });
}

TEST(ParallelRead, CutTracesGiveTheSameEventsAndCut) {
  on_every_shape(9, [](const Shape&, const std::string& path, const Bytes& good) {
    for (std::size_t size : {good.size() / 5, good.size() / 2, good.size() - 100, good.size() - 1}) {
      SCOPED_TRACE("cut to " + std::to_string(size) + " bytes");
      write_file(path, Bytes(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(size)));
      const Reading want = read(path, 1);
      ASSERT_FALSE(want.cut.empty());
      for (unsigned threads : kThreadCounts) expect_same(want, read(path, threads), threads);
    }
  });
}

// The file header as versions 1 to 3 wrote it: the body without its last
// field (the sampling interval, version 4).
Bytes with_old_header(const Bytes& v4, std::uint8_t version) {
  EXPECT_EQ(v4[8], 4);
  const std::uint32_t body = get<std::uint32_t>(v4, 12) - 8;
  Bytes old(v4.begin(), v4.begin() + static_cast<std::ptrdiff_t>(kFilePrefix + body));
  old[8] = version;
  put<std::uint32_t>(old, 12, body);
  old.resize(old.size() + 8);
  put<std::uint64_t>(old, kFilePrefix + body, hash64(old.data() + kFilePrefix, body));
  old.insert(old.end(), v4.begin() + static_cast<std::ptrdiff_t>(header_end(v4)), v4.end());
  return old;
}

// Traces of format version 3 (no sampling interval in the header) read as
// exact traces with the same events.
TEST(ParallelRead, VersionThreeTracesReadAsExact) {
  on_every_shape(41, [](const Shape&, const std::string& v4, const Bytes& good) {
    const std::string v3 = v4 + ".v3";
    write_file(v3, with_old_header(good, 3));
    {
      tr::Reader reader(v3);
      EXPECT_EQ(reader.header().version, 3);
      EXPECT_EQ(reader.header().sample_interval, 0u);
    }
    expect_same(read(v4, 1), read(v3, 1), 1);
  });
}

// The trace as format version 1 wrote it: each Events chunk's columns after
// their lengths in the order of the lengths (kinds, time, size, address, aux,
// callsite) and compressed as one zstd frame (codec 1), where version 2
// writes them in three frames (codec 2, docs/trace-format.md).
Bytes as_version_1(const Bytes& v4) {
  const Bytes v2 = with_old_header(v4, 1);
  std::size_t at = header_end(v2);
  Bytes v1(v2.begin(), v2.begin() + static_cast<std::ptrdiff_t>(at));
  while (at + kChunkHeader <= v2.size()) {
    std::uint32_t stored = 0, raw_size = 0;
    std::memcpy(&stored, v2.data() + at + kStoredSize, 4);
    std::memcpy(&raw_size, v2.data() + at + kRawSize, 4);
    Bytes chunk(v2.begin() + static_cast<std::ptrdiff_t>(at),
                v2.begin() + static_cast<std::ptrdiff_t>(at + kChunkHeader + stored));
    at += kChunkHeader + stored;
    if (chunk[kType] == kEvents) {
      EXPECT_EQ(chunk[kCodec], 2);
      Bytes raw(raw_size);
      EXPECT_EQ(ZSTD_decompress(raw.data(), raw.size(), chunk.data() + kChunkHeader, stored), raw.size());
      std::uint32_t len[6];
      std::memcpy(len, raw.data(), sizeof len);
      const unsigned frame_order[6] = {0, 2, 3, 4, 1, 5};
      std::size_t from[6], p = sizeof len;
      for (unsigned c : frame_order) {
        from[c] = p;
        p += len[c];
      }
      Bytes v1_raw(raw.begin(), raw.begin() + sizeof len);
      for (unsigned c = 0; c < 6; ++c)
        v1_raw.insert(v1_raw.end(), raw.begin() + static_cast<std::ptrdiff_t>(from[c]),
                      raw.begin() + static_cast<std::ptrdiff_t>(from[c] + len[c]));
      Bytes packed(ZSTD_compressBound(v1_raw.size()));
      packed.resize(ZSTD_compress(packed.data(), packed.size(), v1_raw.data(), v1_raw.size(), 3));
      chunk.resize(kChunkHeader);
      chunk.insert(chunk.end(), packed.begin(), packed.end());
      chunk[kCodec] = 1;
      const auto packed_size = static_cast<std::uint32_t>(packed.size());
      std::memcpy(chunk.data() + kStoredSize, &packed_size, 4);
      rehash_chunk(chunk, 0);
    }
    v1.insert(v1.end(), chunk.begin(), chunk.end());
  }
  return v1;
}

// Traces of format version 1 read as they always did: the same events as the
// same trace in version 2, with every column and with the replay's.
TEST(ParallelRead, VersionOneTracesGiveTheSameEvents) {
  on_every_shape(37, [](const Shape&, const std::string& v2, const Bytes& good) {
    const std::string v1 = v2 + ".v1";
    write_file(v1, as_version_1(good));
    {
      tr::Reader reader(v1);
      EXPECT_EQ(reader.header().version, 1);
    }
    for (const bool replay : {false, true}) {
      SCOPED_TRACE(replay ? "replay's columns" : "every column");
      const Reading want = read(v2, 1, How::runs, !replay, !replay);
      ASSERT_FALSE(want.error) << *want.error;
      for (unsigned threads : {1u, 3u}) expect_same(want, read(v1, threads, How::runs, !replay, !replay), threads);
    }
  });
}

// Threads that help (Reader::help_decode) change nothing: the same events,
// the same Error after a damaged chunk, the same cut, whether the reader has
// decoding threads of its own or not, and with columns skipped.
TEST(ParallelRead, HelpersGiveTheSameEventsErrorsAndCuts) {
  std::mt19937_64 rng(23);
  on_every_shape(29, [&](const Shape&, const std::string& path, const Bytes& good) {
    const std::vector<std::size_t> chunks = event_chunks(good);
    Bytes damaged = good;
    damage_payload(damaged, chunks[chunks.size() / 2], rng);
    const Bytes cut(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(good.size() / 2));
    for (const Bytes* bytes : {&good, static_cast<const Bytes*>(&damaged), &cut}) {
      write_file(path, *bytes);
      const Reading want = read(path, 1);
      for (unsigned threads : kDecodeThreads) {
        SCOPED_TRACE("helped by 2 threads");
        expect_same(want, read(path, threads, How::runs, true, true, 2), threads);
        expect_same(want, read(path, threads, How::mixed, true, true, 1), threads);
      }
      // Skipped columns are not decompressed, so damage in them goes unseen:
      // compared with reading the same columns unhelped.
      SCOPED_TRACE("call sites skipped, helped by 1 thread");
      expect_same(read(path, 1, How::runs, true, false), read(path, 1, How::runs, true, false, 1), 1);
    }
  });
}

// Rewinds and column changes while other threads help: each waits for the
// chunk a helper is decoding, and the events read afterwards are whole.
TEST(ParallelRead, RewindsAndColumnChangesWhileHelped) {
  const ShapeFile f(kShapes[0], 31);
  const Reading want = read(f.path, 1);
  tr::Reader reader(f.path);
  reader.set_decode_threads(1);
  Helpers helping(reader, 2);
  const Event* run = nullptr;
  for (int round = 0; round < 20; ++round) {
    for (int k = 0; k < round; ++k) ASSERT_GT(reader.next_run(run), 0u);
    if (round % 2) reader.set_columns(round % 4 == 1, true);
    else reader.rewind();
  }
  reader.set_columns(true, true);
  EXPECT_EQ(reader.read_all(), want.events);
}

}  // namespace

// Columns a consumer does not read (Reader::set_columns): the same events in
// the same order with those fields 0, on every shape and decoding thread
// count; times are kept where the merge needs them (more than one thread).
TEST(ParallelRead, SkippedColumnsLeaveTheOtherFieldsAndTheOrder) {
  on_every_shape_read(17, [](const Shape& shape, const std::string& path, const Reading& full) {
    for (unsigned threads : {1u, 2u, 8u}) {
      for (const bool times : {false, true}) {
        for (const bool sites : {false, true}) {
          SCOPED_TRACE(std::string("times ") + (times ? "read" : "skipped") + ", call sites " + (sites ? "read" : "skipped"));
          Reading want = full;
          for (Event& e : want.events) {
            if (!times && shape.threads == 1) e.time_ns = 0;
            if (!sites) e.callsite = 0;
          }
          expect_same(want, read(path, threads, How::runs, times, sites), threads);
        }
      }
    }
  });
}

// set_columns(true, true) after a skipping reading reads every column again.
TEST(ParallelRead, EveryColumnIsReadAgainWhenAskedFor) {
  const ShapeFile f(kShapes[0], 19);
  const Reading full = read(f.path, 2);
  tr::Reader reader(f.path);
  reader.set_columns(false, false);
  Event e;
  ASSERT_TRUE(reader.next(e));
  EXPECT_EQ(e.time_ns, 0u);
  reader.set_columns(true, true);
  EXPECT_EQ(reader.read_all(), full.events);
}
