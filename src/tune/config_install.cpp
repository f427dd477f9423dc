// SPDX-License-Identifier: MIT
#include "tune/config_install.h"
#include "util/file.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <stdexcept>

namespace tailor::tune {

namespace fs = std::filesystem;

namespace {

std::string trim(const std::string& s) {
  const auto a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos) return {};
  const auto b = s.find_last_not_of(" \t\r");
  return s.substr(a, b - a + 1);
}

// The key of a `[program KEY]` line (as libtailor reads it), or nullopt-like
// empty with is_header telling whether the line starts any section.
std::string section_key(const std::string& line, bool& is_header) {
  std::string t = trim(line.substr(0, line.find('#')));
  is_header = !t.empty() && t.front() == '[';
  if (!is_header || t.back() != ']') return {};
  t = trim(t.substr(1, t.size() - 2));
  if (t.rfind("program", 0) != 0 || t.size() < 8 || (t[7] != ' ' && t[7] != '\t')) return {};
  t = trim(t.substr(8));
  if (t.size() >= 2 && t.front() == '"' && t.back() == '"') t = t.substr(1, t.size() - 2);
  return t;
}

}  // namespace

std::string user_config_path() {
  const char* home = std::getenv("HOME");
  if (home == nullptr || *home == '\0') throw std::runtime_error("--install: HOME is not set");
  return std::string(home) + "/.config/tailor/tailor.conf";
}


std::string replace_section(const std::string& file, const std::string& key, const std::string& section) {
  std::istringstream in(file);
  std::string out, line;
  bool skipping = false;
  while (std::getline(in, line)) {
    bool header = false;
    const std::string k = section_key(line, header);
    if (header) skipping = k == key;
    if (!skipping) out += line + "\n";
  }
  while (out.size() >= 2 && out.ends_with("\n\n")) out.pop_back();
  if (!out.empty()) out += "\n";
  return out + section;
}

void write_file(const std::string& path, const std::string& text, const char* what) {
  const fs::path folder = fs::absolute(path).parent_path();
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec)
    throw std::runtime_error(path + ": cannot write the " + what + ": cannot create " + folder.string() + ": " +
                             ec.message());
  util::write_file_atomically(path, text, what);
}

void install_section(const std::string& path, const std::string& key, const std::string& section) {
  const std::string old = fs::exists(path) ? util::read_file(path, "config file") : std::string();
  write_file(path, replace_section(old, key, section), "config file");
}

}  // namespace tailor::tune

namespace tailor::tune {

InstalledConfig install(Settings settings, const std::string& dmm_spec, const std::string& header,
                        const std::string& output, const std::string& key) {
  InstalledConfig where;
  const bool has_dmm = !settings.dmm.empty();
  if (has_dmm) {  // the spec goes next to the config that names it
    const std::string spec = fs::absolute(output).string() + ".dmm.json";
    write_file(spec, dmm_spec, "DMM spec");
    settings.dmm = spec;
  }
  write_file(output, config_text(settings, header), "config file");
  where.written = fs::absolute(output).string();
  if (key.empty()) return where;
  const std::string path = user_config_path();
  if (has_dmm) {
    const std::string name = fs::path(key).filename().string();
    const std::string spec = (fs::path(path).parent_path() / "dmm" / (name + ".json")).string();
    fs::create_directories(fs::path(spec).parent_path());
    write_file(spec, dmm_spec, "DMM spec");
    settings.dmm = spec;
  }
  install_section(path, key, config_text(settings, header, key));
  where.installed = path + " [program " + key + "]";
  return where;
}

}  // namespace tailor::tune
