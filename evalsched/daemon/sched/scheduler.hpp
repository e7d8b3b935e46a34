// The scheduler: on every poll (and right after a submission or cancellation) it reconciles
// the attempts and metric jobs in its database with the jobs slurmctld knows by tag, ends the
// finished ones (scores, priors, a retry decided by the diagnosis engine), kills the jobs of
// cancelled evaluations, asks the core planner what to start in the cluster's windows and
// submits it, then chains each dataset's CPU metric job to its trials.
// It is the only code that talks to slurmctld; it runs in its own thread so a slow slurmctld
// never delays an API answer. What happens to each job it submits (tag, reconcile, adopt after
// a restart, retry, kill) is one lifecycle for its four kinds of job: trials, metric jobs, staging jobs and pilots
// (lifecycle.hpp).
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <optional>
#include <vector>

#include "common/diagnose/engine.hpp"
#include "common/slurm/cluster.hpp"
#include "common/slurm/jobs.hpp"
#include "common/store/database.hpp"
#include "evalsched/core/priors.hpp"
#include "evalsched/daemon/config.hpp"
#include "evalsched/daemon/sched/lifecycle.hpp"
#include "evalsched/daemon/sched/metric_kind.hpp"
#include "evalsched/daemon/sched/pilot_kind.hpp"
#include "evalsched/daemon/sched/stage_kind.hpp"
#include "evalsched/daemon/sched_status.hpp"
#include "evalsched/daemon/sched/trial_kind.hpp"

namespace acme::evalsched {

class Scheduler {
public:
    // `status`, when given, receives what the API shows beside the store after every round: the
    // controller's trouble and each active evaluation's forecast (sched_status.hpp).
    // `cluster_gpus`, when given, receives the GPUs of the usable nodes after every round: the
    // API sizes new evaluations' shards and bundles to it (options_for).
    // `wake`, when given, makes the scheduler's thread run a round now: a pilot's step ended.
    Scheduler(const DaemonConfig& config, store::Database db, std::optional<diagnose::Engine> engine,
              std::atomic<int>* cluster_gpus = nullptr, SchedulerStatus* status = nullptr, std::function<void()> wake = {});
    // Its kinds hold references to its configuration and connection.
    Scheduler(const Scheduler&) = delete;
    Scheduler& operator=(const Scheduler&) = delete;
    // One round. Never throws: a failed round is logged and the next one tries again.
    void tick() noexcept;
    // The cheap look between rounds (change_poll_interval): true when slurmctld's view of the
    // daemon's own jobs (tagged, carrying their token) changed since the last look, a job
    // ended or started, so a round should run now rather than at the next poll_interval.
    // False when nothing changed or slurmctld cannot be asked (the timer's round reports that).
    bool jobs_changed() noexcept;

    // Precursor staging: what GPU work of `e` placed on `node` waits for. "" when the node holds
    // a complete copy of e's checkpoint (or its stage job failed twice: trials stage themselves
    // there); "afterok:<job>" for the stage job queued or running there, submitting one when
    // there is none yet; nullopt when staging there cannot be done now (place no GPU work of
    // `e` on that node this round).
    std::optional<std::string> stage_dependency(const EvalInfo& e, const std::string& node);

private:
    // Trials whose job waits on a stage job that failed (Slurm: DependencyNeverSatisfied, pending
    // forever): cancelled and pending again, so the next round places them anew.
    void withdraw_orphans(const TagIndex& by_tag);
    void plan_and_submit(const std::vector<slurm::JobView>& jobs, const std::vector<slurm::NodeGpus>& nodes);
    // mode = pilots: the pilots plan_pilots asks for in the nodes' windows, submitted.
    void submit_pilots(const std::vector<TrialRow>& pending, const std::map<std::int64_t, EvalInfo>& by_id, const PlanOptions& options,
                       const std::vector<slurm::JobView>& jobs, const std::vector<slurm::NodeGpus>& nodes);
    void submit_metrics();
    // The forecast of every active evaluation (core/forecast.hpp), published to status_.
    void publish_forecast(const std::vector<slurm::JobView>& jobs, const std::vector<slurm::NodeGpus>& nodes);
    PendingTrial to_pending(const TrialRow& t, const EvalInfo& e) const;
    // The nodes' windows as the planner sees them; `cap`: the horizon (bf_window, or infinity).
    std::map<std::string, NodeWindow> windows_of(const std::vector<slurm::JobView>& jobs, const std::vector<slurm::NodeGpus>& nodes,
                                                 double cap);

    DaemonConfig config_;
    store::Database db_;
    std::optional<diagnose::Engine> engine_;
    PriorBook priors_;
    std::atomic<int>* cluster_gpus_;
    SchedulerStatus* status_;
    std::map<std::string, std::string> last_holds_;  // trial id -> the planner's reason, last round
    std::time_t jobs_since_ = 0;                      // slurmctld's last_update at the last look
    std::map<std::uint32_t, std::uint32_t> our_jobs_; // job id -> state at the last look
    // Submitted trials, one freed GPU each: how long it stayed idle (TrialKind::freed_at).
    void note_refill(int trials);
    // The kinds of job it submits, each through the one lifecycle (lifecycle.hpp).
    TrialKind trials_;
    MetricKind metrics_;
    StageKind stages_;
    PilotKind pilots_;
};

}  // namespace acme::evalsched
