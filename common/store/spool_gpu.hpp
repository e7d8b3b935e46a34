// The node spool's GPU tables (schema: spool.cpp): the sampler's samples and events, and the
// per-(job, GPU) summaries it writes when it stops; read back by faultguard's helpers and
// faultdiag.
#pragma once

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

// The job's GPU summaries on this node, one per GPU in GPU order: for its acme record.
struct GpuSummaryRow {
    int gpu = 0;
    std::string uuid, verdict;
    long long samples = 0, xids = 0;
    std::optional<double> util_avg, util_max, power_avg_mw;
    std::optional<long long> mem_max, mem_total, energy_mj, power_max_mw, temp_max, ecc_uncorrected_delta;
    std::optional<double> gpm_sm_avg, gpm_tensor_avg, gpm_dram_bw_avg;  // percent, where GPM was sampled
};
std::vector<GpuSummaryRow> job_gpu_summaries(Database& db, long long job_id);

}  // namespace acme::store
