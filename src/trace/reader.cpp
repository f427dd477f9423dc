// SPDX-License-Identifier: MIT
// Trace reader. Opening maps the file, checks the header, and walks the chunk
// headers once, verifying both checksums of every chunk, so that damage is
// reported at open with its byte offset rather than half-way through an
// analysis. Events are then merged across threads lazily: the merge takes a
// chunk when it reaches the chunk's first timestamp, from decoding threads
// that work ahead of it (chunk_pipeline.h), so that reading runs at the
// speed of all cores and memory holds a window of chunks, not the trace.
#include "tailor/trace/reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <queue>
#include <set>
#include <shared_mutex>
#include <thread>

#include "trace/byte_io.h"
#include "trace/chunk.h"
#include "trace/chunk_pipeline.h"
#include "trace/event_codec.h"
#include "trace/format.h"
#include "trace/hash.h"

namespace tailor::trace {

Error::Error(const std::string& file, std::uint64_t offset, const std::string& what)
    : std::runtime_error(file + ": byte " + std::to_string(offset) + ": " + what), offset_(offset) {}

namespace {

// One thread's events: its chunks in file order (the order it wrote them,
// which is its call order), one decoded at a time.
struct Stream {
  std::vector<std::size_t> chunks;  // indices into event_chunks
  std::size_t next = 0;             // next chunk to decode
  std::vector<Event> events;        // the decoded chunk in events[0..count)
  std::size_t count = 0;
  std::size_t index = 0;            // next event in it; == count when not decoded
  std::uint64_t sequence = 0;       // file position of the current chunk, for ties

  bool decoded() const noexcept { return index < count; }
};

// Merge key: the next event's time, or an undecoded chunk's first time; ties
// go to the earlier chunk in the file.
struct Key {
  std::uint64_t time;
  std::uint64_t sequence;
  Stream* stream;
};
constexpr bool later(const Key& a, const Key& b) noexcept {
  return a.time != b.time ? a.time > b.time : a.sequence > b.sequence;
}
struct KeyLater {
  bool operator()(const Key& a, const Key& b) const noexcept { return later(a, b); }
};

unsigned default_decode_threads() noexcept { return std::max(1u, std::thread::hardware_concurrency()); }

}  // namespace

struct Reader::Impl {
  std::string path;
  const std::uint8_t* data = nullptr;
  std::uint64_t size = 0;
  Header header;
  std::vector<Module> modules;
  std::optional<EndRecord> end;
  std::string cut;
  std::vector<ChunkRef> event_chunks;  // in file order
  // Stacks (stacks.h): the merged table, and the writer's ids -> its ids.
  StackTable stacks;
  std::vector<std::uint32_t> stack_ids{0};
  std::uint64_t stack_nodes = 0;  // nodes read
  ChunkScratch stack_scratch;
  std::vector<std::uint8_t> stack_payload;
  std::vector<StackNode> stack_chunk;
  std::uint64_t chunks = 0;
  std::uint64_t events = 0;
  std::uint32_t threads = 0;

  // Merge state. The stream that gave the last event stays out of the heap
  // while its next event is still the earliest (a single-threaded trace never
  // touches the heap): the same order as pushing and popping it each time.
  std::vector<Stream> streams;
  std::priority_queue<Key, std::vector<Key>, KeyLater> heap;
  Stream* current = nullptr;
  unsigned decode_threads = default_decode_threads();
  std::unique_ptr<ChunkPipeline> pipeline;  // made at the first event read
  // Held shared by help_decode() while it uses the pipeline, exclusive by
  // whatever makes, resets or destroys it.
  std::shared_mutex pipeline_use;
  bool want_times = true, want_callsites = true;  // set_columns

  [[noreturn]] void fail(std::uint64_t offset, const std::string& what) const { throw Error(path, offset, what); }

