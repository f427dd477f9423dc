// SPDX-License-Identifier: MIT
// Writing a tuned configuration where libtailor reads it: a file of its own
// (TAILOR_CONFIG=FILE), or a [program KEY] section of the user's config file
// (~/.config/tailor/tailor.conf), replacing that program's earlier section
// and keeping every other line. Files are replaced atomically (write to a
// temporary file, rename), so a program starting meanwhile reads the old
// file or the new one, never half of one.
#pragma once

#include <string>

#include "tune/tunable_space.h"

namespace tailor::tune {

/// The user's config file: $HOME/.config/tailor/tailor.conf (what libtailor
/// reads when TAILOR_CONFIG is not set). Throws if HOME is not set.
std::string user_config_path();

/// Writes `text` to `path` atomically (util::write_file_atomically), making
/// its folder first: tune's outputs, the user's config and the DMM specs.
void write_file(const std::string& path, const std::string& text, const char* what);

/// `file`'s text with the sections `[program KEY]` removed (each up to the
/// next section header) and `section` (a whole section, header included)
/// appended. Lines outside those sections are kept as they are.
std::string replace_section(const std::string& file, const std::string& key, const std::string& section);

/// Reads `path` (missing: empty), replaces KEY's section, writes it back.
void install_section(const std::string& path, const std::string& key, const std::string& section);

/// Where a kept configuration went: absolute paths, empty where it was not written.
struct InstalledConfig {
  std::string written;    ///< the config file of its own
  std::string installed;  ///< "PATH [program KEY]" in the user's config
};

/// Writes `settings` under `header` as the config file `output`, with the
/// DMM spec `dmm_spec` beside it as OUTPUT.dmm.json when the settings name
/// a DMM; and, when `key` is not empty, as the [program KEY] section of the
/// user's config, the spec in that config's dmm/ folder.
InstalledConfig install(Settings settings, const std::string& dmm_spec, const std::string& header,
                        const std::string& output, const std::string& key);

}  // namespace tailor::tune
