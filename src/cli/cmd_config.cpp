// SPDX-License-Identifier: MIT
// `tailor config [--for CMD] [--json]`: the configuration libtailor would use
// in a program started from this environment: each TAILOR_* parameter, its
// value and where it came from (default, environment, the config file's
// global lines, or its [program ...] section for CMD), and the DMM if one is
// set. It runs libtailor's own parser (tailor_alloc_core) on the file
// libtailor would read, so bad values are reported exactly as a program under
// LD_PRELOAD would report them.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdlib>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

#include "cli/commands.h"
#include "alloc/config.h"
#include "tune/program_run.h"

namespace tailor::cli {

namespace {

namespace al = tailor::alloc;

const char* source_name(al::Source s) {
  switch (s) {
    case al::Source::kEnv: return "env";
    case al::Source::kFile: return "file";
    case al::Source::kProgram: return "program";
    default: return "default";
  }
}

std::string human(std::int64_t v, const char* unit) {
  if (std::string_view(unit) != "bytes" || v <= 0) return fmt::format("{}", v);
  if (v % (1 << 30) == 0) return fmt::format("{}G", v >> 30);
  if (v % (1 << 20) == 0) return fmt::format("{}M", v >> 20);
  if (v % (1 << 10) == 0) return fmt::format("{}K", v >> 10);
  return fmt::format("{}", v);
}

const char* env_lookup(const char* name) { return std::getenv(name); }

struct ConfigCmdOptions {
  std::string program;  // --for
  bool json = false;
};

int run_config(const ConfigCmdOptions& o) {
  std::string exe;
  if (!o.program.empty()) exe = tune::resolve_executable(o.program);
  auto file = std::make_unique<al::ConfigFile>();
  al::config_file_load(*file, &env_lookup);
  al::Config c{};
  al::config_parse(c, &env_lookup, file->read ? file->text : nullptr, exe.empty() ? nullptr : exe.c_str(),
                   file->read ? file->path : nullptr);
  const int n = static_cast<int>(al::Param::kCount);
  if (o.json) {
    nlohmann::json out;
    out["config_file"] = file->read ? nlohmann::json(file->path) : nlohmann::json(nullptr);
    if (!exe.empty()) out["program"] = exe;
    out["section"] = c.section[0] ? nlohmann::json(c.section) : nlohmann::json(nullptr);
    out["dmm"] = c.dmm[0] ? nlohmann::json({{"value", c.dmm}, {"source", source_name(c.dmm_source)}})
                          : nlohmann::json(nullptr);
    for (const auto& [key, list] : {std::pair{"classes", &c.classes}, std::pair{"exact_classes", &c.exact_classes}})
      out[key] = list->count ? nlohmann::json({{"value", std::vector<std::uint32_t>(list->size, list->size + list->count)},
                                               {"source", source_name(static_cast<al::Source>(list->source))}})
                             : nlohmann::json(nullptr);
    for (int i = 0; i < n; ++i) {
      const al::ParamInfo& info = al::param_info(static_cast<al::Param>(i));
      out["parameters"].push_back({{"name", info.env}, {"value", c.value[i]}, {"unit", info.unit},
                                   {"source", source_name(c.source[i])}, {"description", info.description}});
    }
    fmt::print("{}\n", out.dump(2));
    return 0;
  }
  fmt::print("config file: {}\n",
             file->read ? file->path : "(none; set TAILOR_CONFIG or create ~/.config/tailor/tailor.conf)");
  if (!exe.empty())
    fmt::print("program:     {}\nsection:     {}\n", exe,
               c.section[0] ? fmt::format("[program {}]", c.section) : std::string("(none for this program)"));
  fmt::print("dmm:         {}\n",
             c.dmm[0] ? fmt::format("{} ({})", c.dmm, source_name(c.dmm_source)) : std::string("(none: libtailor's heaps)"));
  auto list = [](const al::ClassList& l, const char* none) {
    return l.count ? fmt::format("{} ({})", fmt::join(l.size, l.size + l.count, ","),
                                 source_name(static_cast<al::Source>(l.source)))
                   : std::string(none);
  };
  fmt::print("classes:     {}\n", list(c.classes, "(the default series)"));
  fmt::print("exact:       {}\n\n", list(c.exact_classes, "(none: every class a multiple of 16)"));
  fmt::print("{:<22} {:>10}  {:<6} {:<8} {}\n", "parameter", "value", "unit", "source", "meaning");
  for (int i = 0; i < n; ++i) {
    const al::ParamInfo& info = al::param_info(static_cast<al::Param>(i));
    fmt::print("{:<22} {:>10}  {:<6} {:<8} {}\n", info.env, human(c.value[i], info.unit), info.unit,
               source_name(c.source[i]), info.description);
  }
  return 0;
}

}  // namespace

void add_config(CLI::App& app, Runner& run) {
  auto [cmd, o] = add_command<ConfigCmdOptions>(
      app, run, "config",
      "Print libtailor's configuration (TAILOR_* and the config file), for any program or one program", run_config);
  cmd->add_option("--for", o->program,
                  "The program whose configuration to show (a path, or a name looked up in PATH): its [program ...] "
                  "section of the config file applies")
      ->option_text("CMD");
  cmd->add_flag("--json", o->json, "Print JSON instead of a table");
}

}  // namespace tailor::cli