  void open() {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw Error(path, 0, std::string("cannot open: ") + std::strerror(errno));
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd);
      throw Error(path, 0, "not a regular file");
    }
    size = static_cast<std::uint64_t>(st.st_size);
    if (size > 0) {
      void* m = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
      if (m == MAP_FAILED) {
        int e = errno;
        ::close(fd);
        throw Error(path, 0, std::string("cannot map: ") + std::strerror(e));
      }
      data = static_cast<const std::uint8_t*>(m);
      madvise(m, size, MADV_SEQUENTIAL);
    }
    ::close(fd);
  }

  ~Impl() {
    drop_pipeline();  // its threads read the mapping
    if (data) munmap(const_cast<std::uint8_t*>(data), size);
  }

  std::uint64_t read_header() {
    if (size < sizeof format::kFileMagic || std::memcmp(data, format::kFileMagic, sizeof format::kFileMagic) != 0)
      fail(0, size == 0 ? "empty file, not a tailor trace" : "not a tailor trace (bad magic)");
    if (size < format::kFilePrefixSize) fail(size, "trace cut inside its file header");
    io::Cursor c(data + sizeof format::kFileMagic, data + size);
    header.version = c.u16();
    std::uint16_t flags = c.u16();
    std::uint32_t body = c.u32();
    if (header.version == 0 || header.version > kFormatVersion)
      fail(8, "format version " + std::to_string(header.version) + " is not supported (this reader knows 1 to " +
                  std::to_string(kFormatVersion) + ")");
    if (flags != 0) fail(10, "unknown file header flags " + std::to_string(flags));
    if (body > format::kMaxHeaderBody) fail(12, "file header claims " + std::to_string(body) + " bytes");
    if (size < format::kFilePrefixSize + body + 8) fail(size, "trace cut inside its file header");
    const std::uint8_t* b = data + format::kFilePrefixSize;
    io::Cursor hc(b + body, b + body + 8);
    if (hc.u64() != hash64(b, body)) fail(format::kFilePrefixSize, "file header checksum mismatch");

    io::Cursor f(b, b + body);
    header.pointer_bytes = f.u8();
    std::uint8_t little = f.u8();
    f.u16();
    header.page_size = f.u32();
    header.pid = f.u32();
    header.ppid = f.u32();
    header.start_realtime_ns = f.u64();
    header.start_monotonic_ns = f.u64();
    header.executable = f.sized_string();
    std::string cmd(f.sized_string());
    if (header.version >= 4) header.sample_interval = f.u64();
    if (!f.ok()) fail(format::kFilePrefixSize, "file header fields overrun the header");
    if (little != 1) fail(format::kFilePrefixSize + 1, "trace was written big-endian; not supported");
    // Arguments separated by NULs; "a\0" is {"a", ""}, "" is no argument at all.
    for (std::size_t pos = 0; !cmd.empty();) {
      std::size_t nul = cmd.find('\0', pos);
      header.command_line.push_back(cmd.substr(pos, nul == std::string::npos ? std::string::npos : nul - pos));
      if (nul == std::string::npos) break;
      pos = nul + 1;
    }
    return format::kFilePrefixSize + body + 8;
  }

  format::ChunkHeader parse_chunk_header(std::uint64_t at) const {
    io::Cursor c(data + at, data + at + format::kChunkHeaderSize);
    format::ChunkHeader h;
    h.magic = c.u32();
    h.type = static_cast<format::ChunkType>(c.u8());
    h.codec = static_cast<format::Codec>(c.u8());
    h.reserved = c.u16();
    h.thread = c.u32();
    h.count = c.u32();
    h.raw_size = c.u32();
    h.stored_size = c.u32();
    h.first_time_ns = c.u64();
    h.last_time_ns = c.u64();
    h.payload_hash = c.u64();
    h.header_hash = c.u64();
    return h;
  }

  void index(std::uint64_t at) {
    std::set<std::uint32_t> thread_ids;
    bool after_events = false;  // the chunk before was an events chunk (EventStacks follow one)
    while (at < size) {
      if (size - at < format::kChunkHeaderSize) {
        cut = "trace cut at byte " + std::to_string(at) + ": only " + std::to_string(size - at) +
              " bytes of a chunk header remain";
        break;
      }
      format::ChunkHeader h = parse_chunk_header(at);
      if (h.magic != format::kChunkMagic) fail(at, "no chunk starts here (bad chunk magic)");
      if (h.header_hash != hash64(data + at, format::kChunkHashedSize)) fail(at, "chunk header checksum mismatch");
      if (end) fail(at, "chunk after the end record");
      if (h.stored_size > format::kMaxChunkBytes || h.raw_size > format::kMaxChunkBytes)
        fail(at, "chunk claims " + std::to_string(std::max(h.stored_size, h.raw_size)) + " bytes, over the limit");
      std::uint64_t payload = at + format::kChunkHeaderSize;
      if (size - payload < h.stored_size) {
        cut = "trace cut at byte " + std::to_string(size) + ": the chunk at byte " + std::to_string(at) + " needs " +
              std::to_string(h.stored_size) + " payload bytes, " + std::to_string(size - payload) + " remain";
        break;
      }
      if (h.payload_hash != hash64(data + payload, h.stored_size)) fail(payload, "chunk payload checksum mismatch");
      switch (h.type) {
        case format::ChunkType::Events:
          if (h.codec != format::Codec::Zstd && h.codec != format::Codec::ZstdFrames && h.codec != format::Codec::Raw)
            fail(at + 5, "unknown codec " + std::to_string(static_cast<int>(h.codec)));
          if (h.count == 0 || h.count > format::kMaxChunkEvents)
            fail(at + 12, "event count " + std::to_string(h.count) + " out of range");
          event_chunks.push_back({at, chunks, h, 0, {}, nullptr});
          events += h.count;
          thread_ids.insert(h.thread);
          after_events = true;
          ++chunks;
          at = payload + h.stored_size;
          continue;
        case format::ChunkType::Stacks:
          parse_stacks(at, h);
          break;
        case format::ChunkType::EventStacks: {
          ChunkRef* events_chunk = after_events ? &event_chunks.back() : nullptr;
          if (!events_chunk || events_chunk->h.thread != h.thread || events_chunk->h.count != h.count)
            fail(at, "event stacks chunk does not follow the events chunk of its thread and event count");
          events_chunk->stacks_offset = at;
          events_chunk->stacks_h = h;
          break;
        }
        case format::ChunkType::Modules:
          parse_modules(payload, h);
          break;
        case format::ChunkType::End:
          parse_end(payload, h);
          break;
        default:
          fail(at + 4, "unknown chunk type " + std::to_string(static_cast<int>(h.type)));
      }
      after_events = false;
      ++chunks;
      at = payload + h.stored_size;
    }
    for (ChunkRef& c : event_chunks) c.stack_ids = &stack_ids;
    if (cut.empty() && !end)
      cut = "trace cut at byte " + std::to_string(size) +
            ": no end record (the recorded process was killed or crashed); events after the last whole chunk are lost";
    threads = static_cast<std::uint32_t>(thread_ids.size());
    std::map<std::uint32_t, std::size_t> stream_of;
    for (std::size_t i = 0; i < event_chunks.size(); ++i) {
      auto [it, fresh] = stream_of.try_emplace(event_chunks[i].h.thread, streams.size());
      if (fresh) streams.emplace_back();
      streams[it->second].chunks.push_back(i);
    }
    reset_merge();
  }

  void parse_modules(std::uint64_t payload, const format::ChunkHeader& h) {
    if (h.codec != format::Codec::Raw) fail(payload - format::kChunkHeaderSize + 5, "module chunk must be raw");
    io::Cursor c(data + payload, data + payload + h.stored_size);
    for (std::uint32_t i = 0; i < h.count; ++i) {
      Module m;
      m.load_address = c.u64();
      m.start = c.u64();
      m.end = c.u64();
      m.time_ns = c.u64();
      m.path = c.sized_string();
      m.build_id = c.sized_string();
      if (!c.ok()) fail(payload, "module " + std::to_string(i) + " overruns its chunk");
      modules.push_back(std::move(m));
    }
  }

  // A Stacks chunk: each node merged into the table (equal paths of other
  // threads are one node), its writer's id mapped to the table's.
  void parse_stacks(std::uint64_t at, const format::ChunkHeader& h) {
    if (h.count == 0 || h.count > format::kMaxChunkEvents)
      fail(at + 12, "stack node count " + std::to_string(h.count) + " out of range");
    chunk_payload(path, data, at, h, stack_scratch, stack_payload);
    std::string why;
    if (!codec::decode_stack_nodes(stack_payload.data(), h.raw_size, h.count, stack_chunk, why))
      fail(at, "bad stack chunk: " + why);
    stack_nodes += h.count;
    // A recorder numbers nodes from one counter: ids beyond twice the nodes
    // read (and a margin) would only make the map large for nothing.
    const std::uint64_t most = 2 * stack_nodes + 65536;
    for (const StackNode& n : stack_chunk) {
      if (n.id > most)
        fail(at, "stack node id " + std::to_string(n.id) + " is far beyond the " + std::to_string(stack_nodes) +
                     " nodes read (ids are numbered from 1)");
      if (n.id >= stack_ids.size()) stack_ids.resize(std::max<std::size_t>(n.id + 1, 2 * stack_ids.size()), 0);
      if (stack_ids[n.id] != 0) fail(at, "stack node " + std::to_string(n.id) + " is defined twice");
      if (n.parent != 0 && stack_ids[n.parent] == 0)
        fail(at, "stack node " + std::to_string(n.id) + " names parent " + std::to_string(n.parent) +
                     ", which no stack chunk before it defines");
      stack_ids[n.id] = stacks.intern(stack_ids[n.parent], n.address);
    }
  }

  void parse_end(std::uint64_t payload, const format::ChunkHeader& h) {
    if (h.stored_size != format::kEndPayloadSize) fail(payload, "end record has the wrong size");
    io::Cursor c(data + payload, data + payload + h.stored_size);
    EndRecord e;
    e.reason = static_cast<EndReason>(c.u8());
    c.u8();
    c.u16();
    e.status = static_cast<std::int32_t>(c.u32());
    e.events = c.u64();
    e.dropped = c.u64();
    e.time_ns = c.u64();
    if (e.reason < EndReason::Exit || e.reason > EndReason::Exec) fail(payload, "end record has an unknown reason");
    end = e;
  }

  static Key key(Stream& st) noexcept {
    return {st.decoded() ? st.events[st.index].time_ns : 0, st.sequence, &st};
  }

  // Points a stream at its next chunk, undecoded; false if it has none left.
  bool next_chunk(Stream& st) {
    st.count = 0;
    st.index = 0;
    if (st.next == st.chunks.size()) return false;
    st.sequence = event_chunks[st.chunks[st.next]].sequence;
    return true;
  }
  Key chunk_key(Stream& st) const noexcept { return {event_chunks[st.chunks[st.next]].h.first_time_ns, st.sequence, &st}; }

  void drop_pipeline() {
    std::unique_lock l(pipeline_use);
    pipeline.reset();
  }

  bool help_decode() {
    std::shared_lock l(pipeline_use, std::try_to_lock);  // a rewind under way: nothing to help with
    return l.owns_lock() && pipeline && pipeline->help();
  }

  void reset_merge() {
    heap = {};
    current = nullptr;
    if (pipeline) {
      std::unique_lock l(pipeline_use);
      pipeline->reset();
    }
    for (Stream& st : streams) {
      st.next = 0;
      if (next_chunk(st)) heap.push(chunk_key(st));
    }
  }

  // The columns not decoded (codec::Skip): times only in a trace of one
  // thread, whose merge never compares them.
  unsigned skipped_columns() const noexcept {
    return (!want_times && threads <= 1 ? codec::kSkipTime : 0u) | (want_callsites ? 0u : codec::kSkipCallsite);
  }

  // Decodes the current stream's next chunk; the stream goes back into the
  // heap if its first event is later than another stream's.
  void decode(Stream& st) {
    if (!pipeline) {  // one chunk has nothing to decode ahead of
      auto made = std::make_unique<ChunkPipeline>(path, data, event_chunks,
                                                  event_chunks.size() > 1 ? decode_threads - 1 : 0, skipped_columns());
      std::unique_lock l(pipeline_use);
      pipeline = std::move(made);
    }
    const std::size_t chunk = st.chunks[st.next++];
    try {
      pipeline->take(chunk, st.events);
    } catch (...) {
      current = nullptr;  // the damaged thread's stream ends here
      throw;
    }
    st.count = event_chunks[chunk].h.count;
    yield_if_later(key(st));
  }

  // Threads are merged by time; each thread's own events keep their order.
  bool next(Event& e) {
    Stream* st = ready();
    if (!st) return false;
    e = st->events[st->index++];
    moved_on(*st);
    return true;
  }

  // The events next() would give in a row from the current stream: up to the
  // first one later than the earliest other stream, or the end of its chunk.
  std::size_t next_run(const Event*& first) {
    Stream* st = ready();
    if (!st) return 0;
    std::size_t stop = st->index + 1;
    if (heap.empty()) {
      stop = st->count;
    } else {
      const Key top = heap.top();
      while (stop < st->count && !later(Key{st->events[stop].time_ns, st->sequence, st}, top)) ++stop;
    }
    first = st->events.data() + st->index;
    const std::size_t n = stop - st->index;
    st->index = stop;
    moved_on(*st);
    return n;
  }

  // The stream whose event comes next, with its chunk decoded (nullptr: no event is left).
  Stream* ready() {
    for (;;) {
      if (!current) {
        if (heap.empty()) return nullptr;
        current = heap.top().stream;
        heap.pop();
      }
      if (current->decoded()) return current;
      decode(*current);
    }
  }

  // After events were taken from the current stream: its next chunk, or
  // another stream if one is now earlier, or none when it has ended.
  void moved_on(Stream& st) {
    if (st.decoded())
      yield_if_later(key(st));
    else if (next_chunk(st))
      yield_if_later(chunk_key(st));
    else
      current = nullptr;
  }

  // The current stream goes back into the heap if another one is now earlier.
  void yield_if_later(const Key& k) {
    if (!heap.empty() && later(k, heap.top())) {
      heap.push(k);
      current = nullptr;
    }
  }
};

