// What the sampler writes into the node spool: the job row, one batch of samples per tick
// (one transaction), events as they arrive, and the per-(job, GPU) summary at the end. The
// SQL is common/store's (spool_jobs, spool_gpu); this is the sampler's vocabulary over it.
#pragma once

#include <string>
#include <vector>

#include "common/nvml/library.hpp"
#include "common/store/database.hpp"
#include "common/store/spool_gpu.hpp"

namespace acme::telemetry {

struct JobInfo {
    long long job_id = 0;
    long long uid = -1, gid = -1;
    std::string node;
    std::string gpus;  // as Slurm gave them, e.g. "0,1"
    double interval = 0;
    std::string sluid;  // SLURM_JOB_SLUID (Slurm 26.05+), "" before
};

// Written as is: no copy per tick.
using Sample = store::GpuSampleRow;

struct GpuEvent {
    int gpu;
    double ts;
    std::string kind;  // xid | ecc_sbe | ecc_dbe | gpu_lost
    long long code;
    std::string detail;
};

// Verdict thresholds, in percent GPU utilisation: the spool schema's (common/store/spool_gpu.hpp).
inline constexpr double kIdleMaxUtil = store::kIdleMaxUtil;
inline constexpr double kLowUtilAvg = store::kLowUtilAvg;

class SpoolWriter {
public:
    explicit SpoolWriter(store::Database& db) : db_(db) {}

    void job_started(const JobInfo& job, double ts);
    void telemetry_error(long long job_id, const std::string& node, const std::string& message);
    void write_samples(long long job_id, const std::vector<Sample>& samples);
    void write_event(long long job_id, const GpuEvent& event);
    // Ends the job: ended_at, and one gpu_summaries row per GPU in `gpus` (rows with no samples
    // get the verdict no-data). Idempotent: a second call rewrites the same rows.
    void job_finished(long long job_id, const std::string& node, const std::vector<nvml::Library::Device>& gpus,
                      const std::vector<int>& requested, double ts);

private:
    store::Database& db_;
};

}  // namespace acme::telemetry
