// SPDX-License-Identifier: MIT
// `tailor record [-o FILE] -- CMD ARGS...`: runs CMD with the recorder
// preloaded, waits for it, reports the trace files it left, and exits as CMD
// did (same status, or the same signal). CMD's own output is untouched: the
// recorder never writes to stdout, and this command reports on stderr.
#include <fmt/format.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <regex>

#include "cli/commands.h"
#include "layout/layout.h"
#include "tailor/trace/reader.h"

namespace fs = std::filesystem;

namespace tailor::cli {

namespace {

constexpr int kDefaultStackDepth = 64;

struct RecordOptions {
  std::string output = "tailor.trace";
  int zstd_level = 3;  // the writer thread drops to a fast level when it falls behind
  bool quiet = false;
  bool verbose = false;
  int stacks = 0;                 // frames per stack; 0: the call site alone
  std::string unwind = "dwarf";   // or "libunwind", "fp"
  std::uint64_t sample = 0;       // mean bytes between sampled allocations; 0: every call
  bool unwind_given = false;
  std::uint64_t sample_seed = 0;  // 0: a seed of its own each run
  std::vector<std::string> command;
};

// FILE.<pid> and FILE.<pid>.<n>: the names other processes of the tree use.
std::vector<fs::path> trace_files(const fs::path& output) {
  std::vector<fs::path> files;
  if (fs::exists(output)) files.push_back(output);
  fs::path dir = output.parent_path().empty() ? fs::path(".") : output.parent_path();
  std::string base = output.filename().string();
  std::vector<fs::path> others;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    if (name.size() <= base.size() + 1 || name.compare(0, base.size() + 1, base + ".") != 0) continue;
    static const std::regex suffix(R"(\d+(\.\d+)?)");
    if (std::regex_match(name.substr(base.size() + 1), suffix)) others.push_back(entry.path());
  }
  std::sort(others.begin(), others.end());
  files.insert(files.end(), others.begin(), others.end());
  return files;
}

struct FileSummary {
  fs::path file;
  std::string line;
  std::uint64_t events = 0;
  std::uint64_t bytes = 0;
};

FileSummary summarize(const fs::path& file) {
  FileSummary s{file, {}, 0, 0};
  try {
    trace::Reader r(file.string());
    s.events = r.event_count();
    s.bytes = r.file_size();
    double per_event = s.events ? static_cast<double>(s.bytes) / static_cast<double>(s.events) : 0;
    std::string cmd = r.header().command_line.empty() ? r.header().executable : r.header().command_line[0];
    s.line = fmt::format("{}: pid {} ({}), {} events, {} threads, {} bytes ({:.2f} bytes/event)", file.string(),
                         r.header().pid, cmd, s.events, r.thread_count(), s.bytes, per_event);
    if (!r.complete()) s.line += "\n  " + r.cut();
  } catch (const std::exception& e) {
    s.line = e.what();
  }
  return s;
}

// One line per file for a small process tree; for a large one (shell scripts
// fork and exec a lot), the command's own file, the largest others, and totals.
void report(const std::vector<fs::path>& files, bool verbose) {
  std::vector<FileSummary> all;
  for (const auto& f : files) all.push_back(summarize(f));
  constexpr std::size_t kListed = 4;
  if (verbose || all.size() <= kListed + 1) {
    for (const auto& s : all) fmt::print(stderr, "tailor record: {}\n", s.line);
    return;
  }
  fmt::print(stderr, "tailor record: {}\n", all.front().line);
  std::vector<FileSummary> rest(all.begin() + 1, all.end());
  std::sort(rest.begin(), rest.end(), [](const auto& a, const auto& b) { return a.events > b.events; });
  std::uint64_t events = 0, bytes = 0;
  for (const auto& s : rest) {
    events += s.events;
    bytes += s.bytes;
  }
  for (std::size_t i = 0; i < kListed; ++i) fmt::print(stderr, "tailor record: {}\n", rest[i].line);
  fmt::print(stderr, "tailor record: {} more processes in {}.*: {} events, {} bytes in all (--verbose lists them)\n",
             rest.size() - kListed, all.front().file.string(), events, bytes);
}

int record(const RecordOptions& o) {
  if (o.sample_seed && o.sample == 0) throw CLI::ValidationError("--sample-seed", "needs --sample");
  if (o.unwind_given && o.stacks == 0 && o.sample == 0)
    throw CLI::ValidationError("--unwind", "needs --stacks or --sample (the call site alone needs no unwinding)");
  if (o.command.empty()) throw std::runtime_error("record: no command given (usage: tailor record -o FILE -- CMD ARGS...)");
  fs::path recorder = fs::canonical(layout::find(layout::Item::kRecorder));
  fs::path output = fs::absolute(o.output);
  fs::path dir = output.parent_path();
  if (!fs::is_directory(dir))
    throw std::runtime_error("record: cannot write " + output.string() + ": " + dir.string() + " is not a directory");
  if (access(dir.c_str(), W_OK | X_OK) != 0)
    throw std::runtime_error("record: cannot write in " + dir.string() + ": " + std::strerror(errno));
  for (const auto& stale : trace_files(output)) fs::remove(stale);

  std::string preload = recorder.string();
  if (const char* old = std::getenv("LD_PRELOAD"); old && *old) preload += std::string(":") + old;

  pid_t child = fork();
  if (child < 0) throw std::runtime_error(std::string("record: fork failed: ") + std::strerror(errno));
  if (child == 0) {
    setenv("LD_PRELOAD", preload.c_str(), 1);
    setenv("TAILOR_RECORD_OUTPUT", output.c_str(), 1);
    setenv("TAILOR_RECORD_ROOT_PID", std::to_string(getpid()).c_str(), 1);
    setenv("TAILOR_RECORD_ZSTD_LEVEL", std::to_string(o.zstd_level).c_str(), 1);
    if (o.sample > 0) {
      setenv("TAILOR_RECORD_SAMPLE", std::to_string(o.sample).c_str(), 1);
      if (o.sample_seed) setenv("TAILOR_RECORD_SEED", std::to_string(o.sample_seed).c_str(), 1);
      else unsetenv("TAILOR_RECORD_SEED");
    } else {
      unsetenv("TAILOR_RECORD_SAMPLE");
    }
    if (const int depth = o.stacks > 0 ? o.stacks : o.sample > 0 ? kDefaultStackDepth : 0; depth > 0) {
      setenv("TAILOR_RECORD_STACKS", std::to_string(depth).c_str(), 1);
      setenv("TAILOR_RECORD_UNWIND", o.unwind.c_str(), 1);
    } else {
      unsetenv("TAILOR_RECORD_STACKS");
    }
    std::vector<char*> argv;
    for (const auto& a : o.command) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    fmt::print(stderr, "tailor record: cannot run {}: {}\n", o.command[0], std::strerror(errno));
    _exit(errno == ENOENT ? 127 : 126);
  }

  // Like time(1): the terminal's signals go to the child; we stay to report.
  struct sigaction ignore {}, old_int {}, old_quit {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ignore, &old_int);
  sigaction(SIGQUIT, &ignore, &old_quit);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);

