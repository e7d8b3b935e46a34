// Evaluations as a whole in the store: inserted with all their trials and metric jobs,
// cancelled, listed for the scheduler, and closed once nothing in them can change. Plain rows
// in and out; the daemon turns a submission and the core's trial set into them
// (evalsched/daemon/evaluations.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/store/database.hpp"
#include "evalsched/store/rows.hpp"

namespace acme::evalsched {

// A trial row to insert: the core's Trial flattened.
struct NewTrial {
    std::string key;       // the core's Trial::id
    std::string datasets;  // its parts' datasets, comma-separated
    int shard = 0, num_shards = 1, gpus = 1;
    double median_s = 0, p90_s = 0, startup_s = 0, metric_s = 0;
    bool conservative = false;
    std::string command;
};

// A metric job to insert: one CPU job after the trials (by key) holding a piece of its dataset.
struct NewMetric {
    std::string dataset, command;
    double estimate_s = 0;
    std::vector<std::string> after;
};

struct NewTrials {
    std::vector<NewTrial> trials;
    std::vector<NewMetric> metrics;
};

// An evaluation row to insert, as submitted.
struct NewEvaluation {
    std::string name, checkpoint, path, suite_name, suite_file;
    int priority = 0;
    double params_b = 0, checkpoint_bytes = 0;
    std::vector<std::string> environment;  // empty: none stored
    std::string stage;                      // the stage globs, one per line
    std::string suite_text;
    bool served = false;
    std::vector<std::pair<std::string, std::int64_t>> samples;  // dataset, sample count (> 0)
};

// A new evaluation and all its trials, in one transaction. Its output directory is
// <results_dir>/<id>, so the trials (whose commands name it) are made once the id is known:
// `make` runs inside the transaction. Returns the id.
std::int64_t insert_evaluation(store::Database& db, const NewEvaluation& e, const Caller& caller, const std::string& results_dir,
                               const std::function<NewTrials(const std::string& output_dir)>& make, double now);

// The environment stored with the evaluation, as stored (empty for one submitted without).
std::vector<std::string> stored_environment(store::Database& db, std::int64_t evaluation);
// The stage globs its trials copy (one per line; empty: the whole checkpoint).
std::string load_stage(store::Database& db, std::int64_t evaluation);

enum class CancelResult { cancelled, not_found, already_finished };
CancelResult cancel_evaluation(store::Database& db, std::int64_t id, const Caller& caller, double now);

std::vector<EvalInfo> active_evaluations(store::Database& db);
// How many of uid's evaluations are active (max_evaluations_per_user).
int active_evaluations_of(store::Database& db, std::uint32_t uid);
std::optional<EvalInfo> load_evaluation(store::Database& db, std::int64_t id);

// Closes the evaluation when none of its trials and metric jobs can change any more. Called
// inside the transaction that ended one of them.
void close_if_finished(store::Database& db, std::int64_t evaluation, double now);

}  // namespace acme::evalsched
