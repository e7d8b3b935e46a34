// A metric job's trials as the core decides from them: the store's rows
// (evalsched/store/metric_jobs.hpp) turned into decide_metric's TrialProgress.
#pragma once

#include <vector>

#include "common/store/database.hpp"
#include "evalsched/core/decisions.hpp"
#include "evalsched/store/metric_jobs.hpp"

namespace acme::evalsched {

// Where each of a metric job's trials stands, for decide_metric (core/decisions.hpp).
std::vector<TrialProgress> metric_trial_progress(store::Database& db, const MetricRow& m);

}  // namespace acme::evalsched
