// The numbers gpuacct reports, computed from a SpoolSet: per-job GPU use and verdict, failures
// by reason (the paper's Table 3), node health, and the workload characterization (the paper's
// section 3). Pure functions: no I/O, no Slurm, no printing.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "acct/gpuacct/core/spool_rows.hpp"

namespace acme::acct {

struct JobFilter {
    std::vector<std::string> users, accounts, partitions, states, types;  // empty: any
};
bool matches(const Job& job, const JobFilter& filter);

// GPUs the job held: its TRES count, else the GPU ids its node rows list.
int job_gpus(const Job& job);
// Run time, up to `now` for a job still running; 0 when it never started.
double job_elapsed(const Job& job, double now);
double job_gpu_hours(const Job& job, double now);

struct GpuUse {
    int gpus = 0;                                    // GPUs with a summary
    std::optional<double> util_avg, util_max;        // percent; avg is the mean over GPUs of their averages
    std::optional<std::int64_t> mem_max, mem_total;  // bytes, the busiest GPU
    std::optional<double> energy_j, power_avg_w, power_max_w;
    std::optional<std::int64_t> temp_max;
    std::int64_t xids = 0, samples = 0;
    // ok only when every GPU with data is ok, idle when every one is idle, low-util in between,
    // no-data when no GPU had a sample.
    std::string verdict = "no-data";
};
std::unordered_map<std::int64_t, GpuUse> gpu_use_by_job(std::span<const GpuSummary> summaries);

// The diagnosis that explains the job's last run: among its nodes' diagnoses of the highest
// restart, the most confident (the batch host on a tie, it read the log). nullptr: none.
const Diagnosis* final_diagnosis(const Job& job, std::span<const Diagnosis* const> of_job);
std::unordered_map<std::int64_t, std::vector<const Diagnosis*>> diagnoses_by_job(std::span<const Diagnosis> all);

// A job step as sacct lists it under its job, from the exits of its tasks.
struct StepRow {
    std::string step;        // "batch", "extern", "0", ...
    std::string state;       // COMPLETED, FAILED (an exit status), CANCELLED (a signal)
    std::string exit_code;   // "EXIT:SIGNAL" of the worst task
    std::string nodes;       // the nodes its tasks ran on, comma-separated
    double end = 0;          // the last task's exit
};
// Steps in Slurm's order: numbered steps, then batch, then extern (as sacct prints them).
std::vector<StepRow> job_steps(std::span<const TaskExit* const> exits);
std::unordered_map<std::int64_t, std::vector<const TaskExit*>> task_exits_by_job(std::span<const TaskExit> all);

struct FailureRow {
    std::string category, reason;
    std::int64_t num = 0;          // failed runs (a requeued job counts each run)
    double gpu_demand = 0;         // mean GPUs per failed run
    double gpu_hours = 0;          // GPU time of the failed runs
    double gpu_time_pct = 0;       // share of all failed runs' GPU time
    double ttf_median_s = 0;       // median time from a run's start to its failure
};
// Failed runs counted one job at a time, as the jobs stream past (scan_spools), each with its
// diagnoses from every node: add every job, then take the rows. Jobs read in parts on several
// threads go to one aggregator per part, joined in id order by append: the sums are taken in
// rows(), over the runs in job order, so the result is the same to the last bit either way.
class FailureAggregator {
public:
    explicit FailureAggregator(double now) : now_(now) {}
    void add(const Job& job, std::span<const Diagnosis* const> of_job);
    void add(const Job& job, std::span<const Diagnosis> of_job);
    // Adds what `later` counted, all of whose jobs come after this one's.
    void append(FailureAggregator&& later);
    // Ordered like the paper's Table 3: category, then the taxonomy's reason order; unknown
    // last. Failed jobs without a diagnosis count as unknown.
    std::vector<FailureRow> rows();

private:
    struct Run {
        int gpus = 0;
        double seconds = 0;  // start to failure
    };
    struct Reason {
        std::string category;  // of its last failure
        std::vector<Run> runs;
    };
    void count(const std::string& category, const std::string& reason, int gpus, double run_s);

    double now_;
    std::map<std::string, Reason, std::less<>> by_reason_;
    std::vector<const Diagnosis*> of_job_, runs_;  // per-job scratch, kept for its capacity
};
// The same over jobs held in memory, with every diagnosis of the period.
std::vector<FailureRow> aggregate_failures(std::span<const Job> jobs, std::span<const Diagnosis> diagnoses, double now);

struct NodeRow {
    std::string node;
    std::int64_t xids = 0, ecc_sbe = 0, ecc_dbe = 0, gpu_lost = 0;
    std::int64_t jobs = 0, failures = 0, infra_failures = 0, drains = 0;
    std::optional<double> last_event;
    std::string last_health;  // "pass" or "FAIL: detail", empty when no check was recorded
    double last_health_ts = 0;
};
std::vector<NodeRow> aggregate_nodes(std::span<const std::string> nodes, std::span<const Job> jobs,
                                     std::span<const Diagnosis> diagnoses, std::span<const GpuEvent> events,
                                     std::span<const Drain> drains = {}, std::span<const HealthCheck> health = {});

struct SummaryRow {
    std::string dimension;  // all | type | state | gpus
    std::string value;      // "pretrain", "COMPLETED", "2-8" ...
    std::int64_t jobs = 0;
    double jobs_pct = 0, gpu_hours = 0, gpu_time_pct = 0;
    double duration_median_s = 0, queue_median_s = 0, gpus_median = 0;
};
// The characterization counted one job at a time, as the jobs stream past (scan_spools): add
// every job, then take the rows. As with FailureAggregator, parts join in id order by append
// and rows() sums in job order.
class SummaryAggregator {
public:
    explicit SummaryAggregator(double now) : now_(now) {}
    void add(const Job& job);
    // Adds what `later` counted, all of whose jobs come after this one's.
    void append(SummaryAggregator&& later);
    // GPU jobs only (the paper's characterization is of GPU jobs); rows: all, each type in the
    // paper's order, each state, each GPU-count bucket (1, 2-4, 5-8, 9-64, 65-256, 257+).
    std::vector<SummaryRow> rows();

private:
    // One GPU job, what its rows need: 32 bytes, kept once rather than once per row.
    struct Sample {
        double duration = 0, queue = 0;
        std::int32_t gpus = 0;
        std::uint32_t state = 0;  // index into states_
        std::uint8_t type = 0;    // index into job_types()
        bool started = false;     // only a started job has a duration and a queue time
    };
    double now_;
    std::vector<std::string> states_;  // first words of the states, in order of first appearance
    std::vector<Sample> samples_;      // in job order
};
// The same over jobs held in memory.
std::vector<SummaryRow> aggregate_summary(std::span<const Job> jobs, double now);

double median(std::vector<double> values);

}  // namespace acme::acct
