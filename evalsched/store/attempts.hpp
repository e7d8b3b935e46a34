// A trial's attempts, each one Slurm job: the transitions the scheduler makes (submitting,
// queued, running, then done, failed, retried or cancelled), each one transaction, and the
// reads that find the trials and attempts to act on.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/store/database.hpp"
#include "evalsched/store/rows.hpp"

namespace acme::evalsched {

std::vector<TrialRow> trials_in_state(store::Database& db, const std::vector<std::string>& states);
std::optional<TrialRow> load_trial(store::Database& db, std::int64_t id);
// Attempts Slurm may still hold a job for: submitting, queued, running (jobs of their own, not
// the job steps of pilots: pilots.hpp).
std::vector<AttemptRow> open_attempts(store::Database& db);
// Nodes holding (or copying) each evaluation's checkpoint: finished stagings and open attempts.
std::vector<std::pair<std::int64_t, std::string>> staged_nodes(store::Database& db);

// The Slurm job name of an attempt: evalschedd finds its jobs by it after a restart.
// "evalsched-<instance>-<evaluation>-<trial>-<attempt>".
std::string attempt_tag(const std::string& instance, std::int64_t evaluation, std::int64_t trial, int number);

// Before slurm_submit_batch_job: a new attempt in 'submitting', the trial with it.
AttemptRow begin_attempt(store::Database& db, const TrialRow& trial, const std::string& node, double time_limit_s, double now);
void attempt_submitted(store::Database& db, const AttemptRow& a, std::int64_t job_id);
// The submission did not happen (slurmctld refused, or a restart found no job by the tag):
// the attempt is forgotten and the trial is pending again.
void attempt_never_submitted(store::Database& db, const AttemptRow& a, const std::string& why);
// The trial cannot be started for a reason no retry cures (its output directory holds a
// symlink where logs/ belongs): failed with that reason, the evaluation closed if it was the last.
void trial_cannot_start(store::Database& db, const TrialRow& t, const std::string& why, double now);
void attempt_running(store::Database& db, const AttemptRow& a, const std::string& node);
// Its queued job was cancelled before it started (it waited on a stage job that failed:
// Slurm would keep it pending forever): the attempt is forgotten and the trial pending again.
void attempt_withdrawn(store::Database& db, const AttemptRow& a, const std::string& why);

struct Outcome {
    bool success = false;
    std::string node;
    std::optional<int> exit_code;
    std::string category, reason;    // the diagnosis when it failed
    // When it failed: the line that decided the diagnosis (else the log's last line), and the
    // job's log file, so a user sees why and where to read on without asking an admin.
    std::string evidence, log;
    bool retry = false;
    std::string exclude_node;        // on an infrastructure cause
    bool cancelled = false;
    // On success:
    // info: the harness's details of the score (result.json "details"), JSON text, "" for none.
    struct Score { std::string dataset, metric; double value; std::string info = {}; };
    std::vector<Score> scores;
    std::optional<double> run_s;     // inference seconds, for the priors
    std::optional<double> startup_s; // beyond the inference (trial_kind.cpp measured_startup)
    struct Stage { bool copied; double bytes, seconds; };
    std::optional<Stage> stage;
    // When its GPUs were freed (Unix seconds): the later of the wrapper's end (run.json,
    // sub-second) and Slurm's end time (whole seconds); 0 when the job never ran.
    double ended_at = 0;
};

// Ends an attempt and moves its trial on (done, pending for a retry, failed, cancelled), stores
// scores, priors and staging, and closes the evaluation when its last trial ends. One
// transaction.
void finish_attempt(store::Database& db, const AttemptRow& a, const Outcome& o, const std::string& size_class, double now);

// Attempts of cancelled trials whose jobs (not pilot steps) may still run.
std::vector<AttemptRow> attempts_to_cancel(store::Database& db);
void attempt_cancelled(store::Database& db, const AttemptRow& a, double now);

}  // namespace acme::evalsched
