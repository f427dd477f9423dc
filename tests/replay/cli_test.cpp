// SPDX-License-Identifier: MIT
// `tailor replay` as a user runs it: a recorded multithreaded program replayed
// on every allocator (JSON with each allocator, each run and sane numbers;
// the text table), the plan file kept or left behind nowhere, and bad input
// (a missing or damaged trace, an unknown allocator, a missing spec file or
// library), each a one-line error naming it.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/temp_dir.h"
#include "replay/run_command.h"

namespace {

namespace fs = std::filesystem;
using tailor::test::run_command;

const std::string kTailor = TAILOR_BIN;

// Every allocator the machine has, then a built-in DMM and a spec file.
std::vector<std::string> allocators() {
  std::vector<std::string> names = {"glibc", "libtailor"};
  for (const auto& [name, lib] : std::vector<std::pair<std::string, std::string>>{
           {"mimalloc", "libmimalloc.so.2"}, {"jemalloc", "libjemalloc.so.2"}, {"tcmalloc", "libtcmalloc_minimal.so.4"}})
    if (fs::exists("/usr/lib/x86_64-linux-gnu/" + lib)) names.push_back(name);
  names.push_back("kng");
  names.push_back(std::string(TAILOR_SHARE_DIR) + "/dmm/buddy.json");
  return names;
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ",") + n;
  return s;
}

// threads_cross_free, recorded once for every test of the suite.
class ReplayCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new tailor::test::TempDir;
    trace_ = dir_->file("threads.trace");
    auto o = run_command(kTailor + " record -q -o " + trace_ + " -- " + THREADS_CROSS_FREE);
    ASSERT_EQ(o.status, 0) << o.err;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static tailor::test::TempDir* dir_;
  static std::string trace_;
};
tailor::test::TempDir* ReplayCli::dir_ = nullptr;
std::string ReplayCli::trace_;

TEST_F(ReplayCli, JsonHasEveryAllocatorAndEveryRun) {
  const std::vector<std::string> names = allocators();
  const std::string out_file = dir_->file("out.json");
  auto o = run_command(kTailor + " replay " + trace_ + " --runs 2 --json -o " + out_file + " --alloc " + joined(names));
  ASSERT_EQ(o.status, 0) << o.err;
  const auto j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j, nlohmann::json::parse(tailor::test::read_file(out_file)));

  // threads_cross_free: 4 workers x 1000 blocks of 4099 bytes, each freed by another thread.
  const auto& plan = j["plan"];
  EXPECT_EQ(plan["cross_thread"], 4000);
  EXPECT_EQ(plan["threads"], 5);
  EXPECT_GE(plan["calls"]["malloc"].get<int>(), 4001);
  EXPECT_EQ(plan["calls"]["free"], 4001);
  EXPECT_EQ(j["runs"], 2);

  ASSERT_EQ(j["allocators"].size(), names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    const auto& a = j["allocators"][i];
    SCOPED_TRACE(names[i]);
    EXPECT_EQ(a["name"], names[i]);
    const bool on_libtailor = i == 1 || i + 2 >= names.size();  // libtailor and the two DMMs
    EXPECT_EQ(a["runs"][0]["allocator"], on_libtailor ? "libtailor" : names[i]);
    ASSERT_EQ(a["runs"].size(), 2u);
    for (const auto& r : a["runs"]) {
      EXPECT_EQ(r["calls"]["total"], plan["calls"]["total"]);
      EXPECT_EQ(r["threads"], 5);
      EXPECT_EQ(r["failed"], 0);
      EXPECT_GT(r["seconds"].get<double>(), 0);
      EXPECT_LT(r["seconds"].get<double>(), 30);
      // 4000 blocks of 4099 bytes, up to ~1600 live at once: at least 1 MiB more RSS, at most 1 GiB.
      const double delta = r["peak_rss_bytes"].get<double>() - r["rss_before_bytes"].get<double>();
      EXPECT_GT(delta, 1 << 20);
      EXPECT_LT(delta, 1 << 30);
      EXPECT_GT(r["minor_faults"].get<double>(), 0);
      EXPECT_TRUE(r["os_bytes"].is_number()) << r["os_bytes_source"];
    }
    const auto& m = a["median"];
    EXPECT_LE(m["seconds_min"].get<double>(), m["seconds"].get<double>());
    EXPECT_LE(m["seconds"].get<double>(), m["seconds_max"].get<double>());
    EXPECT_GT(m["peak_rss_delta_bytes"].get<double>(), 0);
    EXPECT_GT(m["peak_rss_bytes"].get<double>(), m["peak_rss_delta_bytes"].get<double>());
  }
  EXPECT_DOUBLE_EQ(j["allocators"][0]["ratio_to_first"]["seconds"].get<double>(), 1.0);
  EXPECT_EQ(j["allocators"][names.size() - 2]["dmm"], "kng");
  EXPECT_EQ(j["allocators"][names.size() - 1]["dmm"], fs::path(names.back()).lexically_normal().string());
}