  if (!o.quiet) report(trace_files(output), o.verbose);

  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    if (!o.quiet) fmt::print(stderr, "tailor record: {} was killed by signal {} ({})\n", o.command[0], sig, strsignal(sig));
    struct rlimit no_core {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, nullptr);
    raise(sig);
    return 128 + sig;
  }
  return WEXITSTATUS(status);
}

}  // namespace

void add_record(CLI::App& app, Runner& run) {
  auto [cmd, o] =
      add_command<RecordOptions>(app, run, "record", "Run a command and record every heap allocation it makes", record);
  cmd->add_option("-o,--output", o->output, "Trace file of the command's process; other processes of its tree write "
                                            "FILE.<pid> (default: tailor.trace)");
  cmd->add_option("--zstd-level", o->zstd_level, "zstd level of trace chunks while the recorder's writer keeps up with the program; when it falls behind it steps to faster levels (1, -1, -5, -10)")
      ->check(CLI::Range(-7, 19))
      ->capture_default_str();
  cmd->add_flag("--stacks{" + std::to_string(kDefaultStackDepth) + "}", o->stacks,
                "Record each call's whole stack (its innermost DEPTH frames, default 64, at most 1024), stored "
                "once per distinct stack; without it, the call site alone")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--unwind", o->unwind,
                  "With --stacks or --sample: 'dwarf' (each return address's DWARF call-frame rule, read once; right "
                  "for any code), 'libunwind' (libunwind's unw_backtrace, the same rules, slower) or 'fp' (the "
                  "frame-pointer chain: right only for code built with -fno-omit-frame-pointer)")
      ->check(CLI::IsMember({"dwarf", "libunwind", "fp"}))
      ->each([o = o.get()](const std::string&) { o->unwind_given = true; })
      ->capture_default_str();
  cmd->add_option("--sample", o->sample,
                  "Record a sample: an allocation is kept with probability 1 - exp(-size / BYTES) (a mean of one "
                  "per BYTES allocated, the rule of tcmalloc's and jemalloc's heap profilers; 512K is jemalloc's "
                  "default), with its whole stack (--stacks' default depth unless --stacks says otherwise) and its "
                  "release; stats and report estimate the totals from it. Cheap enough to leave on; such a trace "
                  "cannot be simulated or replayed")
      ->transform(CLI::AsSizeValue(false))
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 40))
      ->type_name("BYTES");
  cmd->add_option("--sample-seed", o->sample_seed,
                  "With --sample: the seed of the sampling intervals, for a sample that a run of the same program "
                  "makes again (default: a new one each run)")
      ->check(CLI::Range(std::uint64_t{1}, std::numeric_limits<std::uint64_t>::max()));
  cmd->add_flag("-q,--quiet", o->quiet, "Do not report the trace files at the end");
  cmd->add_flag("-v,--verbose", o->verbose, "Report every trace file of the process tree");
  cmd->add_option("command", o->command, "The command to run, after --")->required();
  cmd->positionals_at_end();
  cmd->footer("Example: tailor record -o ls.trace -- ls -l /\n"
              "The command runs unchanged: its output and exit status are its own.");
}

}  // namespace tailor::cli