Reader::Reader(const std::string& path) : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  impl_->open();
  std::uint64_t at = impl_->read_header();
  impl_->index(at);
}

Reader::~Reader() = default;

const std::string& Reader::path() const noexcept { return impl_->path; }
const Header& Reader::header() const noexcept { return impl_->header; }
const std::vector<Module>& Reader::modules() const noexcept { return impl_->modules; }
const std::optional<EndRecord>& Reader::end() const noexcept { return impl_->end; }
const std::string& Reader::cut() const noexcept { return impl_->cut; }
const StackTable& Reader::stacks() const noexcept { return impl_->stacks; }
std::uint64_t Reader::event_count() const noexcept { return impl_->events; }
std::uint32_t Reader::thread_count() const noexcept { return impl_->threads; }
std::uint64_t Reader::chunk_count() const noexcept { return impl_->chunks; }
std::uint64_t Reader::file_size() const noexcept { return impl_->size; }

bool Reader::next(Event& event) { return impl_->next(event); }
std::size_t Reader::next_run(const Event*& first) { return impl_->next_run(first); }
void Reader::rewind() { impl_->reset_merge(); }
bool Reader::help_decode() { return impl_->help_decode(); }

void Reader::set_decode_threads(unsigned threads) {
  impl_->decode_threads = threads == 0 ? default_decode_threads() : threads;
  impl_->drop_pipeline();
  impl_->reset_merge();
}

void Reader::set_columns(bool times, bool callsites) {
  impl_->want_times = times;
  impl_->want_callsites = callsites;
  impl_->drop_pipeline();
  impl_->reset_merge();
}

std::vector<Event> Reader::read_all() {
  rewind();
  std::vector<Event> all;
  all.reserve(impl_->events);
  Event e;
  while (next(e)) all.push_back(e);
  rewind();
  return all;
}

void require_every_call(const Reader& reader, const std::string& tool) {
  if (const std::uint64_t interval = reader.header().sample_interval; interval != 0)
    throw std::runtime_error(reader.path() + ": a sampled trace (record --sample " + std::to_string(interval) +
                             ": one allocation in about " + std::to_string(interval) + " bytes) cannot be used by " +
                             tool + ", which needs every call; record without --sample");
}

}  // namespace tailor::trace