TEST_F(ReplayCli, TextTableHasARowPerAllocator) {
  auto o = run_command(kTailor + " replay " + trace_ + " --runs 1 --alloc glibc,libtailor,kng");
  ASSERT_EQ(o.status, 0) << o.err;
  for (const char* row : {"\nglibc ", "\nlibtailor ", "\nkng "}) EXPECT_NE(o.out.find(row), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("4000 cross-thread frees"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("x: ratio to glibc"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("mallinfo2 arena + hblkhd"), std::string::npos) << o.out;
  EXPECT_TRUE(o.err.empty()) << o.err;  // no progress when stderr is not a terminal
}

TEST_F(ReplayCli, ThePlanIsRemovedUnlessKept) {
  tailor::test::TempDir tmp;
  auto o = run_command("TMPDIR=" + tmp.path().string() + " " + kTailor + " replay " + trace_ + " --runs 1 --alloc glibc");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_TRUE(fs::is_empty(tmp.path()));

  const std::string kept = tmp.file("kept.plan");
  o = run_command(kTailor + " replay " + trace_ + " --runs 1 --alloc glibc --keep-plan " + kept);
  ASSERT_EQ(o.status, 0) << o.err;
  auto again = run_command(std::string(REPLAY_DRIVER) + " " + kept);
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(nlohmann::json::parse(again.out)["threads"], 5);
}

// One line on stderr, naming what is wrong, and a non-zero exit.
void expect_one_line_error(const std::string& args, const std::string& needle, const std::string& env = "") {
  SCOPED_TRACE(args);
  auto o = run_command(env + " " + kTailor + " replay " + args);
  EXPECT_NE(o.status, 0);
  EXPECT_TRUE(o.out.empty()) << o.out;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
  EXPECT_NE(o.err.find(needle), std::string::npos) << o.err;
}

TEST_F(ReplayCli, BadInputIsAOneLineErrorNamingIt) {
  tailor::test::TempDir tmp;
  const std::string missing = tmp.file("missing.trace");
  expect_one_line_error(missing, "tailor: " + missing + ": byte 0: cannot open");

  const std::string garbage = tmp.file("garbage.trace");
  std::ofstream(garbage) << "this is not a trace, only some text that is long enough to be read as a header";
  expect_one_line_error(garbage, garbage + ": byte 0: ");

  const std::string cut = tmp.file("cut.trace");
  std::ofstream(cut) << tailor::test::read_file(trace_).substr(0, 20);
  expect_one_line_error(cut, cut + ": byte");

  expect_one_line_error(trace_ + " --alloc glibc,nope", "unknown allocator 'nope' (known: glibc, libtailor, mimalloc");
  const std::string spec = tmp.file("missing.json");
  expect_one_line_error(trace_ + " --alloc glibc," + spec, "DMM spec file " + spec + " does not exist");
  const std::string bad_spec = tmp.file("bad.json");
  std::ofstream(bad_spec) << "{\"name\": \"bad\", \"allocators\": 3}";
  expect_one_line_error(trace_ + " --alloc " + bad_spec, bad_spec);
  expect_one_line_error(trace_ + " --alloc libtailor", "needs libtailor.so: /nonexistent/libtailor.so does not exist",
                        "TAILOR_LIB=/nonexistent/libtailor.so");
  expect_one_line_error(trace_ + " --alloc glibc", "TAILOR_REPLAY_DRIVER=/nonexistent/driver: no such file",
                        "TAILOR_REPLAY_DRIVER=/nonexistent/driver");
  {
    // An empty list is CLI11's usage error (which adds its "Run with --help" line), naming the option.
    auto o = run_command(kTailor + " replay " + trace_ + " --alloc ,");
    EXPECT_NE(o.status, 0);
    EXPECT_TRUE(o.err.starts_with("--alloc: ")) << o.err;
  }
}

}  // namespace
