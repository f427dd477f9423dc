// SPDX-License-Identifier: MIT
// `tailor config`: the configuration libtailor would use in a program started
// from this environment: each TAILOR_* parameter, its value and where the
// value came from (default, environment or config file). It runs libtailor's
// own parser (tailor_alloc_core), so bad values are reported exactly as a
// program under LD_PRELOAD would report them.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <vector>

#include "commands.h"
#include "tailor/tailor.h"

namespace tailor::cli {

namespace {

const char* source_name(tailor_config_source s) {
  switch (s) {
    case TAILOR_SOURCE_ENV: return "env";
    case TAILOR_SOURCE_FILE: return "file";
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

int run_config(bool json) {
  std::vector<tailor_config_entry> entries(tailor_config(nullptr, 0));
  tailor_config(entries.data(), entries.size());
  const char* file = tailor_config_file();
  if (json) {
    nlohmann::json out;
    out["config_file"] = file ? nlohmann::json(file) : nlohmann::json(nullptr);
    for (const auto& e : entries)
      out["parameters"].push_back({{"name", e.name}, {"value", e.value}, {"unit", e.unit},
                                   {"source", source_name(e.source)}, {"description", e.description}});
    fmt::print("{}\n", out.dump(2));
    return 0;
  }
  fmt::print("config file: {}\n\n", file ? file : "(none; set TAILOR_CONFIG or create ~/.config/tailor/tailor.conf)");
  fmt::print("{:<22} {:>10}  {:<6} {:<8} {}\n", "parameter", "value", "unit", "source", "meaning");
  for (const auto& e : entries)
    fmt::print("{:<22} {:>10}  {:<6} {:<8} {}\n", e.name, human(e.value, e.unit), e.unit, source_name(e.source),
               e.description);
  return 0;
}

}  // namespace

void add_config(CLI::App& app, Runner& run) {
  auto* cmd = app.add_subcommand("config", "Print libtailor's active configuration (TAILOR_* and config file)");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print JSON instead of a table");
  cmd->callback([&run, json] { run = [json] { return run_config(*json); }; });
}

}  // namespace tailor::cli
