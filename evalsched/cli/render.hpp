// What the evalsched CLI prints: tables for status, an evaluation's trials, the report
// (datasets x checkpoints) in table, csv, json or markdown, priors, and watch's progress line.
// Pure: JSON from the daemon in, text out, so the unit tests check what a user sees.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace acme::evalsched {

std::string render_status(const nlohmann::json& evaluations);
std::string render_evaluation(const nlohmann::json& evaluation);
// format: table, csv, json, md. Throws std::invalid_argument for another.
std::string render_report(const nlohmann::json& report, const std::string& format);
std::string render_priors(const nlohmann::json& priors);
// "[#########.........] 9/20 done, 4 running, 7 pending, 0 failed, ETA 2m10s"
std::string render_progress(const nlohmann::json& evaluation, int width = 30);

// A message for the terminal as one line: control characters written \xNN (an argument or a
// daemon's answer may carry escape sequences), at most `max` bytes, then "...".
std::string one_line(std::string_view text, std::size_t max = 200);

}  // namespace acme::evalsched
