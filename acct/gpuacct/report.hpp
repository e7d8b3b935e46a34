// gpuacct report --html: one self-contained page (inline CSS, JS and SVG; nothing fetched) that
// draws aggregates computed here (report_aggregates.hpp) and the small views as --json prints
// them, embedded in the page: its size does not grow with the number of jobs.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "acct/gpuacct/core/report_aggregates.hpp"

namespace acme::gpuacct {

struct ReportInput {
    nlohmann::json period;
    double generated = 0;
    std::string spool_dir;
    std::string source = "spool";  // "slurmdbd" or "spool": where the job records came from
    std::vector<nlohmann::json> views;  // failures, nodes, summary: as --json prints them (never every job)
    std::vector<acct::UtilHistogram> util;            // per job type, GPU-hour weighted
    std::vector<acct::WasteRow> by_user, by_account;  // idle and low-utilisation GPU-hours, top N
    acct::XidSummary xids;
    nlohmann::json trials = nlohmann::json::array();  // evaluation trial attempts, when given
    nlohmann::json goodput;  // gpuacct goodput --json of the period (slurmdbd or node spools); null: not read
};

std::string render_report(const ReportInput& input);

// Trial attempts as JSON; a store that cannot be read is reported on err and left out.
nlohmann::json load_trials(const std::string& evalsched_db, std::ostream& err);

}  // namespace acme::gpuacct
