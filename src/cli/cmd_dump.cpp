// SPDX-License-Identifier: MIT
// `tailor dump TRACE`: the trace as text, one event per line, for people and
// for diffs. The header lines start with '#', so `grep -v '^#'` leaves events.
// Lines are formatted field by field into large buffers that go out by
// fwrite: no iostreams, no format string parsed per field, no allocation per
// line; blocks of events are formatted on every core and written in order,
// so a dump runs near the speed of reading.
#include <fmt/format.h>

#include <unistd.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.h"
#include "cli/exit_status.h"
#include "tailor/trace/reader.h"

namespace tailor::cli {

namespace {

struct DumpOptions {
  std::string trace;
  bool no_time = false;
  bool no_header = false;
};

// Every operation's name with every flag combination, made once.
class KindNames {
 public:
  KindNames() {
    for (unsigned op = 1; op <= trace::kMaxOp; ++op)
      for (unsigned flags = 0; flags < 16; ++flags) {
        trace::Event e;
        e.op = static_cast<trace::Op>(op);
        e.flags = static_cast<std::uint8_t>(flags);
        names_[op][flags] = trace::describe_kind(e);
      }
  }
  /// The kind's name; flags the format does not define yet are described
  /// into `scratch` (one per formatting thread).
  const std::string& name(const trace::Event& e, std::string& scratch) const {
    if (e.flags < 16) return names_[static_cast<unsigned>(e.op)][e.flags];
    scratch = trace::describe_kind(e);
    return scratch;
  }

 private:
  std::array<std::array<std::string, 16>, trace::kMaxOp + 1> names_;
};

#if defined(__SSE2__)
// The sixteen hex digits of x, most significant first, in the bytes of a
// vector: the bytes of x (most significant first) split into high and low
// nibbles, interleaved, and '0' or 'a' - 10 added to each.
[[gnu::always_inline]] inline __m128i hex16(std::uint64_t x) {
  const __m128i bytes = _mm_cvtsi64_si128(static_cast<long long>(__builtin_bswap64(x)));
  const __m128i low4 = _mm_set1_epi8(0x0f);
  const __m128i nibbles = _mm_unpacklo_epi8(_mm_and_si128(_mm_srli_epi16(bytes, 4), low4), _mm_and_si128(bytes, low4));
  const __m128i letters = _mm_and_si128(_mm_cmpgt_epi8(nibbles, _mm_set1_epi8(9)), _mm_set1_epi8('a' - '0' - 10));
  return _mm_add_epi8(_mm_add_epi8(nibbles, _mm_set1_epi8('0')), letters);
}
#else
// The eight hex digits of x, most significant first, as the bytes of a
// little-endian word: each nibble spread into a byte of its own, then '0' or
// 'a' - 10 added to each byte (bytes of 10 and more get a carry into bit 4).
constexpr std::uint64_t hex8(std::uint32_t x) {
  std::uint64_t n = x;
  n = ((n & 0xffff0000ULL) << 16) | (n & 0x0000ffffULL);
  n = ((n & 0x0000ff000000ff00ULL) << 8) | (n & 0x000000ff000000ffULL);
  n = ((n & 0x00f000f000f000f0ULL) << 4) | (n & 0x000f000f000f000fULL);
  // n's byte k is nibble k (byte 0 the lowest nibble).
  const std::uint64_t letters = ((n + 0x0606060606060606ULL) >> 4) & 0x0101010101010101ULL;
  n += 0x3030303030303030ULL + letters * ('a' - '0' - 10);
  return __builtin_bswap64(n);  // the highest nibble first in memory
}
#endif
static_assert(std::endian::native == std::endian::little, "the hex digits are laid out little-endian");

// Appends one line's fields to a buffer with room for the longest line;
// numbers go in by fmt::format_int and hex16, not by parsing a format
// string per field. Every method is inlined into print_event, so that the
// end pointer stays in a register: a Line reached through a pointer would
// be reloaded after every store of a char, which may alias it.
class Line {
 public:
  static constexpr std::size_t kMaxLine = 512;  // kind name (< 64), eight 64-bit numbers with their labels, 16 bytes of slack

