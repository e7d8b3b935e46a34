// The daemon's decisions about a trial or metric job once Slurm has told it how the job went:
// whether a failure is retried and where, when a dataset's metric job is submitted, and with
// what --time. Pure, so the simulator replays the same rules and the unit tests pin them; the
// daemon only gathers the facts (Slurm's view, the diagnosis, the store) and acts.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "evalsched/core/planner.hpp"

namespace acme::evalsched {

// --- failures --------------------------------------------------------------------------------
// `category` is the diagnosis engine's (diagnose::to_string): infrastructure, framework,
// script, unknown.

// Infrastructure: elsewhere, without that node. Unknown: once more, the benefit of the doubt.
// Framework and script failures repeat anywhere: report them, never loop. `failed_runs`
// counts this failure too, so max_attempts bounds the runs, retries included.
bool retries(const std::string& category, int failed_runs, int max_attempts);
// The node a retry must avoid: the one an infrastructure failure blames; else none ("").
std::string node_to_avoid(const std::string& category, const std::string& node);

// Node lists are comma-separated, as Slurm's --exclude takes them (a trial's excluded_nodes
// grows through evalsched/store/rows.hpp's add_node as its retries avoid nodes).
bool contains_node(const std::string& list, const std::string& node);

// --- one scheduling round --------------------------------------------------------------------

// Retries that must avoid a node are planned first, each alone on the nodes it may use, so the
// staged-node preference can never pin a retry to the node that failed it; the rest are planned
// together on what is left. `avoid`: trial id -> comma-separated nodes (absent: none). Each
// placement is assumed to be submitted (its GPUs taken, the checkpoint staged there) for the
// plans after it; a refused submission is seen by the next round.
Plan plan_round(std::span<const PendingTrial> trials, const std::map<std::string, std::string>& avoid,
                std::vector<NodeWindow> windows, const PlanOptions& options = {});

// --- metric jobs -----------------------------------------------------------------------------

// Where one of a metric job's trials stands.
struct TrialProgress {
    std::string key, state, reason;
    // Of its open attempt, once slurmctld took it, when that attempt is a job of its own. A step
    // in a pilot has none to chain to: the pilot's job ends only when the pilot is released,
    // after its last step, and a metric job chained to it waited for all of them.
    std::optional<std::int64_t> job_id;
};

// What a waiting metric job does next. Submitted as soon as every unfinished trial of its
// dataset is a job in Slurm's queue, chained to them with afterany (slurmctld starts it the
// moment inference ends); the job's own check refuses to score while a trial has not succeeded,
// and it goes back to waiting for the retry.
struct MetricDecision {
    enum class Kind { wait, submit, give_up } kind = Kind::wait;
    std::vector<std::int64_t> after;   // submit: the trial jobs still to finish
    std::string state, reason;         // give_up: failed or cancelled, and why
};
MetricDecision decide_metric(const std::vector<TrialProgress>& trials);

// A metric job's --time in seconds: twice the estimate plus two minutes, at least five
// minutes. Generous: an estimate of CPU scoring is rough, and a killed metric job costs a
// whole rescoring, not GPU time.
double metric_time_limit_s(double estimate_s);
// Its --time-min: twice the estimate plus two minutes, without the five-minute floor. On a
// busy cluster only backfill starts it, and backfill grants exactly --time-min: with the floor
// alone a metric job could not use a window shorter than five minutes and waited for the
// big job's reservation to pass, while its dataset's GPU work had long ended.
double metric_time_min_s(double estimate_s);

}  // namespace acme::evalsched
