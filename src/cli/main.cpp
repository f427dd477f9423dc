// SPDX-License-Identifier: MIT
// `tailor`: one command, one subcommand per pipeline stage (perf / heaptrack
// style). Each subcommand lives in its own cmd_*.cpp and registers itself here.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>

#include "cli/commands.h"
#include "tailor_version.h"

int main(int argc, char** argv) {
  CLI::App app{"tailor: record, analyze and tailor memory allocation"};
  app.require_subcommand(1);
  app.set_version_flag("--version", TAILOR_VERSION_LINE);
  app.footer("Run 'tailor SUBCOMMAND --help' for the options of each subcommand.");

  tailor::cli::Runner run;
  tailor::cli::add_record(app, run);
  tailor::cli::add_dump(app, run);
  tailor::cli::add_stats(app, run);
  tailor::cli::add_simulate(app, run);
  tailor::cli::add_search(app, run);
  tailor::cli::add_replay(app, run);
  tailor::cli::add_validate(app, run);
  tailor::cli::add_report(app, run);
  tailor::cli::add_tune(app, run);
  tailor::cli::add_pools(app, run);
  tailor::cli::add_config(app, run);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    return run ? run() : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tailor: %s\n", e.what());
    return 1;
  }
}