  explicit Line(char* at) : p_(at) {}
  char* end() const { return p_; }

  [[gnu::always_inline]] void text(std::string_view s) {
    std::memcpy(p_, s.data(), s.size());
    p_ += s.size();
  }
  template <std::size_t N>
  [[gnu::always_inline]] void text(const char (&s)[N]) {  // a literal: a copy of known length
    std::memcpy(p_, s, N - 1);
    p_ += N - 1;
  }
  [[gnu::always_inline]] void dec(std::uint64_t v) {
    const fmt::format_int f(v);
    text(std::string_view{f.data(), f.size()});
  }
  [[gnu::always_inline]] void dec_right(std::uint64_t v, std::size_t width) {
    const fmt::format_int f(v);
    pad(width, f.size());
    text(std::string_view{f.data(), f.size()});
  }
  [[gnu::always_inline]] void dec_left(std::uint64_t v, std::size_t width) {
    const fmt::format_int f(v);
    text(std::string_view{f.data(), f.size()});
    pad(width, f.size());
  }
  [[gnu::always_inline]] void text_left(std::string_view s, std::size_t width) {
    text(s);
    pad(width, s.size());
  }
  template <std::size_t N>
  [[gnu::always_inline]] void dec_field(const char (&label)[N], std::uint64_t v) {  // " size=4096"
    text(label);
    dec(v);
  }
  template <std::size_t N>
  [[gnu::always_inline]] void hex_field(const char (&label)[N], std::uint64_t v) {  // " -> 0x1000"
    text(label);
    hex(v);
  }
  [[gnu::always_inline]] void hex(std::uint64_t v) {  // as {:#x}
    std::memcpy(p_, "0x", 2);
    p_ += 2;
    const auto digits = static_cast<std::size_t>(v == 0 ? 1 : (64 - __builtin_clzll(v) + 3) / 4);
    // The digits without their leading zeros, stored by whole words (the
    // line has room): no store is read back, so nothing waits on store
    // forwarding.
#if defined(__SSE2__)
    const __m128i all = hex16(v);
    const auto high = static_cast<std::uint64_t>(_mm_cvtsi128_si64(all));  // digits 0-7
    const auto low = static_cast<std::uint64_t>(_mm_cvtsi128_si64(_mm_unpackhi_epi64(all, all)));  // digits 8-15
#else
    const std::uint64_t high = hex8(static_cast<std::uint32_t>(v >> 32)), low = hex8(static_cast<std::uint32_t>(v));
#endif
    if (digits > 8) {
      const std::uint64_t first = high >> (8 * (16 - digits));  // digits - 8 of its bytes kept
      std::memcpy(p_, &first, 8);
      std::memcpy(p_ + digits - 8, &low, 8);
    } else {
      const std::uint64_t only = low >> (8 * (8 - digits));
      std::memcpy(p_, &only, 8);
    }
    p_ += digits;
  }

