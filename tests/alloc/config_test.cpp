// SPDX-License-Identifier: MIT
// Tunables: numbers with size suffixes, environment over file over default,
// and rejection of bad values with a message naming the variable.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>

#include "alloc/config.h"

namespace tailor::alloc {
namespace {

std::map<std::string, std::string> g_env;
const char* fake_env(const char* name) {
  auto it = g_env.find(name);
  return it == g_env.end() ? nullptr : it->second.c_str();
}

std::int64_t v(const Config& c, Param p) { return c.value[static_cast<int>(p)]; }
Source src(const Config& c, Param p) { return c.source[static_cast<int>(p)]; }

TEST(Config, ParseNumber) {
  std::int64_t x = 0;
  EXPECT_TRUE(parse_number("4096", true, x));
  EXPECT_EQ(x, 4096);
  EXPECT_TRUE(parse_number("64K", true, x));
  EXPECT_EQ(x, 65536);
  EXPECT_TRUE(parse_number("2m", true, x));
  EXPECT_EQ(x, 2 << 20);
  EXPECT_TRUE(parse_number("1GiB", true, x));
  EXPECT_EQ(x, 1 << 30);
  EXPECT_TRUE(parse_number("-1", false, x));
  EXPECT_EQ(x, -1);
  EXPECT_FALSE(parse_number("64K", false, x));
  EXPECT_FALSE(parse_number("", true, x));
  EXPECT_FALSE(parse_number("12x", true, x));
  EXPECT_FALSE(parse_number("k", true, x));
  EXPECT_FALSE(parse_number("99999999999999999999", true, x));
  EXPECT_FALSE(parse_number("9999999999999G", true, x));
}

TEST(Config, DefaultsAreConsistent) {
  g_env.clear();
  Config c{};
  config_parse(c, &fake_env, nullptr);
  EXPECT_EQ(v(c, Param::kPageSize), 64 * 1024);
  EXPECT_EQ(c.slice_size, 64u * 1024);
  EXPECT_EQ(std::size_t{1} << c.slice_shift, c.slice_size);
  EXPECT_LE(c.small_max, c.middle_max);
  EXPECT_LE(c.middle_max, c.large_max);
  EXPECT_LE(c.large_max, c.segment_size / 2);
  for (int i = 0; i < static_cast<int>(Param::kCount); ++i) EXPECT_EQ(c.source[i], Source::kDefault);
}

TEST(Config, EnvironmentOverridesFile) {
  g_env = {{"TAILOR_PAGE_SIZE", "128K"}, {"TAILOR_PURGE_DELAY", "-1"}};
  const char* file =
      "# a comment\n"
      "page_size = 32K\n"
      "TAILOR_SEGMENT_SIZE = 8M   # trailing comment\n"
      "  class_spacing=2\n";
  Config c{};
  config_parse(c, &fake_env, file);
  EXPECT_EQ(v(c, Param::kPageSize), 128 * 1024);
  EXPECT_EQ(src(c, Param::kPageSize), Source::kEnv);
  EXPECT_EQ(v(c, Param::kSegmentSize), 8 << 20);
  EXPECT_EQ(src(c, Param::kSegmentSize), Source::kFile);
  EXPECT_EQ(v(c, Param::kClassSpacing), 2);
  EXPECT_EQ(c.class_bits, 1u);
  EXPECT_EQ(c.purge_delay_ms, -1);
  // Derived defaults follow the smaller segment.
  EXPECT_EQ(c.large_max, 4u << 20);
  EXPECT_EQ(c.middle_max, 128u * 1024);
  EXPECT_EQ(src(c, Param::kLargeMax), Source::kDefault);
}

TEST(Config, BadValuesRejectedByName) {
  g_env = {{"TAILOR_PAGE_SIZE", "100000"},     // not a power of two
           {"TAILOR_CLASS_SPACING", "banana"},  // junk
           {"TAILOR_REMOTE_BATCH", "0"},        // out of range
           {"TAILOR_LARGE_MAX", "128M"}};        // above SEGMENT_SIZE/2
  Config c{};
  testing::internal::CaptureStderr();
  config_parse(c, &fake_env, nullptr);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("TAILOR_PAGE_SIZE=100000 rejected: not a power of two"), std::string::npos) << err;
  EXPECT_NE(err.find("TAILOR_CLASS_SPACING=banana rejected"), std::string::npos) << err;
  EXPECT_NE(err.find("TAILOR_REMOTE_BATCH=0 rejected: out of range"), std::string::npos) << err;
  EXPECT_NE(err.find("TAILOR_LARGE_MAX=134217728 rejected"), std::string::npos) << err;
  EXPECT_EQ(v(c, Param::kPageSize), 64 * 1024);
  EXPECT_EQ(v(c, Param::kClassSpacing), 4);
  EXPECT_EQ(v(c, Param::kRemoteBatch), 64);
  EXPECT_EQ(v(c, Param::kLargeMax), 32 << 20);
  EXPECT_EQ(src(c, Param::kPageSize), Source::kDefault);
}

// Added classes (size_class.h): lists from the environment or the file,
// with their source; a bad list is one line naming it and no list.
TEST(Config, ClassListsAreReadOrRejectedWhole) {
  g_env = {{"TAILOR_EXACT_CLASSES", "24, 40,56"}};
  Config c{};
  config_parse(c, &fake_env, "classes = 144,208\n");
  ASSERT_EQ(c.exact_classes.count, 3u);
  EXPECT_EQ(c.exact_classes.size[0], 24u);
  EXPECT_EQ(c.exact_classes.size[2], 56u);
  EXPECT_EQ(c.exact_classes.source, static_cast<std::uint8_t>(Source::kEnv));
  ASSERT_EQ(c.classes.count, 2u);
  EXPECT_EQ(c.classes.size[1], 208u);
  EXPECT_EQ(c.classes.source, static_cast<std::uint8_t>(Source::kFile));
  const std::pair<const char*, const char*> bad[] = {
      {"208,144", "not in increasing order"},
      {"0,144", "a size of 0"},
      {"144,262144", "a size above MIDDLE_MAX or 64K"},
      {"144,152", "a size that is not a multiple of 16"},
      {"16", "a size of 16 or less (the first class)"},
      {"144;208", "not a list of sizes separated by commas"},
      {"", nullptr}};
  for (const auto& [text, why] : bad) {
    g_env = {{"TAILOR_CLASSES", text}};
    testing::internal::CaptureStderr();
    config_parse(c, &fake_env, nullptr);
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(c.classes.count, 0u) << text;
    if (why == nullptr) {
      EXPECT_EQ(err, "") << text;
      continue;
    }
    EXPECT_EQ(err, std::string("tailor: TAILOR_CLASSES=") + text + " rejected: " + why + "; using the default classes\n")
        << text;
  }
  g_env.clear();
  testing::internal::CaptureStderr();
  config_parse(c, &fake_env, "# learned\nexact_classes = 16\n", nullptr, "t.conf");
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "tailor: t.conf:2: exact_classes = 16 rejected: a size below 24 (a block holds two words); using the default "
            "classes\n");
  EXPECT_EQ(c.exact_classes.count, 0u);
}

