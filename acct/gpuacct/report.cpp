#include "acct/gpuacct/report.hpp"

#include <ctime>
#include <ostream>

#include <fmt/format.h>
#include <fmt/chrono.h>
#include <fmt/ostream.h>

#include "acct/gpuacct/report_page.hpp"
#include "common/util/html.hpp"
#include "acct/gpuacct/core/eval_timeline.hpp"

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

nlohmann::json waste_json(const std::vector<acct::WasteRow>& rows) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : rows)
        out.push_back({{"name", r.name}, {"jobs", r.jobs}, {"gpu_hours", r.gpu_hours},
                       {"idle_gpu_hours", r.idle_gpu_hours}, {"low_gpu_hours", r.low_gpu_hours}});
    return out;
}

std::string utc(double epoch) {
    const std::time_t t = static_cast<std::time_t>(epoch);
    std::tm tm{};
    gmtime_r(&t, &tm);
    return fmt::format("{:%Y-%m-%d %H:%M} UTC", tm);
}

}  // namespace

std::string render_report(const ReportInput& input) {
    nlohmann::json util = nlohmann::json::array();
    for (const auto& h : input.util)
        util.push_back({{"type", h.type}, {"jobs", h.jobs}, {"gpu_hours", h.gpu_hours}, {"gpu_hours_at", h.gpu_hours_at}});
    nlohmann::json cells = nlohmann::json::array(), codes = nlohmann::json::array();
    for (const auto& c : input.xids.cells) {
        nlohmann::json by_code = nlohmann::json::object();
        for (const auto& [code, n] : c.codes) by_code[std::to_string(code)] = n;
        cells.push_back({{"node", c.node}, {"bucket", c.bucket}, {"count", c.count}, {"codes", by_code}});
    }
    for (const auto& c : input.xids.codes) codes.push_back({{"code", c.code}, {"count", c.count}, {"nodes", c.nodes}});
    nlohmann::json data = {{"period", input.period},
                           {"generated", static_cast<long long>(input.generated)},
                           {"timezone", "UTC"},
                           {"spool_dir", input.spool_dir},
                           {"source", input.source},
                           {"views", input.views},
                           {"util", util},
                           {"by_user", waste_json(input.by_user)},
                           {"by_account", waste_json(input.by_account)},
                           {"xids", {{"from", input.xids.from}, {"to", input.xids.to}, {"buckets", input.xids.buckets},
                                     {"cells", cells}, {"codes", codes}}},
                           {"trials", input.trials},
                           {"goodput", input.goodput}};
    std::string page(kReportPage);
    auto replace = [&](std::string_view key, const std::string& value) {
        for (auto at = page.find(key); at != std::string::npos; at = page.find(key, at + value.size()))
            page.replace(at, key.size(), value);
    };
    replace("@TITLE@", util::html_escape("GPU accounting report, generated " + utc(input.generated)));
    replace("@DATA@", script_safe(data.dump()));
    return page;
}

nlohmann::json load_trials(const std::string& evalsched_db, std::ostream& err) {
    nlohmann::json out = nlohmann::json::array();
    try {
        auto attempts = acct::read_trial_attempts(evalsched_db);
        // The newest ones: the timeline is for seeing how the scheduler packs trials, not a log.
        constexpr std::size_t kMaxTrials = 5000;
        if (attempts.size() > kMaxTrials) attempts.erase(attempts.begin(), attempts.end() - kMaxTrials);
        for (const auto& a : attempts)
            out.push_back({{"evaluation", a.evaluation}, {"trial", a.trial}, {"node", a.node}, {"state", a.state},
                           {"job_id", a.job_id ? nlohmann::json(*a.job_id) : nlohmann::json()}, {"gpus", a.gpus},
                           {"submitted", a.submitted}, {"ended", a.ended}});
    } catch (const std::exception& error) {
        fmt::print(err, "gpuacct: warning: trial timeline left out: {}: {}\n", evalsched_db, error.what());
    }
    return out;
}

}  // namespace acme::gpuacct
