// What the API's JSON views read (evalsched/daemon/views.hpp assembles them): each row a JSON
// object keyed as the view shows it, read through one column table (columns.hpp: JsonColumn)
// so a SELECT list and its keys cannot drift apart. Each read keeps to what the caller may see
// (rows.hpp: visible_to), and costs a fixed number of queries however many evaluations match.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/store/database.hpp"
#include "evalsched/store/rows.hpp"

namespace acme::evalsched {

// Which evaluations summary_rows reads: one, a list (already known visible), or (neither set)
// every one the caller may see.
struct Which {
    std::optional<std::int64_t> id;
    const std::vector<std::int64_t>* ids = nullptr;
};

// An evaluation summary's makings, every row carrying its "evaluation" but `evaluations`
// (id, name, checkpoint, path, user, state, submitted_at, finished_at, suite, priority), in id
// order. The grouped rows are read only when some evaluation matched.
struct SummaryRows {
    std::vector<nlohmann::json> evaluations;
    std::vector<nlohmann::json> trial_counts;   // state, n
    std::vector<nlohmann::json> metric_counts;  // state, n
    std::vector<nlohmann::json> remaining;      // remaining_gpu_s, running_gpus of unfinished trials
    // What the per-dataset counts are made of (progress.hpp): trials, metric jobs, scores, sample counts.
    std::vector<nlohmann::json> dataset_trials, dataset_metrics, dataset_scores, dataset_samples;
    std::vector<nlohmann::json> staged;         // shared_bytes_read, copies
};
SummaryRows summary_rows(store::Database& db, const Which& which, const Caller& caller);

// One evaluation's lists as `status ID` shows them (JSON arrays): its trials, each with its
// newest attempt's node, job and step and its attempt_list; metric jobs; stage jobs; pilots;
// scores; and the sample counts its suite gave.
struct EvaluationRows {
    nlohmann::json trials, metrics, stages, pilots, scores, samples;
};
EvaluationRows evaluation_rows(store::Database& db, std::int64_t id);

// A report's makings for a run name (every checkpoint of it) or one evaluation id: the
// checkpoints (id, checkpoint) in submission order, their scores, and the unfinished trials
// and metric jobs that say why a dataset has none. Only `checkpoints` is read when it is empty.
struct ReportRows {
    nlohmann::json checkpoints;
    std::vector<nlohmann::json> scores, unscored_trials, unscored_metrics;
};
ReportRows report_rows(store::Database& db, const std::string& name_or_id, const Caller& caller);

}  // namespace acme::evalsched
