#include "acct/gpuacct/report.hpp"

#include <ostream>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "acct/gpuacct/report_page.hpp"
#include "acct/gpuacct/core/eval_timeline.hpp"
#include "acct/gpuacct/core/sacct_time.hpp"

namespace acme::gpuacct {
namespace {

// JSON inside <script> must not close the element: '<' becomes its \u escape, still valid JSON.
std::string script_safe(const std::string& json) {
    std::string out;
    out.reserve(json.size());
    for (char c : json) {
        if (c == '<') out += "\\u003c";
        else out += c;
    }
    return out;
}

std::string html_escape(const std::string& s) {
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

}  // namespace

std::string render_report(const ReportInput& input) {
    nlohmann::json data = {{"period", input.period},
                           {"generated", static_cast<long long>(input.generated)},
                           {"spool_dir", input.spool_dir},
                           {"source", input.source},
                           {"views", input.views},
                           {"events", input.events},
                           {"trials", input.trials}};
    std::string page(kReportPage);
    auto replace = [&](std::string_view key, const std::string& value) {
        for (auto at = page.find(key); at != std::string::npos; at = page.find(key, at + value.size()))
            page.replace(at, key.size(), value);
    };
    replace("@TITLE@", html_escape("GPU accounting report, generated " + acct::format_sacct_time(input.generated)));
    replace("@DATA@", script_safe(data.dump()));
    return page;
}

nlohmann::json load_trials(const std::string& evalsched_db, std::ostream& err) {
    nlohmann::json out = nlohmann::json::array();
    try {
        for (const auto& a : acct::read_trial_attempts(evalsched_db))
            out.push_back({{"evaluation", a.evaluation}, {"trial", a.trial}, {"node", a.node}, {"state", a.state},
                           {"job_id", a.job_id ? nlohmann::json(*a.job_id) : nlohmann::json()}, {"gpus", a.gpus},
                           {"submitted", a.submitted}, {"ended", a.ended}});
    } catch (const std::exception& error) {
        fmt::print(err, "gpuacct: warning: trial timeline left out: {}: {}\n", evalsched_db, error.what());
    }
    return out;
}

}  // namespace acme::gpuacct