 private:
  [[gnu::always_inline]] void pad(std::size_t width, std::size_t used) {
    if (used < width) {
      std::memset(p_, ' ', width - used);
      p_ += width - used;
    }
  }
  char* p_;
};

// Formats one event at `at` (Line::kMaxLine bytes free); returns the end of the line.
char* print_event(char* at, const trace::Event& e, const std::string& kind, std::uint64_t t0, bool no_time) {
  Line l(at);
  if (!no_time) {
    l.dec_right(e.time_ns - t0, 15);
    l.text(" ");
  }
  l.text("T");
  l.dec_left(e.thread, 3);
  l.text(" ");
  l.text_left(kind, 22);
  using trace::Op;
  switch (e.op) {
    case Op::Malloc: case Op::New:
      l.dec_field(" size=", e.size);
      l.hex_field(" -> ", e.address);
      if (e.aux) l.dec_field(" align=", e.aux);
      break;
    case Op::Calloc:
      l.dec_field(" count=", e.size);
      l.dec_field(" elem=", e.aux);
      l.hex_field(" -> ", e.address);
      break;
    case Op::Realloc:
      l.hex_field(" ", e.aux);
      l.dec_field(" size=", e.size);
      l.hex_field(" -> ", e.address);
      break;
    case Op::Memalign: case Op::PosixMemalign: case Op::AlignedAlloc: case Op::Valloc: case Op::Pvalloc:
      l.dec_field(" size=", e.size);
      l.dec_field(" align=", e.aux);
      l.hex_field(" -> ", e.address);
      break;
    case Op::Free: case Op::Delete:
      l.hex_field(" ", e.address);
      if (e.flags & trace::kSized) l.dec_field(" size=", e.size);
      if (e.flags & trace::kAligned) l.dec_field(" align=", e.aux);
      break;
    case Op::ThreadStart:
      l.dec_field(" tid=", e.size);
      break;
    case Op::ThreadExit:
      break;
  }
  if (e.callsite) l.hex_field(" @", e.callsite);
  l.text("\n");
  return l.end();
}

// Writes a formatted block straight to standard output (stdout's buffer is
// flushed before the first block): a copy through stdio would cost as much
// as a tenth of the dump.
void flush(const char* begin, const char* end) {
  while (begin < end) {
    const ssize_t n = ::write(STDOUT_FILENO, begin, static_cast<std::size_t>(end - begin));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error(std::string("cannot write the dump to standard output: ") + std::strerror(errno));
    begin += n;
  }
}

// The events formatted on every core, in the order read: the calling thread
// reads the merged stream into blocks of kBlockEvents events; each
// formatting thread takes the next filled block, formats it into the
// block's own text buffer, and writes it when every earlier block has been
// written (blocks go out by number). A ring of blocks bounds the memory.
class ParallelFormatter {
 public:
  static constexpr std::size_t kBlockEvents = 8192;

  ParallelFormatter(const KindNames& kinds, std::uint64_t t0, bool no_time, unsigned threads)
      : kinds_(kinds), t0_(t0), no_time_(no_time), ring_(2 * threads + 2) {
    for (Block& b : ring_) {
      b.events.reserve(kBlockEvents);
      b.text = std::make_unique_for_overwrite<char[]>(kBlockEvents * Line::kMaxLine);  // pages touched as lines fill them
    }
    for (unsigned i = 0; i < threads; ++i) workers_.emplace_back([this] { work(); });
  }
  ~ParallelFormatter() { finish(); }

  /// Every event of `reader`, formatted and written in order. An Error of the
  /// reader propagates once the events before it are written.
  void run(trace::Reader& reader) {
    std::exception_ptr read_error;
    Block* b = next_free();
    try {
      const trace::Event* first = nullptr;
      while (b) {
        const std::size_t n = reader.next_run(first);
        if (n == 0) break;
        for (std::size_t i = 0; i < n;) {
          const std::size_t take = std::min(n - i, kBlockEvents - b->events.size());
          b->events.insert(b->events.end(), first + i, first + i + take);
          i += take;
          if (b->events.size() == kBlockEvents) {
            publish();
            b = next_free();
            if (!b) break;  // a writer failed
          }
        }
      }
      if (b && !b->events.empty()) publish();
    } catch (...) {
      read_error = std::current_exception();
      if (b && !b->events.empty()) publish();
    }
    finish();
    if (write_error_) std::rethrow_exception(write_error_);
    if (read_error) std::rethrow_exception(read_error);
  }

 private:
  struct Block {
    std::vector<trace::Event> events;
    std::unique_ptr<char[]> text;
    bool busy = false;  // filled and not yet written
  };

  // The block to fill next, once its last use is written; nullptr if a writer failed.
  Block* next_free() {
    std::unique_lock lock(mutex_);
    Block& b = ring_[filled_ % ring_.size()];
    freed_.wait(lock, [&] { return !b.busy || write_error_; });
    if (write_error_) return nullptr;
    b.events.clear();
    return &b;
  }

  void publish() {
    {
      std::lock_guard lock(mutex_);
      ring_[filled_ % ring_.size()].busy = true;
      ++filled_;
    }
    filled_cv_.notify_one();
  }

