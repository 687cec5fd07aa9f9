#pragma once
// The HTML report: one self-contained file (inline SVG and CSS; no script, no font, no request to
// anywhere) with a section per part of the report model that is filled. Readable on a laptop
// screen and printed (grey-scale-safe charts, a page break before each section, data tables
// beside the charts).
#include <string>

#include "report/report_model.hpp"

namespace sextant {

std::string html_report(const ReportModel& model);

}  // namespace sextant
