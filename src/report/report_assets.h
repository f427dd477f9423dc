// SPDX-License-Identifier: MIT
// The files the report page is made of, embedded at build time by
// cmake/embed_assets.cmake (generated report_assets.cpp): the template,
// style and script in src/report/assets/, and Chart.js from Debian's
// libjs-chart.js.
#pragma once

#include <string_view>

namespace tailor::report::assets {

extern const std::string_view kPageHtml;
extern const std::string_view kReportCss;
extern const std::string_view kReportJs;
extern const std::string_view kChartJs;

}  // namespace tailor::report::assets
