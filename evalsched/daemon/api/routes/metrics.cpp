// GET /metrics on the optional TCP listener: the counters (counters.hpp) as Prometheus text.
#include <algorithm>
#include <cmath>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "evalsched/daemon/api/routes/route.hpp"
#include "evalsched/store/counters.hpp"

namespace acme::evalsched {
namespace {

// A Prometheus summary: quantiles 0.5, 0.9, 0.99 (nearest rank) of the recent values `v`;
// sum and count over all time (`total`), so they are counters as Prometheus expects.
std::string summary(std::string_view name, std::string_view help, std::vector<double> v, const Total& total) {
    std::string out = fmt::format("# HELP {} {}\n# TYPE {} summary\n", name, help, name);
    std::sort(v.begin(), v.end());
    for (double q : {0.5, 0.9, 0.99}) {
        if (v.empty()) break;
        const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
        out += fmt::format("{}{{quantile=\"{}\"}} {}\n", name, q, v[std::min(v.size(), std::max<std::size_t>(rank, 1)) - 1]);
    }
    out += fmt::format("{}_sum {}\n{}_count {}\n", name, total.sum, name, total.count);
    return out;
}

}  // namespace

std::string metrics_text(store::Database& db) {
    const Counts c = counts(db);
    std::string text = "# HELP evalsched_trials Trials by state.\n# TYPE evalsched_trials gauge\n";
    for (const auto& [state, n] : c.trials_by_state) text += fmt::format("evalsched_trials{{state=\"{}\"}} {}\n", state, n);
    text += "# HELP evalsched_metric_jobs CPU metric jobs (one per dataset with a metric_command) by state.\n"
            "# TYPE evalsched_metric_jobs gauge\n";
    for (const auto& [state, n] : c.metric_jobs_by_state) text += fmt::format("evalsched_metric_jobs{{state=\"{}\"}} {}\n", state, n);
    text += fmt::format("# HELP evalsched_evaluations_active Evaluations not finished.\n# TYPE evalsched_evaluations_active gauge\n"
                        "evalsched_evaluations_active {}\n", c.evaluations_active);
    text += fmt::format("# HELP evalsched_shared_storage_bytes_total Checkpoint bytes read from shared storage.\n"
                        "# TYPE evalsched_shared_storage_bytes_total counter\nevalsched_shared_storage_bytes_total {}\n", c.shared_bytes);
    text += fmt::format("# HELP evalsched_queue_depth Trials waiting for a GPU or in Slurm's queue.\n# TYPE evalsched_queue_depth gauge\n"
                        "evalsched_queue_depth {}\n", c.queue_depth);
    text += summary("evalsched_evaluation_makespan_seconds",
                    fmt::format("Submission to last trial end of finished evaluations (quantiles: the newest {}).", kRecentForMetrics),
                    c.makespans, c.makespan_total);
    if (!c.makespans.empty())
        text += fmt::format("# HELP evalsched_last_evaluation_makespan_seconds The newest finished evaluation's makespan.\n"
                            "# TYPE evalsched_last_evaluation_makespan_seconds gauge\nevalsched_last_evaluation_makespan_seconds {}\n",
                            c.makespans.back());
    text += summary("evalsched_prior_relative_error",
                    fmt::format("|run time - predicted median| / predicted median of finished unsharded trials (quantiles: the newest {}).",
                                kRecentForMetrics),
                    c.prior_errors, c.prior_error_total);
    return text;
}

}  // namespace acme::evalsched
