// SPDX-License-Identifier: MIT
// The files the report page is made of, embedded at build time by
// cmake/embed_assets.cmake (generated report_assets.cpp): the template,
// style and script in src/report/assets/, Chart.js from Debian's
// libjs-chart.js, and d3-flame-graph with its d3 modules from npm.
#pragma once

#include <string_view>

namespace tailor::report::assets {

extern const std::string_view kPageHtml;
extern const std::string_view kReportCss;
extern const std::string_view kReportJs;
extern const std::string_view kChartJs;
extern const std::string_view kD3Js;           // d3's modules that d3-flame-graph uses (npm)
extern const std::string_view kFlameGraphJs;   // d3-flame-graph (npm)
extern const std::string_view kFlameGraphCss;

}  // namespace tailor::report::assets
