// The node spool's jobs table (schema: spool.cpp): one row per job and node, begun by the
// sampler and completed by faultguard's epilog with what slurmctld knew at job end.
#pragma once

#include <optional>
#include <string>

#include "common/store/database.hpp"

namespace acme::store {

struct SpoolJobRow {
    long long job_id = 0, uid = -1, gid = -1;
    std::string node, gpus;  // this node's name and SLURM_JOB_GPUS
    std::string user, account, partition, name, job_type, job_type_source, nodelist, batch_host, state;
    long long num_nodes = 0, gpus_total = 0, restarts = 0;
    double submit_time = 0, start_time = 0, end_time = 0;
    std::string exit_code, derived_exit_code;  // "EXIT:SIGNAL"
    std::string sluid;                          // SLURM_JOB_SLUID (26.05+), "" before
};

// Upserts the epilog's record, keeping what the sampler wrote (start/end of sampling, interval,
// errors). Empty text and times <= 0 are stored as NULL. Both writers move an older job's rows
// under the same id aside first (retire_reused_job_id) when the row's SLUID is another one.
void upsert_job_record(Database& db, const SpoolJobRow& row);

// The sampler's start. A requeued job starts again under the same id: its row is kept and the
// sampling fields refreshed.
void record_sampling_started(Database& db, long long job_id, long long uid, long long gid, const std::string& node,
                             const std::string& gpus, double ts, double interval, const std::string& sluid = {});
void record_telemetry_error(Database& db, long long job_id, const std::string& node, const std::string& message);

// The job's SLURM_JOB_GPUS on this node: nullopt when the spool has no row for the job, "" when
// the row has none.
std::optional<std::string> job_gpus(Database& db, long long job_id);

}  // namespace acme::store
