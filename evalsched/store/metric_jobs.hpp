// Metric jobs, one CPU job per dataset with a metric_command, after every trial holding a
// piece of it (all shards, or the bundle it rode in), so a dataset is scored once, over all its
// predictions, and the GPUs go back as soon as inference ends: their transitions, each one
// transaction, and the reads the scheduler decides from (core/decisions.hpp decides, on the
// daemon's side: evalsched/daemon/metric_jobs.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/store/database.hpp"
#include "evalsched/store/attempts.hpp"
#include "evalsched/store/rows.hpp"

namespace acme::evalsched {

// With the trials each one waits for.
std::vector<MetricRow> metrics_in_state(store::Database& db, const std::vector<std::string>& states);
// The datasets of an evaluation that a metric job scores: their trials write predictions, not
// result.json.
std::set<std::string> metric_datasets(store::Database& db, std::int64_t evaluation);

// Where one of a metric job's trials stands: its key, state and reason, and the job id of its
// open attempt once slurmctld took it, when that attempt is a job of its own (not a pilot's step).
struct MetricTrialState {
    std::string key, state, reason;
    std::optional<std::int64_t> job_id;
};
std::vector<MetricTrialState> metric_trial_states(store::Database& db, const MetricRow& m);

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
    std::string evidence, log;  // failed: the deciding line and the job's log (attempts.hpp Outcome)
    bool retry = false;
    std::vector<Outcome::Score> scores;
};
// done: scores stored; not_ready: a trial had not succeeded, waiting again (no failure counted);
// failed: waiting again for a retry, or failed. Closes the evaluation when nothing is left. One
// transaction.
void finish_metric(store::Database& db, const MetricRow& m, const MetricOutcome& o, double now);
// Its inference failed or was cancelled: it never runs.
void metric_given_up(store::Database& db, const MetricRow& m, const std::string& state, const std::string& reason, double now);
// A trial of theirs failed for good (not retried): its dataset's metric jobs will never score,
// so those waiting fail now, and those already in Slurm's queue (chained to the trial with
// afterany) fail and are killed (metrics_to_kill) instead of running to refuse. Inside the
// caller's transaction.
void stop_metric_jobs_of(store::Database& db, const TrialRow& t, const std::string& reason, double now);
// Metric jobs whose Slurm job may still exist and must not run (their evaluation cancelled, or
// stopped by stop_metric_jobs_of), and the mark that it was killed.
std::vector<MetricRow> metrics_to_kill(store::Database& db);
void metric_killed(store::Database& db, const MetricRow& m, double now);

}  // namespace acme::evalsched