  void finish() {
    {
      std::lock_guard lock(mutex_);
      if (done_) return;
      done_ = true;
    }
    filled_cv_.notify_all();
    for (std::thread& t : workers_) t.join();
  }

  void work() {
    std::string scratch;
    for (;;) {
      std::uint64_t number;
      {
        std::unique_lock lock(mutex_);
        filled_cv_.wait(lock, [&] { return taken_ < filled_ || done_; });
        if (taken_ == filled_) return;  // done, and every block taken
        number = taken_++;
      }
      Block& b = ring_[number % ring_.size()];
      char* const begin = b.text.get();
      char* end = begin;
      for (const trace::Event& e : b.events) end = print_event(end, e, kinds_.name(e, scratch), t0_, no_time_);
      {
        std::unique_lock lock(mutex_);
        written_cv_.wait(lock, [&] { return written_ == number; });
      }
      // Only this thread writes now: the next block waits for written_ to move.
      std::exception_ptr error;
      if (!write_error_) {
        try {
          flush(begin, end);
        } catch (...) {
          error = std::current_exception();
        }
      }
      {
        std::lock_guard lock(mutex_);
        if (error) write_error_ = error;
        b.busy = false;
        ++written_;
      }
      written_cv_.notify_all();
      freed_.notify_one();
    }
  }

  const KindNames& kinds_;
  const std::uint64_t t0_;
  const bool no_time_;
  std::vector<Block> ring_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable filled_cv_, written_cv_, freed_;
  std::uint64_t filled_ = 0;   // blocks handed to the workers
  std::uint64_t taken_ = 0;    // blocks a worker has started on
  std::uint64_t written_ = 0;  // blocks written, in order
  bool done_ = false;
  std::exception_ptr write_error_;
};

int dump(const DumpOptions& o) {
  trace::Reader r(o.trace);
  const trace::Header& h = r.header();
  if (!o.no_header) {
    fmt::print("# tailor trace version {}, {}-bit, page size {}\n", h.version, h.pointer_bytes * 8, h.page_size);
    fmt::print("# pid {} ppid {} executable {}\n", h.pid, h.ppid, h.executable);
    std::string cmd;
    for (const auto& a : h.command_line) cmd += (cmd.empty() ? "" : " ") + a;
    fmt::print("# command {}\n", cmd);
    if (h.sample_interval)
      fmt::print("# sampled: an allocation of n bytes is here with probability 1 - exp(-n / {}) (record --sample)\n",
                 h.sample_interval);
    fmt::print("# {} events in {} chunks, {} threads, {} bytes\n", r.event_count(), r.chunk_count(), r.thread_count(),
               r.file_size());
    for (const auto& m : r.modules())
      fmt::print("# module {:#x}-{:#x} load {:#x} {}{}{}\n", m.start, m.end, m.load_address, m.path,
                 m.build_id.empty() ? "" : " build-id ", m.build_id);
  }
  std::fflush(stdout);  // the header before the events, which the workers write
  const KindNames kinds;
  ParallelFormatter(kinds, h.start_monotonic_ns, o.no_time, std::max(1u, std::thread::hardware_concurrency())).run(r);
  if (!o.no_header) {
    if (const auto& end = r.end()) {
      static const char* const reasons[] = {"", "exit", "_exit", "abort", "exec"};
      fmt::print("# end: {} status {}, {} events written, {} dropped\n", reasons[static_cast<int>(end->reason)],
                 end->status, end->events, end->dropped);
    }
  }
  return exit_status(r, "dump");
}

}  // namespace

void add_dump(CLI::App& app, Runner& run) {
  auto [cmd, o] =
      add_trace_command<DumpOptions>(app, run, "dump", "Print a trace's events as text, one per line", dump);
  cmd->add_flag("--no-time", o->no_time, "Omit timestamps (stable output for diffs)");
  cmd->add_flag("--no-header", o->no_header, "Omit the '#' lines describing the process");
}

}  // namespace tailor::cli
