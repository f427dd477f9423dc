// SPDX-License-Identifier: MIT
// The recording engine; see recorder.h for the concurrency contract.
//
// Locks, always taken in this order and never on the hot path:
//   modules_mu  - one module scan at a time (tried, never waited for)
//   registry_mu - the list of live thread logs and the pool of free ones
//   queue_mu    - the background writer's queue of full buffers
//   writer_mu   - the trace writer and its file descriptor
// fork() takes all four (pthread_atfork) so the child inherits them free.
#include "record/recorder.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "record/calibration.h"
#include "record/module_map.h"
#include "record/output_file.h"
#include "record/real_functions.h"
#include "record/sampler.h"
#include "tailor/trace/writer.h"

namespace tailor::record {

__thread ThreadState tls __attribute__((tls_model("initial-exec"))) = {nullptr, 0, 0, 0, 0, 0, 0};
std::atomic<State> state{State::Uninitialized};
bool use_tsc = false;
bool ordered_releases = false;
std::uint64_t flush_interval_ticks = kFlushIntervalNs;

namespace {

using trace::EndReason;
using trace::Event;
using trace::Op;

pthread_mutex_t modules_mu = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t registry_mu = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t writer_mu = PTHREAD_MUTEX_INITIALIZER;
pthread_once_t init_once = PTHREAD_ONCE_INIT;
pthread_key_t exit_key;

// The writer outlives every destructor: the trace ends in an exit handler
// that runs after them (finish_at_exit). Constant-initialized, never destroyed.
union NeverDestroyed {
  trace::Writer writer;
  constexpr NeverDestroyed() : writer() {}
  ~NeverDestroyed() {}
} writer_storage;
trace::Writer& writer = writer_storage.writer;
TickClock clock;  // writer_mu
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

bool finish_on_exit = false;  // on_exit handler registered: it, not the destructor, ends the trace

struct Locked {
  explicit Locked(pthread_mutex_t& m) noexcept : m_(m) { pthread_mutex_lock(&m_); }
  ~Locked() { pthread_mutex_unlock(&m_); }
  Locked(const Locked&) = delete;
  Locked& operator=(const Locked&) = delete;
  pthread_mutex_t& m_;
};

// Writes what snprintf put in msg (n as it returned: cut to the buffer) to stderr.
void say(const char* msg, int n, std::size_t size) noexcept {
  if (n <= 0) return;
  ssize_t ignored = ::write(STDERR_FILENO, msg, static_cast<std::size_t>(n) < size ? static_cast<std::size_t>(n) : size - 1);
  (void)ignored;
}

void complain(const char* what, int err) noexcept {
  char msg[4096 + 256];
  say(msg, std::snprintf(msg, sizeof msg, "tailor-record: %s %s: %s; recording stops\n", what, trace_path, std::strerror(err)),
      sizeof msg);
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
  if (command_line_size > 0 && command_line[command_line_size - 1] == '\0') --command_line_size;  // the last terminator
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
  h.sample_interval = sample_interval;
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

// The background writer's queue of full buffers (see submit()).
struct Submission {
  ThreadLog* log;
  std::uint32_t buffer;
};
constexpr std::size_t kQueue = 1024;
pthread_mutex_t queue_mu = PTHREAD_MUTEX_INITIALIZER;  // between registry_mu and writer_mu in lock order
pthread_cond_t queue_cv = PTHREAD_COND_INITIALIZER;
Submission queue[kQueue];
std::size_t queue_head = 0, queue_size = 0;
__thread bool on_writer_thread __attribute__((tls_model("initial-exec"))) = false;

#ifdef TAILOR_FAULT_INJECTION
// A slow disk, in the recorder's test build only (libtailor-record-fault.so,
// tests/faults/record_slow_writer.sh): TAILOR_FAULT_WRITE_DELAY_US=N makes
// every write of a chunk take N µs more, whoever writes it, and the end of
// the run says how many full buffers the program's own threads had to write
// because the writer thread was a whole ring behind (the exit-time flush
// not counted).
long write_delay_us = 0;
std::atomic<std::uint64_t> chunks_by_writer{0}, chunks_by_program{0};
void count_full_buffer() noexcept {
  if (write_delay_us > 0) (on_writer_thread ? chunks_by_writer : chunks_by_program).fetch_add(1, std::memory_order_relaxed);
}
void slow_disk() noexcept {
  if (write_delay_us <= 0) return;
  timespec ts{write_delay_us / 1000000, (write_delay_us % 1000000) * 1000};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}
void report_slow_disk() noexcept {
  if (write_delay_us <= 0) return;
  char msg[256];
  say(msg,
      std::snprintf(msg, sizeof msg,
                    "tailor-record: slow disk (%ld us per chunk): %llu full buffers written by the writer thread, %llu by the program's threads\n",
                    write_delay_us, static_cast<unsigned long long>(chunks_by_writer.load()),
                    static_cast<unsigned long long>(chunks_by_program.load())),
      sizeof msg);
}
#else
void count_full_buffer() noexcept {}
void slow_disk() noexcept {}
void report_slow_disk() noexcept {}
#endif

// Writes slots [from, to) of one buffer (whole events: the owner publishes
// both slots of an event at once), compressed at `pace` (writer.h).
// Caller holds writer_mu.
void write_range(ThreadLog* log, std::uint32_t buffer, std::uint32_t from, std::uint32_t to,
                 unsigned pace = 0) noexcept {
  if (to <= from) return;
  if (state.load(std::memory_order_relaxed) == State::Active) {
    slow_disk();
    std::size_t events = 0;
    // The nodes this log made so far: every one its events name is among them.
    if (!write_stack_nodes(writer, log)) {
      complain("cannot write trace", writer.last_error());
      state.store(State::Disabled);
      return;
    }
    if (writer.write_packed(log->thread, log->events[buffer] + from, to - from, pace, clock.map(), events)) {
      written_events.fetch_add(events, std::memory_order_relaxed);
    } else {
      complain("cannot write trace", writer.last_error());
      state.store(State::Disabled);
    }
  } else {
    std::uint64_t events = 0;
    for (std::uint32_t i = from; i < to; ++i) {
      ++events;
      if (log->events[buffer][i].word & trace::PackedEvent::kExtended) ++i;  // its second slot
    }
    dropped_events.fetch_add(events, std::memory_order_relaxed);
  }
}

// Writes the log's full buffers, oldest first, up to and including b (or
// until one is not full). Claiming and writing happen under writer_mu, so a
// thread's chunks reach the file in the order it filled them, whoever (the
// writer thread, the owner, an exit-time flush) writes them.
void write_full_upto(ThreadLog* log, std::uint32_t b, unsigned pace) noexcept {
  for (;;) {
    std::uint32_t o = log->oldest;
    if (log->state[o].load(std::memory_order_acquire) != kFull) return;
    write_range(log, o, log->full_from[o], log->full_count[o], pace);
    log->state[o].store(kFree, std::memory_order_release);
    log->oldest = (o + 1) % kLogBuffers;
    if (o == b) return;
  }
}

// How fast to compress (writer.h, pace), under writer_mu. The writer thread
// should keep up with the program's threads at the best compression it can
// afford: a step faster each time it finds another full buffer of the same
// log waiting behind the one it writes, the fastest at once when a program
// thread had to write a buffer itself (the writer was a whole ring behind),
// and a step slower after kCalmChunks chunks in a row with nothing waiting.
constexpr unsigned kCalmChunks = 16;
unsigned pace = 0;
unsigned calm = 0;

unsigned choose_pace(const ThreadLog* log, std::uint32_t b) noexcept {
  if (!on_writer_thread) {
    pace = trace::Writer::kMaxPace;
    calm = 0;
    return pace;
  }
  bool waiting = false;
  for (std::uint32_t i = 0; i < kLogBuffers; ++i)
    waiting |= i != b && log->state[i].load(std::memory_order_acquire) == kFull;
  if (waiting) {
    if (pace < trace::Writer::kMaxPace) ++pace;
    calm = 0;
  } else if (++calm >= kCalmChunks) {
    if (pace > 0) --pace;
    calm = 0;
  }
  return pace;
}

// Makes buffer b free, writing it (and any older full buffer) if needed.
void settle_buffer(ThreadLog* log, std::uint32_t b) noexcept {
  if (log->state[b].load(std::memory_order_acquire) != kFull) return;
  // Modules first and outside writer_mu: nobody waiting on writer_mu may
  // wait on the loader's lock through us.
  report_modules(false);
  count_full_buffer();
  Locked w(writer_mu);
  write_full_upto(log, b, choose_pace(log, b));
}

// --- background writer ------------------------------------------------------

enum class WriterThread { NotStarted, Running, Unavailable };
WriterThread writer_thread = WriterThread::NotStarted;  // queue_mu
bool use_writer_thread = true;

void* writer_main(void*) noexcept {
  tls.busy = 1;  // anything this thread allocates is the recorder's, not the program's
  on_writer_thread = true;
  for (;;) {
    Submission s;
    {
      Locked q(queue_mu);
      while (queue_size == 0) pthread_cond_wait(&queue_cv, &queue_mu);
      s = queue[queue_head];
      queue_head = (queue_head + 1) % kQueue;
      --queue_size;
    }
    settle_buffer(s.log, s.buffer);
  }
  return nullptr;
}

// Queues buffer b of log for the writer thread (started on first use, with
// every signal blocked). False if there is no writer thread or no room.
bool submit(ThreadLog* log, std::uint32_t b) noexcept {
  Locked q(queue_mu);
  if (writer_thread == WriterThread::NotStarted) {
    writer_thread = WriterThread::Unavailable;
    if (use_writer_thread) {
      sigset_t all, old;
      sigfillset(&all);
      pthread_sigmask(SIG_SETMASK, &all, &old);
      pthread_t t;
      pthread_attr_t attr;
      pthread_attr_init(&attr);
      pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
      pthread_attr_setstacksize(&attr, 256 * 1024);
      if (pthread_create(&t, &attr, writer_main, nullptr) == 0) {
        writer_thread = WriterThread::Running;
        pthread_setname_np(t, "tailor-record");
      }
      pthread_attr_destroy(&attr);
      pthread_sigmask(SIG_SETMASK, &old, nullptr);
    }
  }
  if (writer_thread != WriterThread::Running || queue_size == kQueue) return false;
  queue[(queue_head + queue_size) % kQueue] = {log, b};
  ++queue_size;
  pthread_cond_signal(&queue_cv);
  return true;
}

}  // namespace

// The owner hands its current buffer over and moves to the next in the ring.
void rotate(ThreadLog* log, std::uint64_t time) noexcept {
  ErrnoKept kept;
  std::uint32_t cur = log->current.load(std::memory_order_relaxed);
  std::uint32_t other = (cur + 1) % kLogBuffers;
  settle_buffer(log, other);  // the oldest buffer goes first: chunks of a thread stay in order
  log->full_from[cur] = log->flushed.load(std::memory_order_relaxed);
  log->full_count[cur] = log->count.load(std::memory_order_relaxed);
  log->state[cur].store(kFull, std::memory_order_release);
  log->current.store(other, std::memory_order_release);
  log->flushed.store(0, std::memory_order_relaxed);
  log->count.store(0, std::memory_order_release);
  log->fill = log->events[other];
  log->deadline = time + flush_interval_ticks;
  if (!submit(log, cur)) settle_buffer(log, cur);
}

void record_stacked(ThreadLog* log, Op op, std::uint8_t flags, std::uint64_t size, std::uint64_t address,
                    std::uint64_t aux, std::uint64_t callsite, std::uint64_t time) noexcept {
  record_extended(log, op, flags, size, address, aux, callsite, time, capture_stack(log, callsite));
}

void flush_stack_nodes(ThreadLog* log) noexcept {
  Locked w(writer_mu);
  if (state.load(std::memory_order_relaxed) == State::Active && !write_stack_nodes(writer, log)) {
    complain("cannot write trace", writer.last_error());
    state.store(State::Disabled);
  }
}

void record_extended(ThreadLog* log, Op op, std::uint8_t flags, std::uint64_t size, std::uint64_t address,
                     std::uint64_t aux, std::uint64_t callsite, std::uint64_t time, std::uint32_t stack) noexcept {
  std::uint32_t c = log->count.load(std::memory_order_relaxed);
  if (c + 2 > kLogSlots) {  // both slots in one buffer
    rotate(log, time);
    c = log->count.load(std::memory_order_relaxed);
  }
  trace::PackedEvent* e = log->fill + c;
  e[0] = {time, size, address, trace::PackedEvent::kExtended | trace::PackedEvent::tag(op, flags)};
  e[1] = {aux, callsite, stack, 0};
  log->count.store(c + 2, std::memory_order_release);
  if (c + 2 == kLogSlots || time > log->deadline) rotate(log, time);
}

namespace {

// Everything pending in a log, in order. Used at exit, exec and thread exit,
// possibly while the owner still runs: it only ever reads what the owner published.
void write_log(ThreadLog* log) noexcept {
  std::uint32_t cur = log->current.load(std::memory_order_acquire);
  report_modules(false);
  Locked w(writer_mu);
  write_full_upto(log, cur, 0);  // every full buffer (cur itself is being filled, so not full)
  std::uint32_t n = log->count.load(std::memory_order_acquire);
  write_range(log, cur, log->flushed.load(std::memory_order_relaxed), n);
  log->flushed.store(n, std::memory_order_relaxed);
}

void flush_all() noexcept {
  Locked r(registry_mu);
  for (ThreadLog* log = live_logs; log; log = log->next) write_log(log);
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

// The recorder's own events (thread start and exit) take the same path as the hooks'.
// An empty ring, filling its first buffer from `time` on (a new thread's
// log, or the forking thread's in the child).
void reset_ring(ThreadLog* log, std::uint64_t time) noexcept {
  log->current.store(0);
  log->count.store(0);
  log->flushed.store(0);
  for (auto& st : log->state) st.store(kFree);
  log->oldest = 0;
  log->fill = log->events[0];
  log->deadline = time + flush_interval_ticks;
}

void append(ThreadLog* log, Op op, std::uint64_t size, std::uint64_t time) noexcept {
  ThreadLog* saved = tls.log;
  tls.log = log;
  record(op, 0, size, 0, 0, nullptr, time);
  tls.log = saved;
}

}  // namespace

ThreadLog* attach_thread(std::uint64_t time_ns) noexcept {
  ErrnoKept kept;
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
  reset_ring(log, time_ns);
  log->thread = next_thread.fetch_add(1);
  if (log->thread > 0) __atomic_store_n(&ordered_releases, true, __ATOMIC_RELAXED);
  {
    Locked r(registry_mu);
    log->next = live_logs;
    live_logs = log;
  }
  tls.log = log;
  pthread_setspecific(exit_key, log);
  append(log, Op::ThreadStart, static_cast<std::uint64_t>(syscall(SYS_gettid)), time_ns);
  return log;
}

namespace {

// pthread key destructor: the thread is exiting. Deferred to the third round so
// that other keys' destructors, which may still free memory, come first.
void on_thread_exit(void* value) noexcept {
  auto* log = static_cast<ThreadLog*>(value);
  if (++tls.destructor_round < 3) {
    pthread_setspecific(exit_key, log);
    return;
  }
  ++tls.busy;
  if (state.load() == State::Active) append(log, Op::ThreadExit, 0, now_ticks());
  write_log(log);
  {
    Locked r(registry_mu);
    unlink_log(log);
  }
  tls.log = nullptr;
  // The thread is gone as far as the trace is concerned; what glibc still
  // does on its behalf (freeing its own thread resources) is not recorded.
  tls.busy = 1;
}

void before_fork() noexcept {
  pthread_mutex_lock(&modules_mu);
  pthread_mutex_lock(&registry_mu);
  pthread_mutex_lock(&queue_mu);
  pthread_mutex_lock(&writer_mu);
}

void after_fork_parent() noexcept {
  pthread_mutex_unlock(&writer_mu);
  pthread_mutex_unlock(&queue_mu);
  pthread_mutex_unlock(&registry_mu);
  pthread_mutex_unlock(&modules_mu);
}

// The child has one thread, this one; its log's events belong to the parent's
// trace (the parent writes its own copy). Start the child's own file.
void after_fork_child() noexcept {
  sampler_after_fork_child();
  modules_mu = PTHREAD_MUTEX_INITIALIZER;
  registry_mu = PTHREAD_MUTEX_INITIALIZER;
  queue_mu = PTHREAD_MUTEX_INITIALIZER;
  queue_cv = PTHREAD_COND_INITIALIZER;
  writer_mu = PTHREAD_MUTEX_INITIALIZER;
  // The writer thread did not survive the fork; whatever it was given belongs to the parent.
  queue_head = queue_size = 0;
  writer_thread = WriterThread::NotStarted;
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
  stacks_after_fork(mine, free_logs);  // the child's trace names none of the parent's nodes
  if (mine) {
    const std::uint64_t now = now_ticks();
    reset_ring(mine, now);
    mine->next = nullptr;
    live_logs = mine;
    append(mine, Op::ThreadStart, static_cast<std::uint64_t>(syscall(SYS_gettid)), now);
  }
}

// Registered while the loader runs constructors, before __libc_start_main
// registers the loader's fini pass, so it runs last of all exit handlers:
// after the program's atexit handlers and every library's destructors.
void finish_at_exit(int status, void*) noexcept {
  finish(EndReason::Exit, status);
  report_slow_disk();
}

void initialize() noexcept {
  resolve_real_functions();
  if (!real.malloc || !real.free) {
    state.store(State::Disabled);
    return;
  }
  use_tsc = TickClock::tsc_usable();
  if (!use_tsc) ordered_releases = true;  // clock_gettime on every event (recorder.h)
  clock.start(use_tsc);
  flush_interval_ticks = use_tsc ? kFlushIntervalNs * 3 : kFlushIntervalNs;  // ~GHz; a heuristic only
  const char* thread = getenv("TAILOR_RECORD_THREAD");
  use_writer_thread = !(thread && thread[0] == '0');
#ifdef TAILOR_FAULT_INJECTION
  if (const char* delay = getenv("TAILOR_FAULT_WRITE_DELAY_US")) write_delay_us = std::atol(delay);
#endif
  stacks_init();
  if (!sampler_init()) {
    state.store(State::Disabled);
    return;
  }
  if (sample_interval) use_writer_thread = false;  // sampler.h: a single-threaded program stays so
  const char* level = getenv("TAILOR_RECORD_ZSTD_LEVEL");
  int zstd_level = level ? std::atoi(level) : 3;
  if (!writer.init(kLogSlots, zstd_level)) {
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
  finish_on_exit = on_exit(finish_at_exit, nullptr) == 0;
  state.store(State::Active, std::memory_order_release);
}

}  // namespace

bool ensure_active() noexcept {
  if (tls.busy) return false;
  ErrnoKept kept;
  {
    BusyScope busy;
    pthread_once(&init_once, initialize);
  }
  return state.load(std::memory_order_acquire) == State::Active;
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

void note_dropped(std::uint64_t events) noexcept { dropped_events.fetch_add(events, std::memory_order_relaxed); }

void report_loaded_modules() noexcept {
  if (state.load(std::memory_order_acquire) != State::Active || getpid() != recorder_pid) return;
  BusyScope busy;
  report_modules(true);
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

// Normal exit when on_exit could not be used: the exit status is unknown (0).
__attribute__((destructor)) void finish_with_process() {
  if (!finish_on_exit) finish(EndReason::Exit, 0);
}
}  // namespace

}  // namespace tailor::record
