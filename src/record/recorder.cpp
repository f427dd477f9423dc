// SPDX-License-Identifier: MIT
// The recording engine; see recorder.h for the concurrency contract.
//
// Locks, always taken in this order and never on the hot path:
//   modules_mu  - one module scan at a time (tried, never waited for)
//   registry_mu - the list of live thread logs and the pool of free ones
//   writer_mu   - the trace writer and its file descriptor
// fork() takes all three (pthread_atfork) so the child inherits them free.
#include "recorder.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "module_map.h"
#include "output_file.h"
#include "real_functions.h"
#include "tailor/trace/writer.h"

namespace tailor::record {

__thread ThreadState tls __attribute__((tls_model("initial-exec"))) = {nullptr, 0, 0};
std::atomic<State> state{State::Uninitialized};

namespace {

using trace::EndReason;
using trace::Event;
using trace::Op;

pthread_mutex_t modules_mu = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t registry_mu = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t writer_mu = PTHREAD_MUTEX_INITIALIZER;
pthread_once_t init_once = PTHREAD_ONCE_INIT;
pthread_key_t exit_key;

trace::Writer writer;
int trace_fd = -1;
pid_t recorder_pid = 0;
char trace_path[4096];
char executable[4096];
char command_line[1 << 16];
std::size_t command_line_size = 0;

ThreadLog* live_logs = nullptr;   // registry_mu
ThreadLog* free_logs = nullptr;   // registry_mu
std::atomic<std::uint32_t> next_thread{0};
std::atomic<std::uint64_t> written_events{0};
std::atomic<std::uint64_t> dropped_events{0};

int exit_status = 0;  // from on_exit, for the end record written by the destructor

struct Locked {
  explicit Locked(pthread_mutex_t& m) noexcept : m_(m) { pthread_mutex_lock(&m_); }
  ~Locked() { pthread_mutex_unlock(&m_); }
  Locked(const Locked&) = delete;
  Locked& operator=(const Locked&) = delete;
  pthread_mutex_t& m_;
};

void complain(const char* what, int err) noexcept {
  char msg[4096 + 256];
  int n = std::snprintf(msg, sizeof msg, "tailor-record: %s %s: %s; recording stops\n", what, trace_path,
                        std::strerror(err));
  if (n > 0) {
    ssize_t ignored = ::write(STDERR_FILENO, msg, static_cast<std::size_t>(n) < sizeof msg ? static_cast<std::size_t>(n) : sizeof msg - 1);
    (void)ignored;
  }
}

void read_process_identity() noexcept {
  ssize_t n = readlink("/proc/self/exe", executable, sizeof executable - 1);
  executable[n > 0 ? n : 0] = '\0';
  command_line_size = 0;
  int fd = ::open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    for (;;) {
      ssize_t r = ::read(fd, command_line + command_line_size, sizeof command_line - command_line_size);
      if (r <= 0) break;
      command_line_size += static_cast<std::size_t>(r);
      if (command_line_size == sizeof command_line) break;
    }
    ::close(fd);
  }
  while (command_line_size > 0 && command_line[command_line_size - 1] == '\0') --command_line_size;
}

// Writes modules not yet in this file. Skips if another thread is scanning.
void report_modules(bool wait) noexcept {
  if (wait ? pthread_mutex_lock(&modules_mu) != 0 : pthread_mutex_trylock(&modules_mu) != 0) return;
  static trace::ModuleFields batch[128];
  std::uint64_t t = now_ns();
  for (;;) {
    std::size_t n = scan_new_modules(batch, 128, t, executable);
    if (n == 0) break;
    Locked w(writer_mu);
    if (state.load(std::memory_order_relaxed) == State::Active || state.load() == State::Initializing)
      writer.write_modules(batch, n);
    if (n < 128) break;
  }
  pthread_mutex_unlock(&modules_mu);
}

// Opens this process's file and writes its header and module map.
bool start_file() noexcept {
  trace_fd = create_trace_file(trace_path, sizeof trace_path);
  if (trace_fd < 0) {
    complain("cannot create trace", errno);
    return false;
  }
  recorder_pid = getpid();
  read_process_identity();
  struct timespec real_ts;
  clock_gettime(CLOCK_REALTIME, &real_ts);
  trace::HeaderFields h;
  h.page_size = static_cast<std::uint32_t>(sysconf(_SC_PAGESIZE));
  h.pid = static_cast<std::uint32_t>(recorder_pid);
  h.ppid = static_cast<std::uint32_t>(getppid());
  h.start_monotonic_ns = now_ns();
  h.start_realtime_ns = static_cast<std::uint64_t>(real_ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(real_ts.tv_nsec);
  h.executable = executable;
  h.command_line = std::string_view(command_line, command_line_size);
  writer.attach(trace_fd);
  written_events.store(0);
  dropped_events.store(0);
  if (!writer.write_header(h)) {
    complain("cannot write trace", writer.last_error());
    return false;
  }
  forget_modules();
  return true;
}

// Writes log events [flushed, count). Caller holds writer_mu.
void write_pending(ThreadLog* log) noexcept {
  std::uint32_t n = log->count.load(std::memory_order_acquire);
  std::uint32_t from = log->flushed.load(std::memory_order_relaxed);
  if (n > from) {
    if (state.load(std::memory_order_relaxed) == State::Active) {
      if (writer.write_events(log->thread, log->events + from, n - from)) {
        written_events.fetch_add(n - from, std::memory_order_relaxed);
      } else {
        complain("cannot write trace", writer.last_error());
        state.store(State::Disabled);
      }
    } else {
      dropped_events.fetch_add(n - from, std::memory_order_relaxed);
    }
  }
  log->flushed.store(n, std::memory_order_relaxed);
}

// The owner's flush: write what is pending and empty the log.
void flush_own(ThreadLog* log) noexcept {
  report_modules(false);
  Locked w(writer_mu);
  write_pending(log);
  log->count.store(0, std::memory_order_relaxed);
  log->flushed.store(0, std::memory_order_relaxed);
}

void flush_all() noexcept {
  Locked r(registry_mu);
  Locked w(writer_mu);
  for (ThreadLog* log = live_logs; log; log = log->next) write_pending(log);
}

void unlink_log(ThreadLog* log) noexcept {
  for (ThreadLog** p = &live_logs; *p; p = &(*p)->next) {
    if (*p == log) {
      *p = log->next;
      break;
    }
  }
  log->next = free_logs;
  free_logs = log;
}

void append(ThreadLog* log, Op op, std::uint8_t flags, std::uint64_t size, std::uint64_t address,
            std::uint64_t aux, const void* callsite, std::uint64_t time_ns) noexcept {
  std::uint32_t c = log->count.load(std::memory_order_relaxed);
  Event& e = log->events[c];
  e.time_ns = time_ns;
  e.size = size;
  e.address = address;
  e.aux = aux;
  e.callsite = reinterpret_cast<std::uint64_t>(callsite);
  e.thread = log->thread;
  e.op = op;
  e.flags = flags;
  log->count.store(c + 1, std::memory_order_release);
  std::uint32_t from = log->flushed.load(std::memory_order_relaxed);
  if (c + 1 == kLogEvents || time_ns - log->events[from < c ? from : c].time_ns > kFlushIntervalNs) flush_own(log);
}

ThreadLog* attach_thread(std::uint64_t time_ns) noexcept {
  ThreadLog* log = nullptr;
  {
    Locked r(registry_mu);
    if (free_logs) {
      log = free_logs;
      free_logs = log->next;
    }
  }
  if (!log) {
    void* m = mmap(nullptr, sizeof(ThreadLog), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return nullptr;
    log = new (m) ThreadLog();
  }
  log->count.store(0);
  log->flushed.store(0);
  log->thread = next_thread.fetch_add(1);
  {
    Locked r(registry_mu);
    log->next = live_logs;
    live_logs = log;
  }
  tls.log = log;
  pthread_setspecific(exit_key, log);
  append(log, Op::ThreadStart, 0, static_cast<std::uint64_t>(syscall(SYS_gettid)), 0, 0, nullptr, time_ns);
  return log;
}

// pthread key destructor: the thread is exiting. Deferred to the third round so
// that other keys' destructors, which may still free memory, come first.
void on_thread_exit(void* value) noexcept {
  auto* log = static_cast<ThreadLog*>(value);
  if (++tls.destructor_round < 3) {
    pthread_setspecific(exit_key, log);
    return;
  }
  BusyScope busy;
  if (state.load() == State::Active) {
    append(log, Op::ThreadExit, 0, 0, 0, 0, nullptr, now_ns());
    flush_own(log);
  }
  {
    Locked r(registry_mu);
    unlink_log(log);
  }
  tls.log = nullptr;
  tls.destructor_round = 0;
}

void before_fork() noexcept {
  pthread_mutex_lock(&modules_mu);
  pthread_mutex_lock(&registry_mu);
  pthread_mutex_lock(&writer_mu);
}

void after_fork_parent() noexcept {
  pthread_mutex_unlock(&writer_mu);
  pthread_mutex_unlock(&registry_mu);
  pthread_mutex_unlock(&modules_mu);
}

// The child has one thread, this one; its log's events belong to the parent's
// trace (the parent writes its own copy). Start the child's own file.
void after_fork_child() noexcept {
  modules_mu = PTHREAD_MUTEX_INITIALIZER;
  registry_mu = PTHREAD_MUTEX_INITIALIZER;
  writer_mu = PTHREAD_MUTEX_INITIALIZER;
  State s = state.load();
  if (s != State::Active) return;
  ThreadLog* mine = tls.log;
  ThreadLog* others = live_logs;
  live_logs = nullptr;
  while (others) {
    ThreadLog* next = others->next;
    if (others != mine) {
      others->next = free_logs;
      free_logs = others;
    }
    others = next;
  }
  if (trace_fd >= 0) ::close(trace_fd);
  BusyScope busy;
  if (!start_file()) {
    state.store(State::Disabled);
    return;
  }
  report_modules(true);
  if (mine) {
    mine->count.store(0);
    mine->flushed.store(0);
    mine->next = nullptr;
    live_logs = mine;
    append(mine, Op::ThreadStart, 0, static_cast<std::uint64_t>(syscall(SYS_gettid)), 0, 0, nullptr, now_ns());
  }
}

void remember_exit_status(int status, void*) noexcept { exit_status = status; }

void initialize() noexcept {
  resolve_real_functions();
  if (!real.malloc || !real.free) {
    state.store(State::Disabled);
    return;
  }
  const char* level = getenv("TAILOR_RECORD_ZSTD_LEVEL");
  int zstd_level = level ? std::atoi(level) : 1;
  if (!writer.init(kLogEvents, zstd_level)) {
    complain("cannot allocate the trace writer for", errno);
    state.store(State::Disabled);
    return;
  }
  pthread_key_create(&exit_key, [](void* v) { on_thread_exit(v); });
  state.store(State::Initializing);
  if (!start_file()) {
    state.store(State::Disabled);
    return;
  }
  report_modules(true);
  pthread_atfork(before_fork, after_fork_parent, after_fork_child);
  on_exit(remember_exit_status, nullptr);
  state.store(State::Active, std::memory_order_release);
}

}  // namespace

bool ensure_active() noexcept {
  if (tls.busy) return false;
  {
    BusyScope busy;
    pthread_once(&init_once, initialize);
  }
  return state.load(std::memory_order_acquire) == State::Active;
}

void record(Op op, std::uint8_t flags, std::uint64_t size, std::uint64_t address, std::uint64_t aux,
            const void* callsite, std::uint64_t time_ns) noexcept {
  if (state.load(std::memory_order_relaxed) != State::Active) return;
  ThreadLog* log = tls.log;
  if (!log && !(log = attach_thread(time_ns))) {
    dropped_events.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  append(log, op, flags, size, address, aux, callsite, time_ns);
}

void finish(EndReason reason, int status) noexcept {
  if (getpid() != recorder_pid) return;  // a vfork child runs in our memory; the trace is not its own
  BusyScope busy;
  State expected = State::Active;
  report_modules(true);
  flush_all();
  Locked w(writer_mu);
  if (!state.compare_exchange_strong(expected, State::Finished)) return;
  trace::EndRecord end;
  end.reason = reason;
  end.status = status;
  end.events = written_events.load();
  end.dropped = dropped_events.load();
  end.time_ns = now_ns();
  if (!writer.write_end(end)) complain("cannot write trace", writer.last_error());
}

bool prepare_exec() noexcept {
  if (getpid() != recorder_pid || state.load() != State::Active) return false;
  finish(EndReason::Exec, 0);
  return true;
}

void resume_after_exec() noexcept {
  BusyScope busy;
  {
    // Logs keep their contents: the exec-time flush marked them written.
    Locked w(writer_mu);
    if (trace_fd >= 0) ::close(trace_fd);
    state.store(State::Initializing);
    if (!start_file()) {
      state.store(State::Disabled);
      return;
    }
  }
  report_modules(true);
  state.store(State::Active);
}

namespace {
// Start with the process, so that even a program that never allocates leaves a trace.
__attribute__((constructor)) void start_with_process() { ensure_active(); }

// Normal exit: runs after the program's atexit handlers and static destructors
// (our on_exit handler was registered before them), from the loader's fini pass.
__attribute__((destructor)) void finish_with_process() { finish(EndReason::Exit, exit_status); }
}  // namespace

}  // namespace tailor::record
