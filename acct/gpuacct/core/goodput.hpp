// Goodput of one job (issue 39): of the wall time from its first submission to its end, how much
// became kept training progress and where the rest went. A requeue chain is one job: its runs
// (slurmdbd's rows, sacct -D) are read together. Every piece is defined in gpuacct(1), GOODPUT.
// A piece the records cannot tell is nullopt ("unknown"), never 0: a 0 would claim a loss that
// nobody measured did not happen. Pure: the caller turns slurmdbd's runs and their acme records
// into GoodputRun (acct/gpuacct/goodput_cli.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace acme::acct {

struct GoodputRun {
    double submit = 0, start = 0, end = 0;  // epoch seconds; start 0: never ran; end 0: running
    // The run ended in a fault that a later run has to make good: a diagnosed failure, a
    // failed state, or a stall the sampler acted on.
    bool failed = false;
    std::string category, reason;  // the diagnosis of that fault, when there is one
    // What this run was given in ACME_RESUME_CKPT: nullopt when not known (no --ckpt-dir, no
    // record, or the search failed), "" for a fresh start.
    std::optional<std::string> resumed_from;
    std::optional<double> resumed_ckpt_ts;  // when that checkpoint was complete (its mtime)
    std::optional<double> stall_since;      // a stall verdict not withdrawn: the last progress seen
    int gpus = 0;
    std::optional<int> idle_gpus;  // GPUs whose verdict is idle; nullopt: no telemetry of this run
    std::string user, account, partition;  // gpuacct goodput's filters
};

// The running time a fault cost, by the diagnosis of the run that failed ("unknown" without one).
struct GoodputCause {
    std::string category, reason;
    double lost_s = 0, stalled_s = 0;
};

// Seconds. Pieces add up to wall where all are known: queued + kept + lost + recovery +
// stalled + idle = wall.
struct Goodput {
    double wall_s = 0;
    std::optional<double> queued_s, kept_s, lost_s, recovery_s, stalled_s, idle_s, ettr;
    int runs = 0, failures = 0;
    double gpus = 0;                      // the newest run's GPUs: wall_s * gpus is GPU time
    double running_s = 0;                 // every run's running time: what the cluster handed out
    std::vector<GoodputCause> causes;     // lost and stalled time by cause, where known
    std::vector<std::string> unknown;     // why a piece is unknown, one sentence each
    // Earlier runs of the chain the source does not hold (node spools keep a job's newest run):
    // their running time, waits and work redone are in none of the pieces above.
    int runs_not_held = 0;
};

// `now`: the end of a job still running. notes = false leaves Goodput::unknown empty (the pieces
// stay unknown): a cluster's sum never prints them, and a million sentences cost.
Goodput compute_goodput(std::span<const GoodputRun> runs, double now, bool notes = true);

// The block for the terminal: ETTR, the wall time, then each piece as sacct's [D-]HH:MM:SS and
// its share of the wall time ("unknown" where it is), the notes; ending in a newline.
std::string render_goodput(std::int64_t job_id, const Goodput& g);

// {"wall_s":..., "queued_s":..., ...} with null for unknown pieces (gpuacct(1), --json).
nlohmann::json goodput_json(const Goodput& g);

// gpuacct goodput -S -E: a cluster's GPU time over a period, summed job by job (each job's
// pieces times its GPUs), and the GPU time lost (redone or stalled) per failure category and
// reason: the paper's view of where a cluster's GPU hours went.
struct ClusterGoodput {
    double handed_out_gpu_h = 0;  // GPUs x running time of every run
    double kept_gpu_h = 0, lost_gpu_h = 0, stalled_gpu_h = 0, idle_gpu_h = 0;
    double unsplit_gpu_h = 0;     // of jobs whose work redone is unknown: not split
    double recovery_h = 0, queued_h = 0;  // waits (hours of job time, no GPUs held)
    std::int64_t jobs = 0, runs = 0, failures = 0;
    // Runs counted in `runs` whose GPU time the source does not hold (node spools), and the
    // requeued jobs they belong to: that time is in none of the GPU-hours (0 from slurmdbd).
    std::int64_t runs_not_held = 0, jobs_partly_held = 0;
    std::vector<GoodputCause> causes;  // GPU-seconds here, most first
};
class ClusterGoodputSum {
public:
    void add(const Goodput& g);
    void append(const ClusterGoodputSum& other);  // another part's sum (a scan read in parts)
    ClusterGoodput result() const;
private:
    void add_cause(const GoodputCause& cause, double gpus);
    ClusterGoodput sum_;
};

std::string render_cluster_goodput(const ClusterGoodput& c);
nlohmann::json cluster_goodput_json(const ClusterGoodput& c);

}  // namespace acme::acct