TEST(Config, CrossChecks) {
  g_env = {{"TAILOR_SMALL_MAX", "16K"}, {"TAILOR_PAGE_SIZE", "64K"}};  // > PAGE_SIZE/8
  Config c{};
  testing::internal::CaptureStderr();
  config_parse(c, &fake_env, nullptr);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("TAILOR_SMALL_MAX=16384 rejected"), std::string::npos) << err;
  EXPECT_EQ(c.small_max, 1024u);
}

// Per-program sections: the most specific match applies (a path before a
// name, the last of equals), over the global lines; other programs'
// sections are ignored; the environment still wins.
TEST(Config, ProgramSectionsSelectTheRightEntry) {
  g_env = {{"TAILOR_REMOTE_BATCH", "7"}};
  const char* file =
      "page_size = 32K\n"
      "purge_delay = 500\n"
      "[program other]\n"
      "page_size = 16K\n"
      "[program wl_cfrac]\n"
      "page_size = 128K\n"
      "remote_batch = 99\n"
      "dmm = /tmp/by-name.json\n"
      "[program /opt/bench/wl_cfrac]\n"
      "class_spacing = 8   # by path: wins over the name\n"
      "dmm = /tmp/by-path.json\n"
      "[program wl_tree]\n"
      "class_spacing = 1\n";
  Config c{};
  config_parse(c, &fake_env, file, "/opt/bench/wl_cfrac", "t.conf");
  EXPECT_STREQ(c.section, "/opt/bench/wl_cfrac");
  EXPECT_EQ(v(c, Param::kClassSpacing), 8);
  EXPECT_EQ(src(c, Param::kClassSpacing), Source::kProgram);
  EXPECT_EQ(v(c, Param::kPageSize), 32 * 1024);  // the name's section is not merged in
  EXPECT_EQ(src(c, Param::kPageSize), Source::kFile);
  EXPECT_EQ(v(c, Param::kPurgeDelay), 500);
  EXPECT_EQ(v(c, Param::kRemoteBatch), 7);
  EXPECT_EQ(src(c, Param::kRemoteBatch), Source::kEnv);
  EXPECT_STREQ(c.dmm, "/tmp/by-path.json");
  EXPECT_EQ(c.dmm_source, Source::kProgram);

  Config by_name{};
  config_parse(by_name, &fake_env, file, "/home/u/wl_cfrac", "t.conf");
  EXPECT_STREQ(by_name.section, "wl_cfrac");
  EXPECT_EQ(v(by_name, Param::kPageSize), 128 * 1024);
  EXPECT_EQ(src(by_name, Param::kPageSize), Source::kProgram);
  EXPECT_EQ(v(by_name, Param::kClassSpacing), 4);
  EXPECT_STREQ(by_name.dmm, "/tmp/by-name.json");

  Config none{};
  config_parse(none, &fake_env, file, "/usr/bin/ls", "t.conf");
  EXPECT_STREQ(none.section, "");
  EXPECT_EQ(v(none, Param::kPageSize), 32 * 1024);
  EXPECT_EQ(v(none, Param::kClassSpacing), 4);
  EXPECT_STREQ(none.dmm, "");

  g_env = {{"TAILOR_DMM", "kng"}};
  Config env_dmm{};
  config_parse(env_dmm, &fake_env, file, "/opt/bench/wl_cfrac", "t.conf");
  EXPECT_STREQ(env_dmm.dmm, "kng");
  EXPECT_EQ(env_dmm.dmm_source, Source::kEnv);
}

