// SPDX-License-Identifier: MIT
// Fills the page template (assets/page.html) with the embedded assets and
// the data (html_page.h).
#include "report/html_page.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "report/report_assets.h"

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
  replace_once(page, "{{CHART_JS}}", assets::kChartJs);
  replace_once(page, "{{REPORT_JS}}", assets::kReportJs);
  replace_once(page, "{{DATA}}", script_safe_json(data));
  return page;
}

void write_file(const std::string& path, const std::string& html) {
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(path + ": cannot write the report (cannot create " + tmp + ")");
    out.write(html.data(), static_cast<std::streamsize>(html.size()));
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      throw std::runtime_error(path + ": cannot write the report");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw std::runtime_error(path + ": cannot write the report (rename failed)");
  }
}

}  // namespace tailor::report
