// gpuacct report --html: one self-contained page (inline CSS, JS and SVG; nothing fetched) that
// draws the same JSON the views print with --json, embedded in the page.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace acme::gpuacct {

struct ReportInput {
    nlohmann::json period;
    double generated = 0;
    std::string spool_dir;
    std::string source = "spool";  // "slurmdbd" or "spool": where the job records came from
    std::vector<nlohmann::json> views;                 // jobs, failures, nodes, summary: as --json prints them
    nlohmann::json events = nlohmann::json::array();   // GPU events in the period
    nlohmann::json trials = nlohmann::json::array();   // evaluation trial attempts, when given
};

std::string render_report(const ReportInput& input);

// Trial attempts as JSON; a store that cannot be read is reported on err and left out.
nlohmann::json load_trials(const std::string& evalsched_db, std::ostream& err);

}  // namespace acme::gpuacct
