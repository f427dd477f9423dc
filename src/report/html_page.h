// SPDX-License-Identifier: MIT
// The report as one self-contained HTML file: the page template, its style
// and script and Chart.js (all embedded in the binary at build time, see
// src/report/CMakeLists.txt) with the report's JSON inlined, so the file
// opens offline and fetches nothing.
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

namespace tailor::report {

/// The whole page for `data` (report_data.h), titled `title`.
std::string render_html(const nlohmann::json& data, const std::string& title);

/// Writes `html` to `path` through a temporary file renamed into place, so
/// that a failed write leaves no file (and no half-written one). Throws
/// std::runtime_error naming the path.
void write_file(const std::string& path, const std::string& html);

}  // namespace tailor::report
