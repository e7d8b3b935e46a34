// `evalsched report`: a run's scores, one row per dataset and metric, in table, csv, json or md.
// By default the columns researchers know from the harnesses: lm-evaluation-harness's
// Tasks|Version|Filter|n-shot|Metric|Value|Stderr (lm_eval/utils.py make_table) and OpenCompass's
// summary dataset|version|metric|mode (opencompass/summarizers/default.py), then one column per
// checkpoint (its value, "± stderr" where the harness gave one), and an average row per metric
// shared by two or more datasets. `matrix`: the plain datasets x checkpoints view, which csv
// always is (scripts read its columns by position; json has every field).
// Pure: the daemon's JSON in, text out. The HTML report is report_html.hpp.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "common/util/table.hpp"

namespace acme::evalsched {

// The report with "averages" added: per metric (and filter) that two or more datasets report,
// the unweighted mean over those datasets, per checkpoint; a checkpoint lacking a number for any
// of them gets none (an average over fewer datasets is not comparable with the others').
nlohmann::json with_averages(const nlohmann::json& report);

// format: table, csv, json, md. Throws std::invalid_argument for another.
std::string render_report(const nlohmann::json& report, const std::string& format, const util::TableStyle& style = {},
                          bool matrix = false);

}  // namespace acme::evalsched
