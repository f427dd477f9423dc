// SPDX-License-Identifier: MIT
// `tailor dump TRACE`: the trace as text, one event per line, for people and
// for diffs. The header lines start with '#', so `grep -v '^#'` leaves events.
#include <fmt/format.h>

#include "commands.h"
#include "tailor/trace/reader.h"

namespace tailor::cli {

namespace {

struct DumpOptions {
  std::string trace;
  bool no_time = false;
  bool no_header = false;
};

void print_event(std::string& line, const trace::Event& e, std::uint64_t t0, bool no_time) {
  line.clear();
  if (!no_time) fmt::format_to(std::back_inserter(line), "{:>15} ", e.time_ns - t0);
  fmt::format_to(std::back_inserter(line), "T{:<3} {:<22}", e.thread, trace::describe_kind(e));
  using trace::Op;
  switch (e.op) {
    case Op::Malloc: case Op::New:
      fmt::format_to(std::back_inserter(line), " size={} -> {:#x}", e.size, e.address);
      if (e.aux) fmt::format_to(std::back_inserter(line), " align={}", e.aux);
      break;
    case Op::Calloc:
      fmt::format_to(std::back_inserter(line), " count={} elem={} -> {:#x}", e.size, e.aux, e.address);
      break;
    case Op::Realloc:
      fmt::format_to(std::back_inserter(line), " {:#x} size={} -> {:#x}", e.aux, e.size, e.address);
      break;
    case Op::Memalign: case Op::PosixMemalign: case Op::AlignedAlloc: case Op::Valloc: case Op::Pvalloc:
      fmt::format_to(std::back_inserter(line), " size={} align={} -> {:#x}", e.size, e.aux, e.address);
      break;
    case Op::Free: case Op::Delete:
      fmt::format_to(std::back_inserter(line), " {:#x}", e.address);
      if (e.flags & trace::kSized) fmt::format_to(std::back_inserter(line), " size={}", e.size);
      if (e.flags & trace::kAligned) fmt::format_to(std::back_inserter(line), " align={}", e.aux);
      break;
    case Op::ThreadStart:
      fmt::format_to(std::back_inserter(line), " tid={}", e.size);
      break;
    case Op::ThreadExit:
      break;
  }
  if (e.callsite) fmt::format_to(std::back_inserter(line), " @{:#x}", e.callsite);
  line += '\n';
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
  std::string line;
  trace::Event e;
  while (r.next(e)) {
    print_event(line, e, h.start_monotonic_ns, o.no_time);
    std::fwrite(line.data(), 1, line.size(), stdout);
  }
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
