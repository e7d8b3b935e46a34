// The scheduler: on every poll (and right after a submission or cancellation) it reconciles
// the attempts in its database with the jobs slurmctld knows by tag, ends the finished ones
// (scores, priors, a retry decided by the diagnosis engine), kills the jobs of cancelled
// evaluations, asks the core planner what to start in the cluster's windows and submits it.
// It is the only code that talks to slurmctld; it runs in its own thread so a slow slurmctld
// never delays an API answer.
#pragma once

#include <optional>
#include <string>

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
    Scheduler(const DaemonConfig& config, store::Database db, std::optional<diagnose::Engine> engine);
    // One round. Never throws: a failed round is logged and the next one tries again.
    void tick() noexcept;

private:
    void reconcile(const std::vector<slurm::JobView>& jobs);
    void cancel_jobs();
    void plan_and_submit(const std::vector<slurm::JobView>& jobs);
    Outcome judge(const AttemptRow& a, const TrialRow& t, const EvalInfo& e, const slurm::JobView* job,
                  const slurm::JobView* metric);
    bool submit(const TrialRow& t, const EvalInfo& e, const std::string& node, double time_limit_s);
    std::optional<std::int64_t> submit_metric(const TrialRow& t, const EvalInfo& e, const AttemptRow& a, std::uint32_t after);
    void ensure_dirs(const EvalInfo& e);

    DaemonConfig config_;
    store::Database db_;
    std::optional<diagnose::Engine> engine_;
    PriorBook priors_;
};

}  // namespace acme::evalsched
