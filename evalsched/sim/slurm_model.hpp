// A model of what slurmctld does with GPU jobs, enough to be fair to every policy: jobs run in
// priority order; a job that cannot start gets a reservation that fences whole nodes from its
// expected start ("the backfill scheduler reserves whole nodes", sched_config.html), computed
// from running jobs' time limits, not their real ends; a lower-priority job starts now only if
// its --time ends before the fence on its node. A job without --time carries the partition's
// DefaultTime into that test, which is why it rarely backfills.
#pragma once

#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "evalsched/core/planner.hpp"

namespace acme::evalsched::sim {

struct JobSpec {
    bool eval = false;
    int nodes = 1;                 // > 1: whole nodes
    int gpus_per_node = 1;
    double time_limit = 3600;
    // --time-min (0: none): backfill tests the job at this limit and, when it starts, raises
    // its limit as high as time_limit allows before the first reservation on its node
    // (backfill.c, _reset_job_time_limit). The granted limit is what on_granted sees.
    double time_min = 0;
    double priority_time = 0;      // smaller runs first: submit time, plus a nice for eval jobs
    std::optional<int> pinned_node;  // sbatch -w
    // At start, on the (first) node: returns how long the job will really run.
    std::function<double(double now, int node)> on_start;
    // Instead of on_start, for jobs that need their id and granted limit (pilots): returns how
    // long the job will run at most; such a job may end sooner through SlurmModel::finish.
    std::function<double(double now, int node, int job, double granted_limit)> on_granted;
    // At end; timed_out when Slurm killed it at its limit.
    std::function<void(double now, bool timed_out)> on_end;
};

struct Started {
    int job;
    double end;
    bool timed_out;
};

class SlurmModel {
public:
    SlurmModel(int nodes, int gpus_per_node);

    int submit(JobSpec spec);
    // One scheduling pass at `now`: returns the jobs it started, with when they end.
    // backfill = true: a backfill pass (every bf_interval): reservations for jobs that cannot
    // start, lower-priority jobs started only where they end before those reservations,
    // --time-min shrinking, and the published plan (windows()) refreshed. backfill = false:
    // the main scheduler, which runs at submit and job end: jobs in priority order at their
    // full --time, stopping at the first one that cannot start (job_scheduler.c marks the
    // partition blocked), with no --time-min shrink and no plan published.
    std::vector<Started> schedule(double now, bool backfill = true);
    // Per eval job: seconds from the allocation to its command running plus from its end to its
    // GPUs free again (scheduling latency, prolog, health gate, epilog). The job holds its GPUs
    // for it; the command starts that much after the allocation.
    void set_launch_cost(double seconds) { launch_s_ = seconds; }
    double launch_cost() const { return launch_s_; }
    // Frees the job's GPUs and calls its on_end.
    void finish(int job, double now, bool timed_out);

    // What squeue --start and sinfo tell evalschedd: per node the free GPUs and the time until
    // the backfill plan of higher-priority (non-eval) jobs fences it.
    std::vector<NodeWindow> windows(double now) const;

    int nodes() const { return static_cast<int>(free_.size()); }
    int gpus_per_node() const { return gpn_; }
    int free_gpus(int node) const { return free_[static_cast<std::size_t>(node)]; }
    int total_free_gpus() const;
    std::size_t pending() const { return pending_.size(); }
    std::size_t running() const { return running_.size(); }
    // GPUs held by jobs that are not evaluation: what no evaluation policy can use.
    int background_gpus() const { return background_gpus_; }

    static std::string node_name(int node) { return "n" + std::to_string(node + 1); }

private:
    struct Running {
        JobSpec spec;
        std::vector<int> nodes;
        double start = 0;
        double limit_end = 0;
    };
    // When node n will have `gpus` free, judging by running jobs' limits.
    double free_at(int node, int gpus, double now) const;
    void start(int id, JobSpec spec, std::vector<int> nodes, double now, std::vector<Started>& out);

    int gpn_;
    int next_id_ = 1;
    std::vector<int> free_;
    std::map<int, JobSpec> pending_;
    std::map<int, Running> running_;
    std::vector<double> bg_fence_;  // last backfill pass: fences set by non-eval pending jobs
    double launch_s_ = 0;
    int background_gpus_ = 0;
};

}  // namespace acme::evalsched::sim
