// SPDX-License-Identifier: MIT
// Registration of the subcommands of `tailor`. Each add_* declares its options
// on the app and stores in `run` the action to perform if it is selected.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

namespace tailor::cli {

using Runner = std::function<int()>;

void add_record(CLI::App& app, Runner& run);
void add_dump(CLI::App& app, Runner& run);
void add_stats(CLI::App& app, Runner& run);
void add_simulate(CLI::App& app, Runner& run);
void add_search(CLI::App& app, Runner& run);
void add_config(CLI::App& app, Runner& run);
void add_validate(CLI::App& app, Runner& run);
void add_replay(CLI::App& app, Runner& run);
void add_report(CLI::App& app, Runner& run);
void add_tune(CLI::App& app, Runner& run);
void add_pools(CLI::App& app, Runner& run);

/// The DMM grammar shipped with tailor (share/search/dmm.bnf next to the
/// binary's tree, or installed); throws if there is none.
std::string default_grammar();

}  // namespace tailor::cli