TEST(Config, SectionMatchByPathOrName) {
  EXPECT_EQ(config_section_match("ls", 2, "/usr/bin/ls"), 1);
  EXPECT_EQ(config_section_match("/usr/bin/ls", 11, "/usr/bin/ls"), 2);
  EXPECT_EQ(config_section_match("/bin/ls", 7, "/usr/bin/ls"), 0);
  EXPECT_EQ(config_section_match("l", 1, "/usr/bin/ls"), 0);
  EXPECT_EQ(config_section_match("ls", 2, nullptr), 0);
}

TEST(Config, BadFileLinesNamedWithFileAndLine) {
  g_env.clear();
  const char* file =
      "page_size = 32K\n"
      "pagesize = 64K\n"
      "just words\n"
      "[section]\n"
      "[program wl]\n"
      "segment_size = 3M\n";
  Config c{};
  testing::internal::CaptureStderr();
  config_parse(c, &fake_env, file, "/x/wl", "my.conf");
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("tailor: my.conf:2: unknown parameter 'pagesize'; ignored"), std::string::npos) << err;
  EXPECT_NE(err.find("tailor: my.conf:3: not a setting (name = value) 'just words'"), std::string::npos) << err;
  EXPECT_NE(err.find("tailor: my.conf:4: unknown section"), std::string::npos) << err;
  EXPECT_NE(err.find("tailor: my.conf:6: segment_size = 3M rejected: not a power of two"), std::string::npos) << err;
  EXPECT_EQ(v(c, Param::kPageSize), 32 * 1024);
  EXPECT_EQ(v(c, Param::kSegmentSize), 128 << 20);
}

}  // namespace
}  // namespace tailor::alloc
