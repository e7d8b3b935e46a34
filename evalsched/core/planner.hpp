// The planner: given the trials still to run and the cluster's windows (per node: free GPUs
// now, and how long until Slurm's backfill plan needs them), decide which trials to submit now,
// where, and with what --time; hold back the rest. The daemon calls it on every poll; the
// simulator calls the same function, so what the benchmark measures is what ships.
//
// Order: checkpoints first-come, and within one checkpoint longest-first (LPT; Graham 1969,
// within 4/3 of optimal) on the trial's critical path, inference plus its metric job, so the
// trials whose CPU scoring is long start early and their scoring overlaps other inference
// (Hu et al., NSDI'24, section 6). Placement: a node that already holds the checkpoint first,
// then the tightest window the trial fits (best fit keeps long windows for long trials).
#pragma once

#include <limits>
#include <span>
#include <string>
#include <vector>

namespace acme::evalsched {

struct NodeWindow {
    std::string node;
    int total_gpus = 0;
    int free_gpus = 0;
    // Seconds until the backfill plan needs this node's free GPUs; infinity when no pending job
    // is planned onto it (the daemon caps this at bf_window).
    double window_s = std::numeric_limits<double>::infinity();
    bool usable = true;                   // false: drained, down, reserved, not responding
    std::vector<std::string> staged;      // checkpoints already in node-local memory
};

struct PendingTrial {
    std::string id;
    std::string checkpoint;
    int gpus = 1;
    double median_s = 0;
    double p90_s = 0;
    double startup_s = 0;
    double metric_s = 0;
    double stage_s = 0;                   // copying the checkpoint onto a node that lacks it
    double checkpoint_rank = 0;           // earlier checkpoints first (e.g. submit time)
    bool conservative = false;            // no measurement, no sample count (Estimate::conservative)
};

struct PlanOptions {
    // --time = startup + p90 x (1 + margin_fraction) + margin_s (+ staging). Slurm kills at the
    // limit, so it must be honest *and* safe: p90 alone would time out one trial in ten.
    double margin_fraction = 0.2;
    double margin_s = 120;
};

struct Placement {
    std::string trial;
    std::string node;
    int gpus = 1;
    double time_limit_s = 0;
    std::string slurm_time;     // --time, minute resolution, rounded up
    bool stages_checkpoint = false;
    bool conservative = false;  // its --time is a guess, shown so a user knows why it is long
};

struct Hold {
    std::string trial;
    std::string reason;
};

struct Plan {
    std::vector<Placement> submit;
    std::vector<Hold> hold;
    // max(total work / usable GPUs, longest trial): no schedule of these trials on these
    // nodes can finish sooner, so the plan's quality is visible beside it.
    double lower_bound_s = 0;
    double total_work_gpu_s = 0;
    int usable_gpus = 0;
};

double time_limit(const PendingTrial& trial, bool staged, const PlanOptions& options);

Plan plan(std::span<const PendingTrial> trials, std::span<const NodeWindow> nodes, const PlanOptions& options = {});

// A few lines for `evalsched plan` and the logs: the placements, the holds and the bound.
std::string format_plan(const Plan& plan);

}  // namespace acme::evalsched
