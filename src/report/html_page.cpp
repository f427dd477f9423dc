// SPDX-License-Identifier: MIT
// Fills the page template (assets/page.html) with the embedded assets and
// the data (html_page.h).
#include "report/html_page.h"

#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "report/report_assets.h"
#include "util/file.h"

namespace tailor::report {

namespace {

std::string escape_html(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// JSON inside <script>: '<' only occurs in strings, where \u003c means the
// same, so no "</script>" or "<!--" in the data can end the element.
std::string script_safe_json(const nlohmann::json& data) {
  const std::string text = data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '<')
      out += "\\u003c";
    else
      out += c;
  }
  return out;
}

void replace_once(std::string& page, const std::string& marker, std::string_view value) {
  const std::size_t at = page.find(marker);
  if (at == std::string::npos) throw std::logic_error("report page template: no " + marker);
  page.replace(at, marker.size(), value);
}

}  // namespace

std::string render_html(const nlohmann::json& data, const std::string& title) {
  std::string page(assets::kPageHtml);
  // Filled in order, each marker once: a value's text is never searched again.
  replace_once(page, "{{TITLE}}", escape_html(title));
  replace_once(page, "{{STYLE}}", assets::kReportCss);
  replace_once(page, "{{FLAME_CSS}}", assets::kFlameGraphCss);
  replace_once(page, "{{CHART_JS}}", assets::kChartJs);
  replace_once(page, "{{D3_JS}}", assets::kD3Js);
  replace_once(page, "{{FLAME_JS}}", assets::kFlameGraphJs);
  replace_once(page, "{{REPORT_JS}}", assets::kReportJs);
  replace_once(page, "{{DATA}}", script_safe_json(data));
  return page;
}

void write_file(const std::string& path, const std::string& html) { util::write_file_atomically(path, html, "report"); }

}  // namespace tailor::report
