// evalschedd's state in its SQLite file (schema: common/store/evalsched_store, v5): the writes
// that move evaluations, trials and attempts between states, each one transaction, and the
// reads the API serves. Both the API thread and the scheduler thread use it, each with its
// own connection (WAL lets readers run beside the one writer).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/store/database.hpp"
#include "evalsched/core/decisions.hpp"
#include "evalsched/core/trials.hpp"
#include "evalsched/daemon/api_request.hpp"

namespace acme::evalsched {

struct Caller {
    std::uint32_t uid = 0, gid = 0;
    std::string user;
    bool admin = false;   // root or a member of admin_group: sees every evaluation
};

// A new evaluation and all its trials, in one transaction. Its output directory is
// <results_dir>/<id>, so the trials (whose commands name it) are made once the id is known.
// Returns the id.
std::int64_t create_evaluation(store::Database& db, const SubmitRequest& req, const Caller& caller,
                               const std::string& results_dir, const std::function<TrialSet(const std::string& output_dir)>& make,
                               double now);

// nullopt: no such evaluation, or another user's (the caller cannot tell which: no leak).
std::optional<nlohmann::json> evaluation_json(store::Database& db, std::int64_t id, const Caller& caller);
nlohmann::json list_json(store::Database& db, const Caller& caller);
// list_json(db, caller).dump(), keeping each evaluation's summary until its version changes
// (the store bumps it on every change a summary shows): a busy scheduler committing every
// round costs the next list one rebuilt summary per changed evaluation, not a whole-store
// read. One per connection (not thread-safe).
class SummaryCache {
public:
    std::string list_text(store::Database& db, const Caller& caller);
    int rebuilt() const { return rebuilt_; }  // summaries built so far (tests)

private:
    static constexpr std::size_t kMaxEntries = 100000;
    struct Entry {
        std::int64_t version;
        std::string text;
    };
    std::unordered_map<std::int64_t, Entry> entries_;
    int rebuilt_ = 0;
};

// Stamps that change whenever the answer would: the evaluation's version (nullopt when the
// caller may not see it), and "id:version,..." of the evaluations a report covers.
std::optional<std::int64_t> evaluation_version(store::Database& db, std::int64_t id, const Caller& caller);
std::string report_versions(store::Database& db, const std::string& name_or_id, const Caller& caller);

// Scores for a run name (every checkpoint of it) or one evaluation id: datasets x checkpoints.
std::optional<nlohmann::json> report_json(store::Database& db, const std::string& name_or_id, const Caller& caller);
nlohmann::json priors_json(store::Database& db, const std::string& dataset);

// priors_json without re-reading every prior run on each request: the summary of all datasets
// is kept until prior_runs changes (a trial finishing with a run time adds one, pruning drops
// some), which costs two index lookups to check. One per connection (not thread-safe).
class PriorsCache {
public:
    nlohmann::json get(store::Database& db, const std::string& dataset);
    int rebuilds() const { return rebuilds_; }  // how often it read prior_runs (tests)

private:
    bool valid_ = false;
    std::pair<std::int64_t, std::int64_t> key_{0, 0};  // newest id, row count
    nlohmann::json all_;
    int rebuilds_ = 0;
};

enum class CancelResult { cancelled, not_found, already_finished };
CancelResult cancel_evaluation(store::Database& db, std::int64_t id, const Caller& caller, double now);

// --- the scheduler's side -------------------------------------------------------------------

struct EvalInfo {
    std::int64_t id = 0;
    std::string name, checkpoint, path, user, output_dir;
    std::uint32_t uid = 0, gid = 0;
    double checkpoint_bytes = 0, params_b = 0, submitted_at = 0;
    int priority = 0;
    std::string key() const { return name + "/" + checkpoint; }  // the core's Checkpoint::name
};

struct TrialRow {
    std::int64_t id = 0, evaluation = 0;
    std::string trial_key, datasets, command, excluded_nodes, state;
    int shard = 0, num_shards = 1, gpus = 1, attempts = 0;
    double median_s = 0, p90_s = 0, startup_s = 0, metric_s = 0;
    bool conservative = false;
    std::vector<std::string> parts() const;  // datasets split on ','
};

struct AttemptRow {
    std::int64_t id = 0, trial = 0;
    int number = 0;
    std::string tag, node, state;
    std::optional<std::int64_t> job_id;
    double submitted_at = 0;
};

std::vector<EvalInfo> active_evaluations(store::Database& db);
std::optional<EvalInfo> load_evaluation(store::Database& db, std::int64_t id);
std::vector<TrialRow> trials_in_state(store::Database& db, const std::vector<std::string>& states);
std::optional<TrialRow> load_trial(store::Database& db, std::int64_t id);
// Attempts Slurm may still hold a job for: submitting, queued, running.
std::vector<AttemptRow> open_attempts(store::Database& db);
// Nodes holding (or copying) each evaluation's checkpoint: finished stagings and open attempts.
std::vector<std::pair<std::int64_t, std::string>> staged_nodes(store::Database& db);

// The Slurm job name of an attempt: evalschedd finds its jobs by it after a restart.
// "evalsched-<instance>-<evaluation>-<trial>-<attempt>".
std::string attempt_tag(const std::string& instance, std::int64_t evaluation, std::int64_t trial, int number);
// This database's instance id (created with the schema).
std::string instance_id(store::Database& db);

// Before slurm_submit_batch_job: a new attempt in 'submitting', the trial with it.
AttemptRow begin_attempt(store::Database& db, const TrialRow& trial, const std::string& node, double time_limit_s, double now);
void attempt_submitted(store::Database& db, const AttemptRow& a, std::int64_t job_id);
// The submission did not happen (slurmctld refused, or a restart found no job by the tag):
// the attempt is forgotten and the trial is pending again.
void attempt_never_submitted(store::Database& db, const AttemptRow& a, const std::string& why);
void attempt_running(store::Database& db, const AttemptRow& a, const std::string& node);

struct Outcome {
    bool success = false;
    std::string node;
    std::optional<int> exit_code;
    std::string category, reason;    // the diagnosis when it failed
    bool retry = false;
    std::string exclude_node;        // on an infrastructure cause
    bool cancelled = false;
    // On success:
    struct Score { std::string dataset, metric; double value; };
    std::vector<Score> scores;
    std::optional<double> run_s;     // inference seconds, for the priors
    struct Stage { bool copied; double bytes, seconds; };
    std::optional<Stage> stage;
};

// Ends an attempt and moves its trial on (done, pending for a retry, failed, cancelled), stores
// scores, priors and staging, and closes the evaluation when its last trial ends. One
// transaction.
void finish_attempt(store::Database& db, const AttemptRow& a, const Outcome& o, const std::string& size_class, double now);

// Attempts of cancelled trials whose jobs may still run.
std::vector<AttemptRow> attempts_to_cancel(store::Database& db);
void attempt_cancelled(store::Database& db, const AttemptRow& a, double now);

// --- metric jobs -----------------------------------------------------------------------------
// One CPU job per dataset with a metric_command, after every trial holding a piece of it (all
// shards, or the bundle it rode in), so a dataset is scored once, over all its predictions, and
// the GPUs go back as soon as inference ends.

struct MetricRow {
    std::int64_t id = 0, evaluation = 0;
    std::string dataset, command, tag, state;
    int submissions = 0, failures = 0;
    double estimate_s = 0;
    std::optional<std::int64_t> job_id;
    std::string after_jobs;             // what its newest submission was chained to
    std::vector<std::int64_t> trials;   // the trials it waits for
};

// With the trials each one waits for.
std::vector<MetricRow> metrics_in_state(store::Database& db, const std::vector<std::string>& states);
// The datasets of an evaluation that a metric job scores: their trials write predictions, not
// result.json.
std::set<std::string> metric_datasets(store::Database& db, std::int64_t evaluation);

// Where each of a metric job's trials stands, for decide_metric (core/decisions.hpp).
std::vector<TrialProgress> metric_trial_progress(store::Database& db, const MetricRow& m);

// "evalsched-<instance>-<evaluation>-m<metric>-<submission>"
std::string metric_tag(const std::string& instance, std::int64_t evaluation, std::int64_t metric, int submission);
// Before slurm_submit_batch_job: 'submitting' under a new tag.
MetricRow begin_metric(store::Database& db, const MetricRow& m, double now);
// Records the job even when the evaluation was cancelled meanwhile (the job is then killed).
void metric_submitted(store::Database& db, const MetricRow& m, std::int64_t job_id, const std::string& after_jobs);
// slurmctld refused it, or a restart found no job by its tag: waiting again.
void metric_never_submitted(store::Database& db, const MetricRow& m, const std::string& why);
void metric_running(store::Database& db, const MetricRow& m, const std::string& node);

struct MetricOutcome {
    enum class Kind { done, not_ready, failed } kind = Kind::failed;
    std::string node, category, reason;
    bool retry = false;
    std::vector<Outcome::Score> scores;
};
// done: scores stored; not_ready: a trial had not succeeded, waiting again (no failure counted);
// failed: waiting again for a retry, or failed. Closes the evaluation when nothing is left. One
// transaction.
void finish_metric(store::Database& db, const MetricRow& m, const MetricOutcome& o, double now);
// Its inference failed or was cancelled: it never runs.
void metric_given_up(store::Database& db, const MetricRow& m, const std::string& state, const std::string& reason, double now);
// Metric jobs of cancelled evaluations whose Slurm job may still exist, and the mark that it was killed.
std::vector<MetricRow> metrics_to_kill(store::Database& db);
void metric_killed(store::Database& db, const MetricRow& m, double now);

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
