#include "evalsched/daemon/metric_jobs.hpp"

namespace acme::evalsched {

std::vector<TrialProgress> metric_trial_progress(store::Database& db, const MetricRow& m) {
    std::vector<TrialProgress> out;
    for (auto& t : metric_trial_states(db, m)) out.push_back({std::move(t.key), std::move(t.state), std::move(t.reason), t.job_id});
    return out;
}

}  // namespace acme::evalsched
