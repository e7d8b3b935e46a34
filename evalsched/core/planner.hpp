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
#include <map>
#include <optional>
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

// --time for a trial: startup, p90 with margins, staging unless staged; whole minutes.
double time_limit(const PendingTrial& trial, bool staged, const PlanOptions& options);

Plan plan(std::span<const PendingTrial> trials, std::span<const NodeWindow> nodes, const PlanOptions& options = {});
// The order plan() considers trials in (checkpoint rank, then the longest critical path first);
// the forecast (forecast.hpp) replays the same order.
std::vector<const PendingTrial*> plan_order(std::span<const PendingTrial> trials);

// Pilot jobs (Phung & Thain, arXiv:2510.14024: keep the loaded model resident across tasks).
// A pilot is one Slurm job on one node that loads a checkpoint once and then pulls trials of
// that checkpoint back to back, longest first, each only if its honest limit (p90 x (1 +
// margin) + margin, no startup: the model is loaded) fits in what is left of the pilot's
// granted time. It is submitted with --time-min (startup, staging when the node lacks the
// checkpoint, and the shortest trial it could take) and --time (the window, capped), so
// Slurm's backfill sizes it to the hole (_reset_job_time_limit) and reports the grant. A pilot
// leaves as soon as nothing fits, so idle pilots never sit on GPUs.
struct PilotOptions {
    PlanOptions trial;          // margins of the trials a pilot takes
    double max_s = 2 * 3600;    // a pilot's --time at most: polite to the backfill plan
};

struct PilotRequest {
    std::string node;
    std::string checkpoint;
    int gpus = 1;
    double time_min_s = 0;      // --time-min
    double time_limit_s = 0;    // --time (<= the node's window)
    std::string slurm_time_min, slurm_time;
    bool stages_checkpoint = false;
    // The node's window once the pilot may start (after the staging it waits for); infinity
    // when no pending job is planned onto the node. pilot_ask sizes --time-min to it.
    double window_s = std::numeric_limits<double>::infinity();
};

// What a pilot asks Slurm for, in whole minutes (seconds here). Both bounds carry launch_s:
// Slurm counts a limit from the allocation, before the prolog and the job's own start-up.
// --time-min is the most of the node's window the pilot can use, not the least it needs:
// Slurm 22.05's backfill grants a job exactly its --time-min (on the minicluster a job with
// --time-min=1 --time=2, the next reservation 5 minutes away, ran with 1:00), so a pilot that
// asked for the least kept only the least and was released after a trial or two. The window
// is read up to start_slack_s (a backfill cycle) before the pilot can start, so that much
// comes off it; where nothing bounds the window, --time-min is --time.
struct PilotAsk {
    double time_min_s = 0;
    double time_limit_s = 0;
};
PilotAsk pilot_ask(const PilotRequest& request, double launch_s, double start_slack_s);

struct PilotPlan {
    std::vector<PilotRequest> submit;
    std::vector<Hold> hold;     // trials no pilot (submitted now or already serving) will take
    double lower_bound_s = 0;
    double total_work_gpu_s = 0;
    int usable_gpus = 0;
};

// The key `serving` counts pilots under: a pilot serves one checkpoint at one GPU count.
std::string pilot_key(const std::string& checkpoint, int gpus);

// Which pilots to submit now. `serving`: pilots already submitted or running, by pilot_key;
// no more pilots than pending trials are ever asked for a (checkpoint, GPUs) pair. Placement
// prefers nodes that hold (or are being given) the checkpoint, then the longest window.
PilotPlan plan_pilots(std::span<const PendingTrial> trials, std::span<const NodeWindow> nodes,
                      const std::map<std::string, int>& serving = {}, const PilotOptions& options = {});

// What a running pilot takes next: the first trial of its checkpoint and GPU count in plan
// order (longest critical path first) whose in-pilot limit fits `remaining_s`; nullopt when
// none does (the pilot then ends and gives its GPUs back).
std::optional<std::size_t> pilot_next(std::span<const PendingTrial> trials, const std::string& checkpoint, int gpus,
                                      double remaining_s, const PlanOptions& options = {});
// Tail-aware splitting (LPT's weak spot is its last, long items): when a pilot is about to take
// `next`, the work left for this checkpoint's pilots (`left_gpu_s`: unstarted trials plus what
// in-flight ones still need) spread over the `serving_gpus` they hold gives each GPU about
// left / gpus more to do. A trial longer than a third of that share would finish late while
// other GPUs idle: split it (by 2, 4, 8 ...) until its pieces are no longer than that, but not
// below min_piece_s, where per-piece preprocessing starts to cost more than the tail saves.
// Returns the factor; 1: take it whole.
struct TailOptions {
    double share_fraction = 1.0 / 3;
    double min_piece_s = 60;
    int max_factor = 16;
};
int tail_split_factor(const PendingTrial& next, double left_gpu_s, int serving_gpus, const TailOptions& options = {});

// A trial's limit inside a pilot: p90 x (1 + margin_fraction) + margin_s.
double pilot_trial_limit(const PendingTrial& trial, const PlanOptions& options);

// A few lines for `evalsched plan` and the logs: the placements, the holds and the bound.
std::string format_plan(const Plan& plan);

}  // namespace acme::evalsched
