// SPDX-License-Identifier: MIT
// A program run by a test as a child process: its own process group, stdin
// from /dev/null, no core dump, stdout and stderr read through pipes while it
// runs; killed with its whole group when a time limit passes.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace tailor::test {

// A child process in its own process group, with stdout and stderr on pipes.
class Child {
 public:
  // argv[0] is looked up in PATH if it has no slash.
  Child(const std::vector<std::string>& argv, const std::string& cwd = "") {
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_ = fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      setpgid(0, 0);
      struct rlimit no_core {0, 0};
      setrlimit(RLIMIT_CORE, &no_core);
      int null = ::open("/dev/null", O_RDONLY);
      dup2(null, STDIN_FILENO);
      dup2(out[1], STDOUT_FILENO);
      dup2(err[1], STDERR_FILENO);
      if (!cwd.empty() && chdir(cwd.c_str()) != 0) _exit(125);
      execvp(args[0], args.data());
      _exit(126);
    }
    setpgid(pid_, pid_);  // also here, so that it holds before either side runs on
    ::close(out[1]);
    ::close(err[1]);
    out_ = out[0];
    err_ = err[0];
  }
  ~Child() {
    if (!reaped_) {
      kill(-pid_, SIGKILL);
      int status;
      waitpid(pid_, &status, 0);
    }
    if (out_ >= 0) ::close(out_);
    if (err_ >= 0) ::close(err_);
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  const std::string& out() const { return out_text_; }
  const std::string& err() const { return err_text_; }

  // Reads output until `text` appears on stdout or the time is up.
  bool wait_for_output(const std::string& text, std::chrono::seconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (out_text_.find(text) == std::string::npos) {
      if (std::chrono::steady_clock::now() > deadline || (out_ < 0 && err_ < 0)) return false;
      pump(100);
    }
    return true;
  }

  // Waits for the exit (killing the whole group after `timeout`); returns the wait status.
  int wait(std::chrono::seconds timeout = std::chrono::seconds(60)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    int status = 0;
    for (;;) {
      pid_t r = waitpid(pid_, &status, WNOHANG);
      if (r == pid_) break;
      if (std::chrono::steady_clock::now() > deadline) {
        timed_out_ = true;
        kill(-pid_, SIGKILL);
        waitpid(pid_, &status, 0);
        break;
      }
      pump(20);
    }
    reaped_ = true;
    // Drain what is left (a process of the group may still hold the pipes).
    auto drain_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timed_out_ ? 1 : 30);
    while ((out_ >= 0 || err_ >= 0) && std::chrono::steady_clock::now() < drain_deadline) pump(50);
    return status;
  }
  bool timed_out() const { return timed_out_; }

 private:
  void pump(int ms) {
    pollfd fds[2];
    int n = 0;
    if (out_ >= 0) fds[n++] = {out_, POLLIN, 0};
    if (err_ >= 0) fds[n++] = {err_, POLLIN, 0};
    if (n == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
      return;
    }
    if (poll(fds, static_cast<nfds_t>(n), ms) <= 0) return;
    for (int i = 0; i < n; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[65536];
      ssize_t got = ::read(fds[i].fd, buf, sizeof buf);
      bool is_out = fds[i].fd == out_;
      if (got > 0) {
        (is_out ? out_text_ : err_text_).append(buf, static_cast<std::size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        (is_out ? out_ : err_) = -1;
      }
    }
  }

  pid_t pid_ = -1;
  int out_ = -1, err_ = -1;
  std::string out_text_, err_text_;
  bool reaped_ = false;
  bool timed_out_ = false;
};

struct Result {
  int status = 0;
  pid_t pid = 0;
  std::string out, err;
  bool timed_out = false;
};

// Runs argv to its end (argv[0] looked up in PATH if it has no slash):
// its wait status and what it wrote.
inline Result run(const std::vector<std::string>& argv, const std::string& cwd = "",
                  std::chrono::seconds timeout = std::chrono::seconds(60)) {
  Child c(argv, cwd);
  Result r;
  r.pid = c.pid();
  r.status = c.wait(timeout);
  r.timed_out = c.timed_out();
  r.out = c.out();
  r.err = c.err();
  return r;
}

}  // namespace tailor::test
