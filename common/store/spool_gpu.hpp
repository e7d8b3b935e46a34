// The node spool's GPU tables (schema: spool.cpp): the sampler's samples and events, and the
// per-(job, GPU) summaries it writes when it stops; read back by faultguard's helpers and
// faultdiag.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/nvml/library.hpp"
#include "common/store/database.hpp"

namespace acme::store {

struct GpuSampleRow {
    int gpu;  // Slurm's GPU id (= the device minor number)
    double ts;
    nvml::Reading reading;
};

struct GpuEventRow {
    int gpu = -1;
    double ts = 0;
    std::string kind;  // xid | ecc_sbe | ecc_dbe | gpu_lost
    std::optional<long long> code;
    std::string detail;
};

// One transaction per batch (one sampler tick).
void insert_gpu_samples(Database& db, long long job_id, const std::vector<GpuSampleRow>& samples);
void insert_gpu_event(Database& db, long long job_id, const GpuEventRow& event);
// Oldest first.
std::vector<GpuEventRow> job_gpu_events(Database& db, long long job_id);
// XIDs recorded on the node since its latest health_checks row (all of them when none), oldest
// first: a node an admin resumed after a drain is not failed again for the same old XID.
std::vector<GpuEventRow> xids_since_last_health_check(Database& db);

// What gpu_summaries.verdict means, in percent GPU utilisation: never above kIdleMaxUtil is
// idle, an average below kLowUtilAvg is low-util. The sampler's summary at job end and a
// report's summary so far of a running job (spool_set) judge by the same numbers.
inline constexpr double kIdleMaxUtil = 5.0;
inline constexpr double kLowUtilAvg = 30.0;

// The rule in C++, for numbers that come from elsewhere than the spool's samples (Prometheus'
// series of a running job, acct/gpuacct/core/prometheus_source); the spool's SQL applies the
// same constants. No utilisation at all is no-data.
inline const char* gpu_verdict(std::optional<double> util_avg, std::optional<double> util_max) {
    if (!util_avg || !util_max) return "no-data";
    if (*util_max <= kIdleMaxUtil) return "idle";
    if (*util_avg < kLowUtilAvg) return "low-util";
    return "ok";
}

// Ends a job's sampling: jobs.ended_at, and one gpu_summaries row per (GPU id, UUID) in `gpus`
// (no-data when it has no samples; idle when utilisation never exceeded `idle_max_util`,
// low-util when its average is below `low_util_avg`). Idempotent.
void finish_job_gpus(Database& db, long long job_id, const std::string& node, double ts,
                     const std::vector<std::pair<int, std::string>>& gpus, double idle_max_util, double low_util_avg);

// One gpu_summaries row: the sampler's summary of one GPU of one job on one node, as the
// epilog puts it in the job's record and gpuacct reads it (spool_set).
struct GpuSummary {
    std::int64_t job_id = 0;
    std::string node;
    int gpu = 0;
    std::string uuid;
    std::int64_t samples = 0;
    std::optional<double> util_avg, util_max, power_avg_mw;
    std::optional<std::int64_t> mem_max, mem_total, energy_mj, power_max_mw, temp_max;
    std::optional<std::int64_t> ecc_uncorrected;  // the uncorrected ECC count's rise during the job
    std::int64_t xids = 0;
    std::string verdict;  // idle | low-util | ok | no-data
    // Percent, where GPM was sampled (Hopper and later); read by job_gpu_summaries only.
    std::optional<double> gpm_sm_avg, gpm_tensor_avg, gpm_dram_bw_avg;
    // A job still running has no summary yet: this one is its samples so far, judged by the
    // same rule (gpu_verdict), and changes with every read.
    bool so_far = false;
};

// The table's one reader: every query on gpu_summaries (or on rows shaped like it) selects
// gpu_summary_columns(), job_id first, and reads each row with read_gpu_summary.
std::string gpu_summary_columns();
GpuSummary read_gpu_summary(const Statement& q);

// The job's GPU summaries on this node, one per GPU in GPU order, GPM included: for its acme
// record and gpuacct's job view.
std::vector<GpuSummary> job_gpu_summaries(Database& db, long long job_id);

}  // namespace acme::store
