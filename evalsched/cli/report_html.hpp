// evalsched report --format html: one self-contained page (inline CSS and SVG, no script,
// nothing fetched) with a line chart per dataset and metric over the run's steps, and the
// scorecard (datasets x steps) below it. A checkpoint's step is the last number in its label,
// as recovery orders checkpoints (step-12000, iter_0012000, checkpoint-12000); labels without
// one are placed after the numbered ones, in submission order.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace acme::evalsched {

std::string render_report_html(const nlohmann::json& report);

// The last run of digits in a label; -1 when it has none.
long long label_step(const std::string& label);

}  // namespace acme::evalsched
