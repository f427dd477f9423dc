// SPDX-License-Identifier: MIT
// `tailor dump TRACE`: the trace as text, one event per line, for people and
// for diffs. The header lines start with '#', so `grep -v '^#'` leaves events.
// Lines are formatted with fmt's compiled formats into one large buffer that
// goes out by fwrite when full: no iostreams, no allocation per line, so a
// dump runs near the speed of reading.
#include <fmt/compile.h>
#include <fmt/format.h>

#include <array>
#include <cstdio>
#include <stdexcept>
#include <string>

#include "commands.h"
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
  const std::string& operator[](const trace::Event& e) const {
    if (e.flags < 16) return names_[static_cast<unsigned>(e.op)][e.flags];
    other_ = trace::describe_kind(e);  // flags the format does not define yet
    return other_;
  }

 private:
  std::array<std::array<std::string, 16>, trace::kMaxOp + 1> names_;
  mutable std::string other_;
};

using Out = fmt::memory_buffer;

void print_event(Out& out, const trace::Event& e, const std::string& kind, std::uint64_t t0, bool no_time) {
  auto it = std::back_inserter(out);
  if (!no_time) fmt::format_to(it, FMT_COMPILE("{:>15} "), e.time_ns - t0);
  fmt::format_to(it, FMT_COMPILE("T{:<3} {:<22}"), e.thread, kind);
  using trace::Op;
  switch (e.op) {
    case Op::Malloc: case Op::New:
      fmt::format_to(it, FMT_COMPILE(" size={} -> {:#x}"), e.size, e.address);
      if (e.aux) fmt::format_to(it, FMT_COMPILE(" align={}"), e.aux);
      break;
    case Op::Calloc:
      fmt::format_to(it, FMT_COMPILE(" count={} elem={} -> {:#x}"), e.size, e.aux, e.address);
      break;
    case Op::Realloc:
      fmt::format_to(it, FMT_COMPILE(" {:#x} size={} -> {:#x}"), e.aux, e.size, e.address);
      break;
    case Op::Memalign: case Op::PosixMemalign: case Op::AlignedAlloc: case Op::Valloc: case Op::Pvalloc:
      fmt::format_to(it, FMT_COMPILE(" size={} align={} -> {:#x}"), e.size, e.aux, e.address);
      break;
    case Op::Free: case Op::Delete:
      fmt::format_to(it, FMT_COMPILE(" {:#x}"), e.address);
      if (e.flags & trace::kSized) fmt::format_to(it, FMT_COMPILE(" size={}"), e.size);
      if (e.flags & trace::kAligned) fmt::format_to(it, FMT_COMPILE(" align={}"), e.aux);
      break;
    case Op::ThreadStart:
      fmt::format_to(it, FMT_COMPILE(" tid={}"), e.size);
      break;
    case Op::ThreadExit:
      break;
  }
  if (e.callsite) fmt::format_to(it, FMT_COMPILE(" @{:#x}"), e.callsite);
  out.push_back('\n');
}

void flush(Out& out) {
  if (out.size() != 0 && std::fwrite(out.data(), 1, out.size(), stdout) != out.size())
    throw std::runtime_error("cannot write the dump to standard output");
  out.clear();
}

int dump(const DumpOptions& o) {
  trace::Reader r(o.trace);
  const trace::Header& h = r.header();
  if (!o.no_header) {
    fmt::print("# tailor trace version {}, {}-bit, page size {}\n", h.version, h.pointer_bytes * 8, h.page_size);
    fmt::print("# pid {} ppid {} executable {}\n", h.pid, h.ppid, h.executable);
    std::string cmd;
    for (const auto& a : h.command_line) cmd += (cmd.empty() ? "" : " ") + a;
    fmt::print("# command {}\n", cmd);
    fmt::print("# {} events in {} chunks, {} threads, {} bytes\n", r.event_count(), r.chunk_count(), r.thread_count(),
               r.file_size());
    for (const auto& m : r.modules())
      fmt::print("# module {:#x}-{:#x} load {:#x} {}{}{}\n", m.start, m.end, m.load_address, m.path,
                 m.build_id.empty() ? "" : " build-id ", m.build_id);
  }
  constexpr std::size_t kFlushAt = 1 << 20;
  Out out;
  out.reserve(kFlushAt + 4096);
  const KindNames kinds;
  trace::Event e;
  while (r.next(e)) {
    print_event(out, e, kinds[e], h.start_monotonic_ns, o.no_time);
    if (out.size() >= kFlushAt) flush(out);
  }
  flush(out);
  if (!o.no_header) {
    if (const auto& end = r.end()) {
      static const char* const reasons[] = {"", "exit", "_exit", "abort", "exec"};
      fmt::print("# end: {} status {}, {} events written, {} dropped\n", reasons[static_cast<int>(end->reason)],
                 end->status, end->events, end->dropped);
    }
  }
  if (!r.complete()) fmt::print(stderr, "tailor dump: {}: {}\n", o.trace, r.cut());
  return 0;
}

}  // namespace

void add_dump(CLI::App& app, Runner& run) {
  auto o = std::make_shared<DumpOptions>();
  CLI::App* cmd = app.add_subcommand("dump", "Print a trace's events as text, one per line");
  cmd->add_option("trace", o->trace, "Trace file")->required();
  cmd->add_flag("--no-time", o->no_time, "Omit timestamps (stable output for diffs)");
  cmd->add_flag("--no-header", o->no_header, "Omit the '#' lines describing the process");
  cmd->callback([o, &run] { run = [o] { return dump(*o); }; });
}

}  // namespace tailor::cli
