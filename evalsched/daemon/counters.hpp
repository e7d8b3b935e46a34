// The counters /metrics serves, read in a bounded number of queries: /metrics is answered on
// the API's event loop.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/store/database.hpp"

namespace acme::evalsched {

// Counters for /metrics.
struct Counts {
    std::vector<std::pair<std::string, std::int64_t>> trials_by_state;
    std::vector<std::pair<std::string, std::int64_t>> metric_jobs_by_state;
    std::int64_t evaluations_active = 0;
    std::int64_t queue_depth = 0;    // trials waiting for a GPU (pending) or in Slurm's queue
    double shared_bytes = 0;
    // Submission to end of the newest finished evaluations (kRecentForMetrics at most), oldest first.
    std::vector<double> makespans;
    // |run - predicted median| / predicted median of the newest finished unsharded trials.
    std::vector<double> prior_errors;
};
inline constexpr int kRecentForMetrics = 1000;
Counts counts(store::Database& db);

}  // namespace acme::evalsched
