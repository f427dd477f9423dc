// SPDX-License-Identifier: MIT
#include "tune/program_run.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string_view>

extern char** environ;

namespace tailor::tune {

namespace {

bool has_name(std::string_view var, std::string_view name) {
  return var.size() > name.size() && var.substr(0, name.size()) == name && var[name.size()] == '=';
}

}  // namespace

namespace {

// stdin, stdout and stderr to /dev/null (in a child, before exec); stdout
// to `out` instead if it is open.
void redirect_to_null(int out = -1) {
  const int null = ::open("/dev/null", O_RDWR);
  if (null < 0) return;
  dup2(null, STDIN_FILENO);
  dup2(out >= 0 ? out : null, STDOUT_FILENO);
  dup2(null, STDERR_FILENO);
}

// A file for a run's stdout, unlinked at once (-1 if none could be made).
int output_file() {
  std::string pattern = (std::filesystem::temp_directory_path() / "tailor-run-XXXXXX").string();
  const int fd = mkostemp(pattern.data(), O_CLOEXEC);
  if (fd >= 0) ::unlink(pattern.c_str());
  return fd;
}

// The hash of what the program wrote there, and its length.
void hash_output(int fd, RunResult& r) {
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  char buf[1 << 16];
  ::lseek(fd, 0, SEEK_SET);
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    XXH3_64bits_update(state, buf, static_cast<std::size_t>(n));
    r.output_bytes += static_cast<std::uint64_t>(n);
  }
  r.output_hash = XXH3_64bits_digest(state);
  XXH3_freeState(state);
}

// Through tailor-run: the variables are passed as its arguments and applied
// in the program's process only; the result comes back on a pipe.
RunResult run_measured(const RunSpec& spec) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe failed: ") + std::strerror(errno));
  const int write_end = fcntl(fds[1], F_DUPFD, 10);  // without O_CLOEXEC: the helper writes to it
  ::close(fds[1]);
  std::vector<std::string> args = {spec.helper, std::to_string(write_end)};
  for (const auto& u : spec.unset) args.push_back("-" + u);  // first: a variable both removed and set is set
  for (const auto& s : spec.set) args.push_back(s);
  args.push_back("--");
  args.insert(args.end(), spec.argv.begin(), spec.argv.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const int out = spec.quiet && spec.capture_stdout ? output_file() : -1;
  const pid_t child = fork();
  if (child < 0) {
    ::close(fds[0]);
    ::close(write_end);
    if (out >= 0) ::close(out);
    throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  }
  if (child == 0) {
    if (spec.quiet) redirect_to_null(out);
    execv(argv[0], argv.data());
    _exit(125);
  }
  ::close(write_end);
  std::string line;
  char buf[256];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    line.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
  RunResult r;
  int signaled = 0;
  long rss_kib = 0;
  if (std::sscanf(line.c_str(), "%d %d %lf %ld", &r.status, &signaled, &r.seconds, &rss_kib) != 4)
    throw std::runtime_error(spec.helper + " did not report the run (exit status " +
                             std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")");
  r.signaled = signaled != 0;
  r.peak_rss = static_cast<double>(rss_kib) * 1024.0;
  if (out >= 0) {
    hash_output(out, r);
    ::close(out);
  }
  return r;
}

}  // namespace

RunResult run_program(const RunSpec& spec) {
  if (spec.argv.empty()) throw std::runtime_error("no command to run");
  if (!spec.helper.empty()) return run_measured(spec);
  // Everything the child needs is built before fork.
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string_view v(*e);
    bool drop = false;
    for (const auto& n : spec.unset) drop |= has_name(v, n);
    for (const auto& s : spec.set) drop |= has_name(v, std::string_view(s).substr(0, s.find('=')));
    if (!drop) env.emplace_back(v);
  }
  env.insert(env.end(), spec.set.begin(), spec.set.end());
  // The pid is known in the child only: room for it is made here.
  std::size_t pid_slot = env.size();
  if (!spec.pid_variable.empty()) env.push_back(spec.pid_variable + "=" + std::string(20, '\0'));
  std::vector<char*> envp, argv;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = spec.argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  const auto t0 = std::chrono::steady_clock::now();
  const pid_t child = fork();
  if (child < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  if (child == 0) {
    if (pid_slot < env.size()) {
      char* digits = envp[pid_slot] + spec.pid_variable.size() + 1;
      char tmp[24];
      int n = 0;
      for (pid_t p = getpid(); p > 0; p /= 10) tmp[n++] = static_cast<char>('0' + p % 10);
      for (int i = 0; i < n; ++i) digits[i] = tmp[n - 1 - i];
      digits[n] = '\0';
    }
    if (spec.quiet) {
      redirect_to_null();
    } else if (spec.stdout_to_stderr) {
      dup2(STDERR_FILENO, STDOUT_FILENO);
    }
    execvpe(argv[0], argv.data(), envp.data());
    _exit(errno == ENOENT ? 127 : 126);
  }
  int status = 0;
  rusage ru{};
  while (wait4(child, &status, 0, &ru) < 0 && errno == EINTR) {}
  RunResult r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.peak_rss = static_cast<double>(ru.ru_maxrss) * 1024.0;
  if (WIFSIGNALED(status)) {
    r.signaled = true;
    r.status = 128 + WTERMSIG(status);
  } else {
    r.status = WEXITSTATUS(status);
  }
  return r;
}

std::string resolve_executable(const std::string& program) {
  namespace fs = std::filesystem;
  auto canonical = [](const fs::path& p) -> std::string {
    std::error_code ec;
    if (!fs::is_regular_file(p, ec) || access(p.c_str(), X_OK) != 0) return {};
    const fs::path c = fs::canonical(p, ec);
    return ec ? std::string() : c.string();
  };
  if (program.find('/') != std::string::npos) {
    std::string r = canonical(program);
    if (r.empty()) throw std::runtime_error(program + ": no such executable file");
    return r;
  }
  const char* path = std::getenv("PATH");
  const std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  for (std::size_t start = 0; start <= dirs.size();) {
    std::size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const std::string dir = end > start ? dirs.substr(start, end - start) : ".";
    if (std::string r = canonical(fs::path(dir) / program); !r.empty()) return r;
    start = end + 1;
  }
  throw std::runtime_error(program + ": not found in PATH");
}

std::string describe_status(const RunResult& r) {
  if (r.signaled) {
    const int sig = r.status - 128;
    return "was killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
  if (r.status == 127) return "could not be started (command not found)";
  if (r.status == 126) return "could not be started (not executable)";
  return "exited with status " + std::to_string(r.status);
}

}  // namespace tailor::tune
