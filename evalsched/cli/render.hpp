// What the evalsched CLI prints: tables for status, an evaluation's datasets and trials, and
// priors (the report is report.hpp). Tables go through
// the shared renderer (common/util/table.hpp): capped to the terminal's width unless --long,
// '|'-separated with -P/--parsable2. Pure: JSON from the daemon in, text out, so the unit tests
// check what a user sees. watch's lines are in watch.hpp.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/util/table.hpp"

namespace acme::evalsched {

std::string render_status(const nlohmann::json& evaluations, const util::TableStyle& style = {});
// `now`: Unix seconds, for the ETA and the times trouble began.
std::string render_evaluation(const nlohmann::json& evaluation, const util::TableStyle& style = {}, double now = 0);
std::string render_priors(const nlohmann::json& priors, const util::TableStyle& style = {});

// "12/63 datasets scored (41,230/120,500 samples), 4 running, 2 scoring, 0 failed (trials 5/20 done)";
// "(... samples of 50 datasets)" when the suite gives the counts of only some.
std::string progress_summary(const nlohmann::json& evaluation);
// The ETA as watch and status show it: "ETA ~14m (estimate, 10:45)" with `relative`, else
// "ETA ~10:45 (estimate)"; "waiting for GPUs since 10:31:02: why" when nothing can start; "ETA unknown: ..." while
// slurmctld is unreachable; the state once the evaluation ended.
std::string eta_text(const nlohmann::json& evaluation, double now, bool relative);
// The forecast's basis, "" when the daemon gave none.
std::string eta_basis(const nlohmann::json& evaluation);
// One line per trouble: "trouble since 10:31:02: cannot reach slurmctld (...)" while the
// evaluation is active; once it has ended, only what happened to it, in the past tense:
// "was trouble at 10:31:02: mmlu retried: attempt 1 lost on n2 (...)".
std::vector<std::string> trouble_lines(const nlohmann::json& evaluation, double now);
// `path` in at most `width` columns (0: whole): its start replaced by "..." at a '/', so the
// last components stay ("/ckpt/a/b/run7/step-100" -> ".../run7/step-100"); never cut mid-name.
std::string shorten_path(std::string_view path, std::size_t width);
// A clock time for a Unix time: "10:31:02" today, else "2026-12-01 10:31".
std::string clock_time(double when, double now);

// A failed dataset (an entry of "dataset_list", or of a report's "failures") as whole lines:
// `heading` ("piqa failed: value_error (framework)"), then, each on its own line after
// `indent`, the line of the log that decided the failure and "log: <path>" where the daemon
// kept them. Wrapped at spaces to `width` columns (0: one line each), never cut; the log's
// line is never broken, however long its path.
std::vector<std::string> failure_lines(const std::string& heading, const nlohmann::json& failed, std::size_t width,
                                       std::string_view indent = "    ");
// `text` in lines of at most `width` columns (0: one line), broken at spaces; the lines after
// the first start with `indent`. A word longer than a line is never cut.
std::vector<std::string> wrap_words(std::string_view text, std::size_t width, std::string_view indent);

// A string member of the daemon's answer as one line of any length, control characters written
// \xNN; "" when it is absent or no string.
std::string string_member(const nlohmann::json& o, const char* key);

// A message for the terminal as one line: control characters written \xNN (an argument or a
// daemon's answer may carry escape sequences), at most `max` bytes, then "...".
std::string one_line(std::string_view text, std::size_t max = 200);

}  // namespace acme::evalsched
