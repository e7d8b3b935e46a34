// Precursor stage jobs' rows (store v11): one CPU-only Slurm job per (evaluation, node) that
// copies the checkpoint into the node-local cache before GPU trials land there. The
// transitions the scheduler makes (submitting, queued, running, then done, failed or
// cancelled), each one transaction, and the reads that decide what a trial on a node waits for.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/store/database.hpp"

namespace acme::evalsched {

struct StageRow {
    std::int64_t id = 0, evaluation = 0;
    int number = 1;                     // 1; 2 is its one retry
    std::string node, tag, state, reason;
    std::optional<std::int64_t> job_id;
};

// A stage job's retries: after this many failed, the node's trials stage themselves.
inline constexpr int kStageTries = 2;

// What a trial placed on a node waits for (stage_dependency in the scheduler).
struct StagePlan {
    enum class Kind { none, wait, submit, unavailable } kind = Kind::none;
    std::int64_t job_id = 0;  // wait: the stage job queued or running there
    int number = 1;           // submit: the number of the stage job to submit
};
// From the newest stage row of (evaluation, node), or none: done (the node holds the copy) or
// failed kStageTries times (trials stage themselves): none; queued or running: wait for it;
// none yet, or failed fewer times: submit one; submitting (a restart has yet to settle it) or
// cancelled: unavailable, place nothing there now.
StagePlan stage_plan(const std::optional<StageRow>& newest);

// "evalsched-<instance>-<evaluation>-stage<row id>": a trial's tag has a number there.
std::string stage_tag(const std::string& instance, std::int64_t evaluation, std::int64_t row);

std::optional<StageRow> newest_stage(store::Database& db, std::int64_t evaluation, const std::string& node);
std::optional<StageRow> load_stage_row(store::Database& db, std::int64_t id);
// Stage jobs Slurm may still hold: submitting, queued, running.
std::vector<StageRow> open_stages(store::Database& db);
// Nodes where an evaluation's precursor gave up (its trials stage themselves there).
std::vector<std::pair<std::int64_t, std::string>> stage_given_up(store::Database& db);

// Before slurm_submit_batch_job: a new row in 'submitting'.
StageRow begin_stage(store::Database& db, std::int64_t evaluation, const std::string& node, int number, double now);
void stage_submitted(store::Database& db, const StageRow& s, std::int64_t job_id);
// A restart found no job by its tag: forgotten, so the next round submits it again.
void stage_lost(store::Database& db, const StageRow& s);
// slurmctld refused it: a failed try (a refusal that repeats must not block the node forever).
void stage_refused(store::Database& db, const StageRow& s, const std::string& why, double now);
void stage_running(store::Database& db, const StageRow& s, const std::string& node);
struct StageOutcome {
    bool ok = false;
    std::string reason;                 // when it failed
    bool copied = false;
    double bytes = 0, seconds = 0;      // its stage.json, when it wrote one
    bool recorded = false;
};
// Done or failed; a stage.json becomes a staging row (and a model load when it copied), as a
// trial's does, so the staging priors learn from precursors too.
void finish_stage(store::Database& db, const StageRow& s, const StageOutcome& o, const std::string& checkpoint, double now);
// Stage jobs of evaluations no longer active (cancelled, or finished before they ran).
std::vector<StageRow> stages_to_kill(store::Database& db);
void stage_killed(store::Database& db, const StageRow& s, double now);

}  // namespace acme::evalsched
