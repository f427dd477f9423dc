// SPDX-License-Identifier: MIT
// Registration of the subcommands of `tailor`. Each add_* declares its options
// on the app and stores in `run` the action to perform if it is selected.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <string>
#include <utility>

namespace tailor::cli {

using Runner = std::function<int()>;

/// A subcommand being declared: the subcommand, to declare its options on,
/// and the options they are stored in.
template <class Options>
struct Subcommand {
  CLI::App* cmd;
  std::shared_ptr<Options> o;
};

/// Declares the subcommand `name` on `app`, its options stored in a new
/// Options; if it is selected, `run` becomes `action(options)`.
template <class Options, class Action>
Subcommand<Options> add_command(CLI::App& app, Runner& run, std::string name, std::string description, Action action) {
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(std::move(name), std::move(description));
  cmd->callback([o, &run, action] { run = [o, action] { return action(*o); }; });
  return {cmd, o};
}

/// As add_command, for a subcommand of one trace: its first argument,
/// required, is the trace file, stored in `options.trace`.
template <class Options, class Action>
Subcommand<Options> add_trace_command(CLI::App& app, Runner& run, std::string name, std::string description,
                                      Action action) {
  Subcommand<Options> s = add_command<Options>(app, run, std::move(name), std::move(description), action);
  s.cmd->add_option("trace", s.o->trace, "Trace file")->required();
  return s;
}

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
