// SPDX-License-Identifier: MIT
// Running the driver under an allocator and taking medians (replay_runner.h).
#include "replay/replay_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <random>
#include <stdexcept>

#include "layout/layout.h"
#include "util/statistics.h"

extern char** environ;

namespace fs = std::filesystem;

namespace tailor::replay {

namespace {

constexpr const char* kDebianLibDir = "/usr/lib/x86_64-linux-gnu/";

struct Peer {
  const char* name;
  const char* library;  // in kDebianLibDir
  const char* package;
};
constexpr Peer kPeers[] = {
    {"mimalloc", "libmimalloc.so.2", "libmimalloc2.0"},
    {"jemalloc", "libjemalloc.so.2", "libjemalloc2"},
    {"tcmalloc", "libtcmalloc_minimal.so.4", "libtcmalloc-minimal4"},
};

bool is_spec_file(const std::string& name) { return name.ends_with(".json") || name.find('/') != std::string::npos; }

std::string tail(const std::string& text, std::size_t max = 2000) {
  std::string t = text.size() > max ? "..." + text.substr(text.size() - max) : text;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  return t;
}

struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() {
    if (pipe2(fd, O_CLOEXEC) != 0) throw std::runtime_error(std::string("replay: pipe failed: ") + strerror(errno));
  }
  ~Pipe() {
    for (int f : fd)
      if (f >= 0) ::close(f);
  }
  void close(int i) {
    ::close(fd[i]);
    fd[i] = -1;
  }
};

}  // namespace

plan::PlanHeader read_plan_header(const std::string& path) {
  plan::PlanHeader h{};
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("cannot open replay plan " + path + ": " + strerror(errno));
  const ssize_t n = ::pread(fd, &h, sizeof h, 0);
  ::close(fd);
  if (n != static_cast<ssize_t>(sizeof h) || std::memcmp(h.magic, plan::kMagic, sizeof h.magic) != 0 ||
      h.version != plan::kVersion)
    throw std::runtime_error(path + ": not a replay plan of version " + std::to_string(plan::kVersion));
  return h;
}

Tools find_tools() {
  Tools t;
  t.driver = layout::find(layout::Item::kReplayDriver).string();
  t.libtailor = layout::expected(layout::Item::kLibtailor).string();
  return t;
}

const std::vector<std::string>& allocator_names() {
  static const std::vector<std::string> names = {"glibc", "libtailor", "mimalloc", "jemalloc", "tcmalloc"};
  return names;
}

Allocator resolve_allocator(const std::string& name, const Tools& tools, const std::vector<std::string>& dmm_names) {
  Allocator a;
  a.name = name;
  if (name == "glibc") {
    a.expect = "glibc";
    return a;
  }
  for (const Peer& p : kPeers) {
    if (name != p.name) continue;
    a.preload = std::string(kDebianLibDir) + p.library;
    a.expect = p.name;
    if (!fs::exists(a.preload))
      throw std::invalid_argument("allocator '" + name + "' needs " + a.preload + ", which does not exist (Debian package " +
                                  p.package + ")");
    return a;
  }
  if (name == "libtailor") {
  } else if (is_spec_file(name)) {
    if (!fs::is_regular_file(name))
      throw std::invalid_argument("allocator '" + name + "': DMM spec file " + name + " does not exist");
    a.dmm = fs::absolute(name).lexically_normal().string();
  } else if (std::find(dmm_names.begin(), dmm_names.end(), name) != dmm_names.end()) {
    a.dmm = name;
  } else {
    std::string known;
    for (const auto& n : allocator_names()) known += n + ", ";
    for (const auto& n : dmm_names) known += n + ", ";
    throw std::invalid_argument("unknown allocator '" + name + "' (known: " + known + "or a DMM spec FILE.json)");
  }
  a.preload = tools.libtailor;
  a.expect = "libtailor";
  if (!fs::exists(a.preload))
    throw std::invalid_argument("allocator '" + name + "' needs libtailor.so: " + a.preload +
                                " does not exist (build the tailor_alloc target, or set TAILOR_LIB)");
  return a;
}

