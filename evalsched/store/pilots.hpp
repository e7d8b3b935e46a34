// Pilot allocations in evalschedd's store (mode = pilots, store v10): the pilots' rows and the
// transitions the scheduler makes on them and on the trials they run as job steps, each one
// transaction. A pilot is 'submitting' from just before slurm_submit_batch_job until its job id
// is recorded (the lifecycle adopts it by tag after a restart, as trial jobs), then 'queued',
// 'running' (its granted limit read back), 'releasing' (the daemon asked its batch script to
// exit) and 'ended'. A step is an attempt row with the pilot set: it is leased to that pilot
// while 'running'; when the pilot ends under it the attempt is 'lost' and the trial pending
// again, its attempt not counted.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/store/database.hpp"
#include "evalsched/store/rows.hpp"

namespace acme::evalsched {

struct PilotRow {
    std::int64_t id = 0, evaluation = 0;
    int gpus = 1, steps = 0;
    std::string node, tag, state, reason;
    std::optional<std::int64_t> job_id;
    double time_min_s = 0, time_limit_s = 0, submitted_at = 0;
    std::optional<double> granted_s, started_at;
    // Seconds left of its granted limit at `now` (the asked --time until slurmctld said).
    double remaining_s(double now) const;
};

// "evalsched-<instance>-<evaluation>-p<pilot>": the Slurm job name a restart finds it by.
std::string pilot_tag(const std::string& instance, std::int64_t evaluation, std::int64_t pilot);

PilotRow begin_pilot(store::Database& db, std::int64_t evaluation, int gpus, const std::string& node, double time_min_s,
                     double time_limit_s, double now);
void pilot_submitted(store::Database& db, const PilotRow& p, std::int64_t job_id);
// slurmctld refused it, or a restart found no job by its tag: the row is forgotten.
void pilot_never_submitted(store::Database& db, const PilotRow& p);
// Running on `node` since `started_at` with the limit slurmctld granted.
void pilot_running(store::Database& db, const PilotRow& p, const std::string& node, double granted_s, double started_at);
void pilot_releasing(store::Database& db, const PilotRow& p, const std::string& why);
// Ended: every step still leased to it is lost (its trial pending again, the attempt not
// counted), except steps whose trial was cancelled (they stay cancelled).
void pilot_ended(store::Database& db, const PilotRow& p, const std::string& how, double now);

std::optional<PilotRow> load_pilot(store::Database& db, std::int64_t id);
// submitting, queued, running, releasing.
std::vector<PilotRow> open_pilots(store::Database& db);

// Pilots of evaluations no longer active, in `states` (e.g. {"submitting", "queued"}).
std::vector<PilotRow> pilots_of_inactive(store::Database& db, const std::vector<std::string>& states);

// A trial starting as a step of `pilot`: a running attempt leased to it, one more attempt on
// the trial. time_limit_s: its in-pilot limit.
AttemptRow begin_step(store::Database& db, const TrialRow& trial, const PilotRow& pilot, double time_limit_s, double now);
void step_id_recorded(store::Database& db, const AttemptRow& a, std::int64_t step_id);
// The step could not run its trial for a reason that is not the trial's (srun could not be
// started, its pilot ended under it): the attempt 'lost', the trial pending, not counted.
void step_lost(store::Database& db, const AttemptRow& a, const std::string& why, double now);
// Steps leased to pilots (attempts with a pilot, 'running').
std::vector<AttemptRow> open_steps(store::Database& db);
// The trial's attempts lost because their pilot's server stopped answering (step_lost's
// reason): the first such loss is not counted against the trial, a second is.
std::int64_t server_losses(store::Database& db, std::int64_t trial);

}  // namespace acme::evalsched
