// The scheduler: on every poll (and right after a submission or cancellation) it reconciles
// the attempts and metric jobs in its database with the jobs slurmctld knows by tag, ends the
// finished ones (scores, priors, a retry decided by the diagnosis engine), kills the jobs of
// cancelled evaluations, asks the core planner what to start in the cluster's windows and
// submits it, then chains each dataset's CPU metric job to its trials.
// It is the only code that talks to slurmctld; it runs in its own thread so a slow slurmctld
// never delays an API answer.
#pragma once

#include <atomic>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/diagnose/engine.hpp"
#include "common/slurm/cluster.hpp"
#include "common/slurm/jobs.hpp"
#include "common/store/database.hpp"
#include "evalsched/core/priors.hpp"
#include "evalsched/daemon/config.hpp"
#include "evalsched/daemon/state.hpp"

namespace acme::evalsched {

class Scheduler {
public:
    // `cluster_gpus`, when given, receives the GPUs of the usable nodes after every round: the
    // API sizes new evaluations' shards and bundles to it (options_for).
    Scheduler(const DaemonConfig& config, store::Database db, std::optional<diagnose::Engine> engine,
              std::atomic<int>* cluster_gpus = nullptr);
    // One round. Never throws: a failed round is logged and the next one tries again.
    void tick() noexcept;

private:
    // slurmctld's jobs by name (the tag); the newest job of a name.
    using TagIndex = std::map<std::string, const slurm::JobView*>;
    static TagIndex index_by_tag(const std::vector<slurm::JobView>& jobs);

    void reconcile(const TagIndex& by_tag);
    void reconcile_metrics(const TagIndex& by_tag);
    void cancel_jobs(const TagIndex& by_tag);
    void plan_and_submit(const std::vector<slurm::JobView>& jobs, const std::vector<slurm::NodeGpus>& nodes);
    void submit_metrics();
    Outcome judge(const AttemptRow& a, const TrialRow& t, const EvalInfo& e, const slurm::JobView* job);
    MetricOutcome judge_metric(const MetricRow& m, const EvalInfo& e, const slurm::JobView* job);
    // (category, reason) of a failed job from its log and Slurm's view of it.
    std::pair<std::string, std::string> diagnose_failure(const std::string& log, const EvalInfo& e, const slurm::JobView* job);
    bool submit(const TrialRow& t, const EvalInfo& e, const std::string& node, double time_limit_s);
    bool submit_metric(const MetricRow& waiting, const EvalInfo& e, const std::vector<std::int64_t>& after);
    void ensure_dirs(const EvalInfo& e);

    DaemonConfig config_;
    store::Database db_;
    std::optional<diagnose::Engine> engine_;
    PriorBook priors_;
    std::atomic<int>* cluster_gpus_;
};

}  // namespace acme::evalsched
