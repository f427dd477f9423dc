// SPDX-License-Identifier: MIT
// Round trip of the trace format: what the Writer writes, the Reader gives back
// exactly — every operation and flag, extreme field values, several threads
// merged in time order (ties in file order), modules, header and end record,
// the largest chunk and many chunks.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <map>
#include <vector>

#include "tailor/trace/event.h"
#include "tailor/trace/metadata.h"
#include "tailor/trace/reader.h"
#include "tailor/trace/writer.h"
#include "common/temp_dir.h"
#include "common/trace_file.h"

namespace {

namespace tr = tailor::trace;
using tr::Event;
using tr::Op;

constexpr std::uint64_t kMax = UINT64_MAX;

using tailor::test::TempDir;

Event ev(std::uint64_t time, Op op, std::uint8_t flags = 0, std::uint64_t size = 0, std::uint64_t address = 0,
         std::uint64_t aux = 0, std::uint64_t callsite = 0) {
  return tailor::test::event(0, time, op, size, address, aux, flags, callsite);
}

tr::HeaderFields default_header() {
  tr::HeaderFields h;
  h.page_size = 4096;
  h.pid = 1234;
  h.ppid = 1;
  h.start_realtime_ns = 1'700'000'000'000'000'000ull;
  h.start_monotonic_ns = 5'000;
  h.executable = "/usr/bin/example";
  h.command_line = std::string_view("example\0--flag", 14);
  return h;
}

// The end record the tests write unless they test the end record.
tr::EndRecord end_record(tr::EndReason reason = tr::EndReason::Exit, std::int32_t status = 0) {
  tr::EndRecord e;
  e.reason = reason;
  e.status = status;
  e.events = 42;
  e.dropped = 7;
  e.time_ns = 999'999;
  return e;
}

// Writes a trace through the public Writer API into a file made with mkstemp,
// and remembers what went in so that tests can state what must come out.
class TraceFile {
 public:
  explicit TraceFile(const TempDir& dir, std::size_t max_events = tr::Writer::kDefaultChunkEvents, int level = 1) {
    path_ = dir.file("trace-XXXXXX");
    fd_ = mkstemp(path_.data());
    if (fd_ < 0) throw std::runtime_error("mkstemp failed");
    if (!writer_.init(max_events, level)) throw std::runtime_error("Writer::init failed");
    writer_.attach(fd_);
  }
  ~TraceFile() {
    if (fd_ >= 0) ::close(fd_);
  }

  void header(const tr::HeaderFields& h = default_header()) { ASSERT_TRUE(writer_.write_header(h)) << writer_.last_error(); }

  // One chunk of one thread; the events' own `thread` fields are ignored by
  // the format (the chunk says whose they are).
  void chunk(std::uint32_t thread, std::vector<Event> events) {
    ASSERT_TRUE(writer_.write_events(thread, events.data(), events.size())) << writer_.last_error();
    for (auto& e : events) {
      e.thread = thread;
      written_.push_back(e);
      written_chunk_.push_back(chunks_);
    }
    ++chunks_;
  }

  void modules(const std::vector<tr::Module>& ms) {
    std::vector<tr::ModuleFields> f;
    for (const auto& m : ms) f.push_back({m.load_address, m.start, m.end, m.time_ns, m.path, m.build_id});
    ASSERT_TRUE(writer_.write_modules(f.data(), f.size())) << writer_.last_error();
    if (!ms.empty()) ++chunks_;
  }

  void end(const tr::EndRecord& e) {
    ASSERT_TRUE(writer_.write_end(e)) << writer_.last_error();
    ++chunks_;
  }

  void close() {
    ::close(fd_);
    fd_ = -1;
  }

  // The usual end record, and the file closed.
  void finish() {
    end(end_record());
    close();
  }

  const std::string& path() const { return path_; }
  tr::Writer& writer() { return writer_; }
  std::uint64_t chunks() const { return chunks_; }

  // What next() must give: each thread's events in the order written, the
  // threads merged by the time of their next event (ties: the earlier chunk).
  std::vector<Event> expected() const {
    std::map<std::uint32_t, std::vector<std::size_t>> per_thread;
    for (std::size_t i = 0; i < written_.size(); ++i) per_thread[written_[i].thread].push_back(i);
    std::map<std::uint32_t, std::size_t> head;
    std::vector<Event> v;
    while (v.size() < written_.size()) {
      std::size_t best = SIZE_MAX;
      std::uint32_t best_thread = 0;
      for (const auto& [t, idx] : per_thread) {
        std::size_t h = head[t];
        if (h == idx.size()) continue;
        std::size_t i = idx[h];
        if (best == SIZE_MAX || written_[i].time_ns < written_[best].time_ns ||
            (written_[i].time_ns == written_[best].time_ns && written_chunk_[i] < written_chunk_[best])) {
          best = i;
          best_thread = t;
        }
      }
      v.push_back(written_[best]);
      ++head[best_thread];
    }
    return v;
  }

