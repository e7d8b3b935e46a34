// The counters /metrics serves, read in a bounded number of queries: /metrics is answered on
// the API's event loop.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/store/database.hpp"

namespace acme::evalsched {

// A running total (store v6's totals table): it only goes up, so Prometheus' rate() works.
struct Total {
    double sum = 0;
    std::int64_t count = 0;
};

// Counters for /metrics. Every state of the store's CHECK lists is present, 0 included, so a
// series never vanishes when nothing is in that state.
struct Counts {
    std::vector<std::pair<std::string, std::int64_t>> trials_by_state;
    std::vector<std::pair<std::string, std::int64_t>> metric_jobs_by_state;
    std::int64_t evaluations_active = 0;
    std::int64_t queue_depth = 0;    // trials waiting for a GPU (pending) or in Slurm's queue
    double shared_bytes = 0;         // every staging's bytes read, ever
    // The summaries: quantiles over the newest finished (kRecentForMetrics at most, oldest
    // first); _sum and _count over all of them since the store was made.
    std::vector<double> makespans;
    Total makespan_total;
    // |run - predicted median| / predicted median of finished unsharded trials.
    std::vector<double> prior_errors;
    Total prior_error_total;
};
inline constexpr int kRecentForMetrics = 1000;
inline constexpr const char* kTrialStates[] = {"pending", "submitting", "queued", "running", "done", "failed", "cancelled"};
inline constexpr const char* kMetricJobStates[] = {"waiting", "submitting", "queued", "running", "done", "failed", "cancelled"};
Counts counts(store::Database& db);

}  // namespace acme::evalsched
