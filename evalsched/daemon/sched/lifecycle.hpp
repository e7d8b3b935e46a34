// One lifecycle for every job evalschedd submits, parameterised by its kind (a trial's attempt,
// trial_kind.hpp; a dataset's metric job, metric_kind.hpp; a node's checkpoint staging,
// stage_kind.hpp; a pilot serving a suite's model, pilot_kind.hpp). Each is tagged (its Slurm job name)
// and marked 'submitting' before slurm_submit_batch_job, so after a restart its tag says
// whether slurmctld took it: adopted if so, submitted again if not, never twice. A job name is
// anyone's to choose, so a job is taken for a row's only when slurmctld runs it as the row's
// user (munge-authenticated: no other user can submit one) and its comment carries the token
// the daemon gave it (job_comment): another user's job named like a trial is never adopted,
// waited for or cancelled. Then it is
// marked running, judged once slurmctld no longer runs it (the kind reads what it left and
// the store retries or ends it), and killed when its evaluation is cancelled.
#pragma once

#include <concepts>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/slurm/cluster.hpp"
#include "evalsched/daemon/log.hpp"

namespace acme::evalsched {

// The comment of a job tagged `tag`: `what` (it starts "evalsched ", which gpuacct reads as an
// eval job), then "evalsched-job=<tag>".
std::string job_comment(const std::string& what, const std::string& tag);
// The job's comment carries the token of its own name (job_comment): the daemon submitted it,
// or its owner forged it for their own job (which only matters to that owner).
bool carries_own_token(const slurm::JobView& job);

// slurmctld's jobs that carry their token, by name (the tag).
using TagIndex = std::map<std::string, std::vector<const slurm::JobView*>>;
TagIndex index_by_tag(const std::vector<slurm::JobView>& jobs);
// The newest job tagged `tag` that runs as `uid`; null when there is none (or uid is unknown).
const slurm::JobView* find_tag(const TagIndex& by_tag, const std::string& tag, std::optional<std::uint32_t> uid);

// What a kind of job supplies. Its rows carry tag, state and job_id (rows.hpp).
template <class K>
concept JobKind = requires(K& k, typename K::Row& row, const typename K::Row& crow, const slurm::JobView* job, std::int64_t id,
                           const std::string& text) {
    { k.open() } -> std::same_as<std::vector<typename K::Row>>;     // submitting, queued, running
    { k.describe(crow) } -> std::same_as<std::string>;              // names it in log lines
    { k.owner(crow) } -> std::same_as<std::optional<std::uint32_t>>; // its evaluation's uid
    k.adopted(crow, id);          // a restart found its job by the tag: record it
    k.lost(crow);                 // a restart found no job by the tag: it may be submitted again
    k.refused(crow, text);        // slurmctld refused the submission
    k.submitted(crow, id);
    k.running(crow, text);        // on these nodes
    k.finish(crow, job);          // slurmctld no longer runs it (job null: purged): judge, store, log
    { k.to_kill() } -> std::same_as<std::vector<typename K::Row>>;  // of cancelled evaluations
    k.killed(crow);
    requires std::same_as<decltype(K::Row::tag), std::string>;
    requires std::same_as<decltype(K::Row::state), std::string>;
    requires std::same_as<decltype(K::Row::job_id), std::optional<std::int64_t>>;
};

// Every open job of the kind against what slurmctld knows by tag.
template <JobKind K>
void reconcile(K& kind, const TagIndex& by_tag) {
    for (typename K::Row row : kind.open()) {
        // One row's trouble (a store error, a record no reader foresaw) is that row's: it is
        // logged with the row, and the round goes on for every other user's jobs.
        try {
            const slurm::JobView* job = find_tag(by_tag, row.tag, kind.owner(row));
            if (row.state == "submitting") {
                // The daemon died between marking it and recording its job.
                if (!job) {
                    log_line("{}: no job tagged {} after a restart; submitting it again", kind.describe(row), row.tag);
                    kind.lost(row);
                    continue;
                }
                kind.adopted(row, job->job_id);
                log_line("{}: adopted job {} found by its tag after a restart", kind.describe(row), job->job_id);
                row.state = "queued";
                row.job_id = job->job_id;
            }
            if (job && job->job_id != row.job_id.value_or(0)) continue;  // not ours (a reused name)
            if (job && job->active()) {
                if (!job->pending() && row.state != "running") kind.running(row, job->nodes);
                continue;
            }
            kind.finish(row, job);
        } catch (const std::exception& ex) {
            log_line("{}: not reconciled this round: {}", kind.describe(row), ex.what());
        }
    }
}

// Submits a job the kind has marked 'submitting' under row.tag; records the job id or the refusal.
template <JobKind K>
std::optional<std::int64_t> submit_job(K& kind, const typename K::Row& row, const slurm::BatchJob& job) {
    std::string error;
    auto id = slurm::submit_batch(job, error);
    if (!id) {
        log_line("{}: slurmctld refused it: {}", kind.describe(row), error);
        kind.refused(row, error);
        return std::nullopt;
    }
    kind.submitted(row, *id);
    return static_cast<std::int64_t>(*id);
}

// Kills the jobs of cancelled evaluations: by job id, or (the daemon died while submitting
// it) the job its tag finds; marks each killed once slurmctld took the cancellation.
template <JobKind K>
void kill_cancelled(K& kind, const TagIndex& by_tag) {
    for (const auto& row : kind.to_kill()) {
        std::optional<std::int64_t> id = row.job_id;
        if (const slurm::JobView* job = find_tag(by_tag, row.tag, kind.owner(row)); !id && job) id = job->job_id;
        std::string error;
        if (id && !slurm::cancel_job(static_cast<std::uint32_t>(*id), error)) {
            log_line("cannot cancel the job of {} ({}): {}; trying again next round", kind.describe(row), row.tag, error);
            continue;
        }
        kind.killed(row);
    }
}

}  // namespace acme::evalsched