 private:
  std::string path_;
  int fd_ = -1;
  tr::Writer writer_;
  std::vector<Event> written_;
  std::vector<std::uint64_t> written_chunk_;  // file position (chunk number) of each written event
  std::uint64_t chunks_ = 0;
};

std::vector<Event> read_with_next(tr::Reader& r) {
  std::vector<Event> v;
  Event e;
  while (r.next(e)) v.push_back(e);
  return v;
}

// Compares event lists with a readable message at the first difference.
void expect_same_events(const std::vector<Event>& got, const std::vector<Event>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    const Event& g = got[i];
    const Event& w = want[i];
    ASSERT_TRUE(g == w) << "event " << i << ": got time " << g.time_ns << " thread " << g.thread << " op "
                        << int(g.op) << " flags " << int(g.flags) << " size " << g.size << " address " << g.address
                        << " aux " << g.aux << " callsite " << g.callsite << "; want time " << w.time_ns
                        << " thread " << w.thread << " op " << int(w.op) << " flags " << int(w.flags) << " size "
                        << w.size << " address " << w.address << " aux " << w.aux << " callsite " << w.callsite;
  }
}

// ---------------------------------------------------------------------------

TEST(RoundTrip, EveryOperationWithEveryFlagCombination) {
  TempDir dir;
  TraceFile f(dir);
  f.header();
  std::vector<Event> events;
  std::uint64_t t = 10'000;
  for (unsigned op = 1; op <= tr::kMaxOp; ++op) {
    for (unsigned flags = 0; flags < 16; ++flags) {
      t += 1 + op * flags;
      events.push_back(ev(t, static_cast<Op>(op), static_cast<std::uint8_t>(flags), op * 1000 + flags,
                          0x7f00'0000'0000ull + op * 0x100 + flags * 16, flags ? op * 8 : 0, 0x4000'0000ull + op));
    }
  }
  f.chunk(3, events);
  f.finish();

  tr::Reader r(f.path());
  EXPECT_TRUE(r.complete()) << r.cut();
  EXPECT_EQ(r.event_count(), events.size());
  EXPECT_EQ(r.thread_count(), 1u);
  expect_same_events(r.read_all(), f.expected());
  // read_all() rewinds: next() starts from the beginning again.
  expect_same_events(read_with_next(r), f.expected());
}

// The recorder's 32-byte form (writer.h, PackedEvent), packed here from its
// documented layout: events with aux 0 and a call site below 2^55 take one
// slot, the others two. What comes back is what write_events of the same
// events gives, with the event count the writer reports.
std::vector<tr::PackedEvent> pack(const std::vector<Event>& events) {
  std::vector<tr::PackedEvent> slots;
  for (const Event& e : events) {
    const std::uint64_t tag = tr::PackedEvent::tag(e.op, e.flags);
    if (tr::PackedEvent::fits_one(e.aux, e.callsite)) {
      slots.push_back({e.time_ns, e.size, e.address, e.callsite | tag});
    } else {
      slots.push_back({e.time_ns, e.size, e.address, tr::PackedEvent::kExtended | tag});
      slots.push_back({e.aux, e.callsite, 0, 0});
    }
  }
  return slots;
}

TEST(RoundTrip, PackedEventsReadBackAsTheirEvents) {
  std::vector<Event> events;
  std::uint64_t t = 5'000;
  for (unsigned op = 1; op <= tr::kMaxOp; ++op) {
    for (unsigned flags = 0; flags < 16; ++flags) {
      t += op * flags;  // ties included
      const std::uint64_t aux = flags % 3 == 0 ? 0 : op * 8 + flags;
      const std::uint64_t site = flags == 5 ? kMax - op : flags == 6 ? tr::PackedEvent::kSiteMask : 0x5555'0000ull + op;
      events.push_back(ev(t, static_cast<Op>(op), static_cast<std::uint8_t>(flags), op * 100 + flags,
                          0x7f00'0000'0000ull + op * 0x100 + flags * 16, aux, site));
    }
  }
  const std::vector<tr::PackedEvent> slots = pack(events);
  ASSERT_GT(slots.size(), events.size());
  ASSERT_LT(slots.size(), 2 * events.size());

  TempDir dir;
  TraceFile packed(dir), plain(dir);
  packed.header();
  plain.header();
  std::size_t count = 0;
  ASSERT_TRUE(packed.writer().write_packed(4, slots.data(), slots.size(), 0, tr::TimeMap{}, count))
      << packed.writer().last_error();
  EXPECT_EQ(count, events.size());
  plain.chunk(4, events);
  packed.close();
  plain.close();
  tr::Reader a(packed.path()), b(plain.path());
  expect_same_events(a.read_all(), b.read_all());

  // An event whose second slot is missing is refused, and nothing is written.
  TraceFile cut(dir);
  cut.header();
  std::size_t last_two = slots.size();
  while (!(slots[last_two - 1].word & tr::PackedEvent::kExtended)) --last_two;  // end right after a first slot
  EXPECT_FALSE(cut.writer().write_packed(0, slots.data(), last_two, 0, tr::TimeMap{}, count));
  EXPECT_EQ(cut.writer().last_error(), EINVAL);
  EXPECT_EQ(count, 0u);
}

// Whole call stacks: two threads write the same paths under ids of their
// own (as a recorder's threads do); the reader merges equal paths into one
// node, and every event's stack gives back the frames it was written with.
// The packed form carries an event's stack in its second slot.
TEST(RoundTrip, StacksReadBackAsTheirFrames) {
  // Paths, outermost frame first: main -> f -> g, main -> f -> h, main -> k.
  const std::vector<std::vector<std::uint64_t>> paths = {
      {0x401000, 0x402000, 0x403000}, {0x401000, 0x402000, 0x404000}, {0x401000, 0x7fff'0000'1000}};
  // Thread 0 numbers its nodes 1-5, thread 1 from 6 (one counter, interleaved in a real process).
  auto nodes_of = [&](std::uint32_t first_id, std::vector<std::uint32_t>& leaf) {
    std::vector<tr::StackNode> nodes;
    std::map<std::pair<std::uint32_t, std::uint64_t>, std::uint32_t> seen;
    std::uint32_t id = first_id;
    for (const auto& path : paths) {
      std::uint32_t parent = 0;
      for (const std::uint64_t a : path) {
        auto [it, fresh] = seen.try_emplace({parent, a}, id);
        if (fresh) nodes.push_back({id++, parent, a});
        parent = it->second;
      }
      leaf.push_back(parent);
    }
    return nodes;
  };
  std::vector<std::uint32_t> leaf0, leaf1;
  const std::vector<tr::StackNode> nodes0 = nodes_of(1, leaf0), nodes1 = nodes_of(6, leaf1);
  ASSERT_EQ(nodes0.size(), 5u);

  std::vector<Event> t0, t1;
  for (std::uint64_t i = 0; i < 30; ++i) {
    Event a = ev(1000 + 10 * i, Op::Malloc, 0, 16 + i, 0x10000 + 64 * i, 0, paths[i % 3].back());
    a.stack = leaf0[i % 3];
    Event b = ev(1005 + 10 * i, i % 2 ? Op::Free : Op::Malloc, 0, 0, 0x20000 + 64 * i, i % 4, paths[(i + 1) % 3].back());
    b.stack = i % 5 == 0 ? 0 : leaf1[(i + 1) % 3];  // some events without a stack
    t0.push_back(a);
    t1.push_back(b);
  }
  TempDir dir;
  TraceFile f(dir);
  f.header();
  ASSERT_TRUE(f.writer().write_stacks(0, nodes0.data(), nodes0.size())) << f.writer().last_error();
  ASSERT_TRUE(f.writer().write_stacks(1, nodes1.data(), 2));  // nodes in two chunks, each before its use
  ASSERT_TRUE(f.writer().write_stacks(1, nodes1.data() + 2, nodes1.size() - 2));
  f.chunk(0, std::vector<Event>(t0.begin(), t0.begin() + 10));
  std::size_t count = 0;
  const std::vector<tr::PackedEvent> slots = [&] {
    std::vector<tr::PackedEvent> s;
    for (std::size_t i = 10; i < t0.size(); ++i) {  // every event in two slots, its stack in the second
      const Event& e = t0[i];
      s.push_back({e.time_ns, e.size, e.address, tr::PackedEvent::kExtended | tr::PackedEvent::tag(e.op, e.flags)});
      s.push_back({e.aux, e.callsite, e.stack, 0});
    }
    return s;
  }();
  ASSERT_TRUE(f.writer().write_packed(0, slots.data(), slots.size(), 0, tr::TimeMap{}, count));
  EXPECT_EQ(count, 20u);
  f.chunk(1, t1);
  f.finish();

  tr::Reader r(f.path());
  const tr::StackTable& table = r.stacks();
  EXPECT_EQ(table.size(), 5u) << "thread 1's nodes are thread 0's paths";
  std::vector<Event> got = r.read_all();
  ASSERT_EQ(got.size(), 60u);
  std::size_t with = 0;
  for (const Event& e : got) {
    const std::vector<Event>& mine = e.thread == 0 ? t0 : t1;
    auto it = std::find_if(mine.begin(), mine.end(), [&](const Event& w) { return w.time_ns == e.time_ns; });
    ASSERT_NE(it, mine.end());
    if (it->stack == 0) {
      EXPECT_EQ(e.stack, 0u);
      continue;
    }
    ++with;
    std::vector<std::uint64_t> want = paths[std::find(e.thread == 0 ? leaf0.begin() : leaf1.begin(),
                                                      e.thread == 0 ? leaf0.end() : leaf1.end(), it->stack) -
                                            (e.thread == 0 ? leaf0.begin() : leaf1.begin())];
    std::reverse(want.begin(), want.end());  // innermost first
    EXPECT_EQ(table.frames(e.stack), want);
    EXPECT_EQ(table.depth(e.stack), want.size());
    EXPECT_EQ(table.address(e.stack), e.callsite);
  }
  EXPECT_EQ(with, 54u);

  // Without call sites, no stacks either.
  r.set_columns(true, false);
  for (const Event& e : r.read_all()) EXPECT_EQ(e.stack, 0u);
}

TEST(RoundTrip, WriterRefusesBadStackNodes) {
  TempDir dir;
  TraceFile f(dir);
  f.header();
  const std::vector<std::vector<tr::StackNode>> bad = {
      {{0, 0, 0x1000}},                      // id 0 is the root
      {{2, 0, 0x1000}, {1, 0, 0x2000}},      // ids descend
      {{3, 3, 0x1000}},                      // its own parent
      {{3, 4, 0x1000}}};                     // a parent after it
  for (const auto& nodes : bad) {
    EXPECT_FALSE(f.writer().write_stacks(0, nodes.data(), nodes.size()));
    EXPECT_EQ(f.writer().last_error(), EINVAL);
  }
  f.finish();
  tr::Reader r(f.path());
  EXPECT_TRUE(r.stacks().empty());
  EXPECT_EQ(r.chunk_count(), 1u) << "nothing but the end record was written";
}

TEST(RoundTrip, ExtremeFieldValues) {
  TempDir dir;
  TraceFile f(dir);
  f.header();
  // Times only grow (within a thread they are the recorder's clock); every
  // other field jumps between the ends of its range, so that every delta is
  // as large as it gets in both directions.
  std::vector<Event> events = {
      ev(0, Op::Malloc, 0, 0, 0, 0, 0),
      ev(0, Op::Malloc, 0, kMax, kMax, kMax, kMax),
      ev(1, Op::Free, 0, 0, 0, 0, 0),
      ev(2, Op::Calloc, 0, kMax, 1, kMax, 1),
      ev(3, Op::Free, tr::kSized | tr::kAligned, kMax, kMax - 1, kMax, kMax - 1),
      ev(kMax / 2, Op::New, tr::kArray | tr::kAligned | tr::kNothrow, 1, 0x8000'0000'0000'0000ull, 1ull << 63, 0),
      ev(kMax / 2 + 1, Op::Delete, 0xff, kMax, 0x7fff'ffff'ffff'ffffull, 0, kMax),
      ev(kMax - 1, Op::ThreadStart, 0, kMax, 0, 0, 0),
      ev(kMax, Op::ThreadExit, 0, 0, kMax, kMax, kMax),
      ev(kMax, Op::Memalign, 0, 0, 1, kMax, 0),
  };
  f.chunk(0, events);
  f.chunk(UINT32_MAX, {ev(5, Op::Malloc, 0, 1, 2, 3, 4)});  // the largest thread index
  f.finish();

  tr::Reader r(f.path());
  expect_same_events(r.read_all(), f.expected());
  EXPECT_EQ(r.thread_count(), 2u);
}

TEST(RoundTrip, ReallocOldAboveAndBelowNew) {
  TempDir dir;
  TraceFile f(dir);
  f.header();
  // aux (the old block) is coded relative to the new address: try it on both
  // sides, equal, from NULL, to NULL, and across the whole range.
  f.chunk(1, {
                 ev(100, Op::Realloc, 0, 64, 0x1000, 0x9000),              // old > new
                 ev(101, Op::Realloc, 0, 4096, 0x9000, 0x1000),            // old < new
                 ev(102, Op::Realloc, 0, 10, 0x5000, 0x5000),              // in place
                 ev(103, Op::Realloc, 0, 10, 0x6000, 0),                   // from NULL
                 ev(104, Op::Realloc, 0, 0, 0, 0x6000),                    // to size 0
                 ev(105, Op::Realloc, 0, kMax, 0, kMax),                   // failed, old at the top
                 ev(106, Op::Realloc, tr::kArray, 3, kMax, 0),             // reallocarray, new at the top
                 ev(107, Op::Realloc, 0, 1, 1, kMax),                      // old - new = 2^64 - 2
                 ev(108, Op::Realloc, 0, 1, kMax, 1),                      // old - new = -(2^64 - 2)
                 ev(109, Op::Malloc, 0, 8, 0x2000, 0x1234),                // aux of other ops is plain
             });
  f.finish();

  tr::Reader r(f.path());
  expect_same_events(r.read_all(), f.expected());
}

TEST(RoundTrip, TimeGoesBackBetweenChunksOfOneThread) {
  TempDir dir;
  TraceFile f(dir);
  f.header();
  // A later chunk of the same thread may start before an earlier one ended
  // (the writer accepts it): a thread's chunks are its call order, so the
  // reader keeps them in file order rather than interleaving them by time.
  f.chunk(0, {ev(100, Op::Malloc, 0, 1, 0x10), ev(200, Op::Malloc, 0, 2, 0x20), ev(300, Op::Malloc, 0, 3, 0x30)});
  f.chunk(0, {ev(50, Op::Free, 0, 0, 0x10), ev(250, Op::Free, 0, 0, 0x20), ev(350, Op::Free, 0, 0, 0x30)});
  f.finish();

  tr::Reader r(f.path());
  std::vector<Event> got = r.read_all();
  expect_same_events(got, f.expected());
  std::vector<std::uint64_t> times;
  for (const auto& e : got) times.push_back(e.time_ns);
  EXPECT_EQ(times, (std::vector<std::uint64_t>{100, 200, 300, 50, 250, 350}));
}

// The writer takes events in any time order (time deltas are zigzag coded).
// Inside one chunk — one thread's events in program order — the reader keeps
// the order they were written in: a thread's own order is the truth (the
// recorder's TSC stamps may be a few ticks out of order), and sorting them
// could put a free before the malloc it ends.
TEST(RoundTrip, TimeGoesBackInsideOneChunk) {
  TempDir dir;
  TraceFile f(dir);
  f.header();
  std::vector<Event> events = {ev(300, Op::Malloc, 0, 1, 0x10), ev(100, Op::Malloc, 0, 2, 0x20),
                               ev(200, Op::Free, 0, 0, 0x10), ev(100, Op::Free, 0, 0, 0x20)};
  f.chunk(4, events);
  f.finish();

  tr::Reader r(f.path());
  for (auto& e : events) e.thread = 4;
  expect_same_events(r.read_all(), events);
}

TEST(RoundTrip, ThreadsMergeByTimeAndTiesKeepFileOrder) {
  TempDir dir;
  TraceFile f(dir);
  f.header();
  std::mt19937_64 rng(7);
  // Four threads, several chunks each, written round-robin. Times step by 3
  // with random jitter in a small range so that many events of different
  // threads share a timestamp.
  constexpr int kThreads = 4, kChunks = 6, kPerChunk = 50;
  std::uint64_t clock[kThreads] = {1000, 1000, 1000, 1000};
  for (int c = 0; c < kChunks; ++c) {
    for (int t = kThreads - 1; t >= 0; --t) {  // reverse thread order: file order is not thread order
      std::vector<Event> events;
      for (int i = 0; i < kPerChunk; ++i) {
        clock[t] += rng() % 3;  // 0, 1 or 2: ties inside a chunk and across threads
        events.push_back(ev(clock[t], Op::Malloc, 0, static_cast<std::uint64_t>(t * 100000 + c * 1000 + i),
                            0x1000u * static_cast<std::uint64_t>(i + 1), 0, static_cast<std::uint64_t>(t)));
      }
      f.chunk(static_cast<std::uint32_t>(t), events);
    }
  }
  f.finish();

  tr::Reader r(f.path());
  EXPECT_EQ(r.thread_count(), static_cast<std::uint32_t>(kThreads));
  EXPECT_EQ(r.event_count(), static_cast<std::uint64_t>(kThreads * kChunks * kPerChunk));
  EXPECT_EQ(r.chunk_count(), f.chunks());
  std::vector<Event> got = r.read_all();
  expect_same_events(got, f.expected());
  // The expectation itself must contain ties across threads, or this test proves little.
  int cross_thread_ties = 0;
  for (std::size_t i = 1; i < got.size(); ++i)
    if (got[i].time_ns == got[i - 1].time_ns && got[i].thread != got[i - 1].thread) ++cross_thread_ties;
  EXPECT_GT(cross_thread_ties, 10);
}

TEST(RoundTrip, EqualTimesAcrossThreadsComeInFileOrder) {
  TempDir dir;
  TraceFile f(dir);
  f.header();
  // Thread 5's chunk is written before thread 2's; all share one timestamp.
  f.chunk(5, {ev(77, Op::Malloc, 0, 1), ev(77, Op::Malloc, 0, 2)});
  f.chunk(2, {ev(77, Op::Malloc, 0, 3), ev(77, Op::Malloc, 0, 4)});
  f.chunk(5, {ev(77, Op::Malloc, 0, 5)});
  f.chunk(9, {ev(76, Op::Malloc, 0, 0), ev(77, Op::Malloc, 0, 6)});
  f.finish();

  tr::Reader r(f.path());
  std::vector<Event> got = r.read_all();
  std::vector<std::uint64_t> sizes;
  for (const auto& e : got) sizes.push_back(e.size);
  EXPECT_EQ(sizes, (std::vector<std::uint64_t>{0, 1, 2, 3, 4, 5, 6}));
  expect_same_events(got, f.expected());
}

TEST(RoundTrip, Modules) {
  TempDir dir;
  TraceFile f(dir);
  f.header();
  std::vector<tr::Module> first = {
      {0x5555'0000'0000ull, 0x5555'0000'0000ull, 0x5555'0001'2345ull, 10, "/usr/bin/example",
       "0123456789abcdef0123456789abcdef01234567"},
      {0x7f00'0000'0000ull, 0x7f00'0000'1000ull, 0x7f00'0020'0000ull, 11, "/lib/x86_64-linux-gnu/libc.so.6", ""},
      {0, 0, 0, 0, "", ""},
      {kMax, kMax, kMax, kMax, std::string(3000, 'p'), std::string(40, 'f')},
  };
  std::vector<tr::Module> second = {{0x7e00'0000'0000ull, 0x7e00'0000'0000ull, 0x7e00'0000'8000ull, 500,
                                     "/tmp/dlopened.so", "ab"}};
  f.modules(first);
  f.chunk(0, {ev(20, Op::Malloc, 0, 8, 0x100)});
  f.modules(second);
  f.modules({});  // writes nothing
  f.finish();

  tr::Reader r(f.path());
  std::vector<tr::Module> want = first;
  want.insert(want.end(), second.begin(), second.end());
  ASSERT_EQ(r.modules().size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_TRUE(r.modules()[i] == want[i]) << "module " << i;
  EXPECT_EQ(r.chunk_count(), 4u);
  EXPECT_EQ(r.event_count(), 1u);
}

TEST(RoundTrip, HeaderFields) {
  TempDir dir;
  TraceFile f(dir);
  tr::HeaderFields h;
  h.page_size = 65536;
  h.pid = 0xffff'fffe;
  h.ppid = 0;
  h.start_realtime_ns = kMax;
  h.start_monotonic_ns = 123'456'789;
  std::string exe = "/opt/some where/bin/prog with spaces";
  h.executable = exe;
  // Arguments separated by NULs, with empty ones first and in the middle.
  static constexpr char cmd[] = "\0prog\0\0--x=1\0\0\0last arg";
  h.command_line = std::string_view(cmd, sizeof cmd - 1);
  h.sample_interval = 512 * 1024;
  f.header(h);
  f.finish();

  tr::Reader r(f.path());
  const tr::Header& got = r.header();
  EXPECT_EQ(got.version, tr::kFormatVersion);
  EXPECT_EQ(got.pointer_bytes, sizeof(void*));
  EXPECT_EQ(got.page_size, 65536u);
  EXPECT_EQ(got.pid, 0xffff'fffeu);
  EXPECT_EQ(got.ppid, 0u);
  EXPECT_EQ(got.start_realtime_ns, kMax);
  EXPECT_EQ(got.start_monotonic_ns, 123'456'789u);
  EXPECT_EQ(got.executable, exe);
  EXPECT_EQ(got.command_line, (std::vector<std::string>{"", "prog", "", "--x=1", "", "", "last arg"}));
  EXPECT_EQ(got.sample_interval, 512u * 1024);
  EXPECT_EQ(r.event_count(), 0u);
  EXPECT_TRUE(r.read_all().empty());
}

TEST(RoundTrip, HeaderWithEmptyExecutableAndOneArgument) {
  TempDir dir;
  TraceFile f(dir);
  tr::HeaderFields h = default_header();
  h.executable = "";
  h.command_line = "single";
  f.header(h);
  f.finish();
  tr::Reader r(f.path());
  EXPECT_EQ(r.header().executable, "");
  EXPECT_EQ(r.header().command_line, (std::vector<std::string>{"single"}));
}

// "the arguments separated by NULs" (writer.h): "a\0b\0" is three arguments,
// the last one empty (as in `prog a ""`). A trailing empty argument must not
// be lost.
TEST(RoundTrip, HeaderKeepsTrailingEmptyArgument) {
  TempDir dir;
  TraceFile f(dir);
  tr::HeaderFields h = default_header();
  static constexpr char cmd[] = "prog\0a\0";
  h.command_line = std::string_view(cmd, sizeof cmd - 1);
  f.header(h);
  f.finish();
  tr::Reader r(f.path());
  EXPECT_EQ(r.header().command_line, (std::vector<std::string>{"prog", "a", ""}));
}

TEST(RoundTrip, EndRecordFields) {
  const tr::EndRecord cases[] = {
      {tr::EndReason::Exit, 0, 0, 0, 0},
      {tr::EndReason::Exit, 255, 1, 0, 1},
      {tr::EndReason::FastExit, -1, kMax, kMax, kMax},
      {tr::EndReason::Abort, 6, 12345, 678, 9'000'000'000ull},
      {tr::EndReason::Exec, INT32_MIN, 3, 0, 77},
  };
  for (const auto& want : cases) {
    TempDir dir;
    TraceFile f(dir);
    f.header();
    f.chunk(0, {ev(10, Op::Malloc, 0, 1, 2)});
    f.end(want);
    f.close();
    tr::Reader r(f.path());
    ASSERT_TRUE(r.end().has_value());
    EXPECT_TRUE(*r.end() == want) << "reason " << int(want.reason) << " status " << want.status;
    EXPECT_TRUE(r.complete());
    EXPECT_EQ(r.cut(), "");
  }
}

TEST(RoundTrip, HeaderAndEndOnly) {
  TempDir dir;
  TraceFile f(dir);
  f.header();
  EXPECT_TRUE(f.writer().write_events(0, nullptr, 0));  // nothing to write is not an error
  f.finish();
  tr::Reader r(f.path());
  EXPECT_TRUE(r.complete());
  EXPECT_EQ(r.event_count(), 0u);
  EXPECT_EQ(r.thread_count(), 0u);
  EXPECT_EQ(r.chunk_count(), 1u);
  Event e;
  EXPECT_FALSE(r.next(e));
  EXPECT_EQ(r.file_size(), std::filesystem::file_size(f.path()));
}

TEST(RoundTrip, LargestChunk) {
  TempDir dir;
  TraceFile f(dir);
  f.header();
  std::mt19937_64 rng(42);
  std::vector<Event> events;
  events.reserve(tr::Writer::kDefaultChunkEvents);
  std::uint64_t t = 1'000'000;
  for (std::size_t i = 0; i < tr::Writer::kDefaultChunkEvents; ++i) {
    t += rng() % 1000;
    auto op = static_cast<Op>(1 + rng() % tr::kMaxOp);
    events.push_back(ev(t, op, static_cast<std::uint8_t>(rng() % 16), rng() % 5 == 0 ? rng() : rng() % 4096, rng(),
                        rng() % 3 == 0 ? rng() : 0, 0x400000 + rng() % 64));
  }
  f.chunk(11, events);
  // One more than the limit is refused, and nothing is written.
  std::uint64_t before = f.writer().bytes_written();
  std::vector<Event> too_many(tr::Writer::kDefaultChunkEvents + 1, ev(1, Op::Malloc));
  EXPECT_FALSE(f.writer().write_events(0, too_many.data(), too_many.size()));
  EXPECT_EQ(f.writer().last_error(), E2BIG);
  EXPECT_EQ(f.writer().bytes_written(), before);
  f.finish();

  tr::Reader r(f.path());
  EXPECT_EQ(r.event_count(), tr::Writer::kDefaultChunkEvents);
  EXPECT_EQ(r.chunk_count(), 2u);
  expect_same_events(r.read_all(), f.expected());
}

TEST(RoundTrip, ManyChunksAcrossThreads) {
  TempDir dir;
  TraceFile f(dir, 64);  // small chunk limit
  f.header();
  std::mt19937_64 rng(3);
  constexpr int kThreads = 7;
  std::uint64_t clock[kThreads] = {};
  for (int c = 0; c < 2000; ++c) {
    auto t = static_cast<std::uint32_t>(rng() % kThreads);
    std::vector<Event> events(1 + rng() % 64);
    for (auto& e : events) {
      clock[t] += 1 + rng() % 50;
      e = ev(clock[t], rng() % 2 ? Op::Malloc : Op::Free, 0, rng() % 100000, 0x1000 * (rng() % 1000), 0, rng() % 8);
    }
    f.chunk(t, events);
  }
  f.end(end_record(tr::EndReason::FastExit, 9));
  f.close();

  tr::Reader r(f.path());
  EXPECT_EQ(r.chunk_count(), f.chunks());
  EXPECT_EQ(r.thread_count(), static_cast<std::uint32_t>(kThreads));
  std::vector<Event> want = f.expected();
  EXPECT_EQ(r.event_count(), want.size());
  expect_same_events(r.read_all(), want);

  // rewind() in the middle starts over.
  Event e;
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(r.next(e));
  r.rewind();
  expect_same_events(read_with_next(r), want);
}

TEST(RoundTrip, CompressionLevelsAndChunkLimits) {
  for (int level : {-5, 1, 3, 19}) {
    for (std::size_t max_events : {std::size_t{1}, std::size_t{7}, std::size_t{1000}}) {
      TempDir dir;
      TraceFile f(dir, max_events, level);
      EXPECT_EQ(f.writer().max_events(), max_events);
      f.header();
      std::vector<Event> all;
      for (std::size_t i = 0; i < 2 * max_events + 3; ++i) all.push_back(ev(i * 10, Op::New, tr::kArray, i, i * 64));
      for (std::size_t i = 0; i < all.size(); i += max_events)
        f.chunk(0, std::vector<Event>(all.begin() + static_cast<std::ptrdiff_t>(i),
                                      all.begin() + static_cast<std::ptrdiff_t>(std::min(all.size(), i + max_events))));
      f.finish();
      tr::Reader r(f.path());
      expect_same_events(r.read_all(), f.expected());
    }
  }
}

TEST(RoundTrip, WriterRefusesBadUse) {
  tr::Writer w;
  Event e = ev(1, Op::Malloc);
  // Not initialized: nothing can be written.
  EXPECT_FALSE(w.write_events(0, &e, 1));
  EXPECT_FALSE(w.write_end(end_record()));
  EXPECT_FALSE(w.init(0));
  EXPECT_FALSE(w.init(std::size_t{1} << 21));  // over the reader's per-chunk limit
  EXPECT_TRUE(w.init(16));
  EXPECT_EQ(w.max_events(), 16u);
  // Writing to a closed descriptor fails with its errno.
  w.attach(-1);
  EXPECT_FALSE(w.write_events(0, &e, 1));
  EXPECT_EQ(w.last_error(), EBADF);
}

TEST(RoundTrip, DescribeKindNamesEveryForm) {
  auto kind = [](Op op, std::uint8_t flags) {
    Event e;
    e.op = op;
    e.flags = flags;
    return tr::describe_kind(e);
  };
  EXPECT_EQ(kind(Op::Malloc, 0), "malloc");
  EXPECT_EQ(kind(Op::PosixMemalign, 0), "posix_memalign");
  EXPECT_EQ(kind(Op::Realloc, tr::kArray), "reallocarray");
  EXPECT_EQ(kind(Op::Free, tr::kSized), "free_sized");
  EXPECT_EQ(kind(Op::Free, tr::kSized | tr::kAligned), "free_aligned_sized");
  EXPECT_EQ(kind(Op::New, 0), "new");
  EXPECT_EQ(kind(Op::New, tr::kArray | tr::kAligned | tr::kNothrow), "new[](aligned,nothrow)");
  EXPECT_EQ(kind(Op::Delete, tr::kSized | tr::kAligned), "delete(sized,aligned)");
  EXPECT_EQ(kind(Op::Delete, tr::kArray | tr::kNothrow), "delete[](nothrow)");
  EXPECT_EQ(kind(Op::ThreadStart, 0), "thread_start");
  EXPECT_EQ(tr::op_name(static_cast<Op>(0)), "unknown");
  Event c = ev(0, Op::Calloc, 0, 3, 0, 5);
  EXPECT_EQ(tr::requested_bytes(c), 15u);
  c.size = kMax;
  EXPECT_EQ(tr::requested_bytes(c), kMax);  // saturates on overflow
}

}  // namespace