nlohmann::json run_driver(const Tools& tools, const Allocator& a, const std::string& plan_path) {
  const std::uint64_t plan_calls = read_plan_header(plan_path).calls[0];
  // Everything the child needs is built before fork: it only calls
  // async-signal-safe functions.
  std::vector<std::string> env;
  auto replaced = [&a](std::string_view v) {
    if (v.starts_with("LD_PRELOAD=") || v.starts_with("TAILOR_DMM=")) return true;
    for (const auto& e : a.env) {
      const std::string_view name = std::string_view(e).substr(0, e.find('='));
      if (v.size() > name.size() && v.substr(0, name.size()) == name && v[name.size()] == '=') return true;
    }
    return false;
  };
  for (char** e = environ; *e; ++e) {
    const std::string_view v(*e);
    if (!replaced(v)) env.emplace_back(v);
  }
  if (!a.preload.empty()) env.push_back("LD_PRELOAD=" + a.preload);
  if (!a.dmm.empty()) env.push_back("TAILOR_DMM=" + a.dmm);
  for (const auto& e : a.env)
    if (e.find('=') != std::string::npos) env.push_back(e);
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string arg0 = tools.driver, arg1 = plan_path;
  char* argv[] = {arg0.data(), arg1.data(), nullptr};
  const std::string exec_failed = "tailor-replay-driver: cannot run " + tools.driver + "\n";

  Pipe out, err;
  const pid_t child = fork();
  if (child < 0) throw std::runtime_error(std::string("replay: fork failed: ") + strerror(errno));
  if (child == 0) {
    const int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0) dup2(null, STDIN_FILENO);
    dup2(out.fd[1], STDOUT_FILENO);
    dup2(err.fd[1], STDERR_FILENO);
    execve(argv[0], argv, envp.data());
    if (::write(STDERR_FILENO, exec_failed.data(), exec_failed.size()) < 0) {}
    _exit(127);
  }
  out.close(1);
  err.close(1);

  std::string text[2];
  pollfd fds[2] = {{out.fd[0], POLLIN, 0}, {err.fd[0], POLLIN, 0}};
  for (int open = 2; open > 0;) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[65536];
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        text[i].append(buf, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        fds[i].fd = -1;
        --open;
      }
    }
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}

  const std::string who = "replay: " + a.name + ": ";
  const std::string stderr_text = text[1].empty() ? "" : ":\n" + tail(text[1]);
  if (WIFSIGNALED(status))
    throw std::runtime_error(who + "tailor-replay-driver was killed by signal " + std::to_string(WTERMSIG(status)) +
                             " (" + strsignal(WTERMSIG(status)) + ")" + stderr_text);
  if (WEXITSTATUS(status) != 0)
    throw std::runtime_error(who + "tailor-replay-driver exited with status " + std::to_string(WEXITSTATUS(status)) +
                             stderr_text);
  nlohmann::json report = nlohmann::json::parse(text[0], nullptr, false);
  if (report.is_discarded() || !report.is_object() || !report.contains("seconds"))
    throw std::runtime_error(who + "tailor-replay-driver printed no report: '" + tail(text[0], 200) + "'" + stderr_text);
  const std::uint64_t made = report.contains("calls") ? report["calls"].value("total", std::uint64_t{0}) : 0;
  if (made != plan_calls)
    throw std::runtime_error(who + "the driver made " + std::to_string(made) + " calls, the plan has " +
                             std::to_string(plan_calls) + stderr_text);
  const std::string found = report.value("allocator", "");
  if (found != a.expect)
    throw std::runtime_error(who + "the driver ran on " + found + " (malloc from " + report.value("malloc_from", "?") +
                             "), not " + a.expect + (a.preload.empty() ? "" : ": LD_PRELOAD=" + a.preload + " did not take") +
                             stderr_text);
  return report;
}

Medians medians(const std::vector<nlohmann::json>& runs) {
  std::vector<double> seconds, hwm, delta, os, faults;
  for (const auto& r : runs) {
    seconds.push_back(r.at("seconds").get<double>());
    const double peak = r.at("peak_rss_bytes").get<double>();
    hwm.push_back(peak);
    delta.push_back(std::max(0.0, peak - r.at("rss_before_bytes").get<double>()));
    if (r.contains("os_bytes") && r["os_bytes"].is_number()) os.push_back(r["os_bytes"].get<double>());
    faults.push_back(r.at("minor_faults").get<double>());
  }
  Medians m;
  m.seconds = util::median(seconds);
  m.seconds_min = seconds.empty() ? std::nan("") : *std::min_element(seconds.begin(), seconds.end());
  m.seconds_max = seconds.empty() ? std::nan("") : *std::max_element(seconds.begin(), seconds.end());
  m.peak_rss_bytes = util::median(hwm);
  m.peak_rss_delta_bytes = util::median(delta);
  m.os_bytes = util::median(os);
  m.minor_faults = util::median(faults);
  return m;
}

std::vector<AllocatorResult> run_rounds(const Tools& tools, const std::vector<Allocator>& allocators,
                                        const std::string& plan_path, unsigned runs,
                                        const std::function<void(unsigned, std::size_t)>& progress) {
  std::vector<AllocatorResult> results(allocators.size());
  for (std::size_t i = 0; i < allocators.size(); ++i) results[i].allocator = allocators[i];
  std::vector<std::size_t> order(allocators.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::mt19937 shuffle(0x7a11u);
  for (unsigned round = 0; round < runs; ++round) {
    if (round > 0) std::shuffle(order.begin(), order.end(), shuffle);
    for (const std::size_t i : order) {
      if (progress) progress(round, i);
      results[i].runs.push_back(run_driver(tools, allocators[i], plan_path));
    }
  }
  for (auto& r : results) r.median = medians(r.runs);
  return results;
}

}  // namespace tailor::replay
