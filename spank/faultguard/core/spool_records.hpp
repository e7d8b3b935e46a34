// What faultguard's epilog helper reads from and writes to the node spool: task exits handed
// over by slurmstepd, the sampler's GPU events for the job, and the diagnosis. The SQL is
// common/store's (spool_jobs, spool_gpu, spool_failures); this maps faultguard's and the
// diagnosis engine's types onto its rows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/diagnose/engine.hpp"
#include "spank/faultguard/core/task_exit_log.hpp"
#include "common/store/database.hpp"
#include "common/store/spool_jobs.hpp"

namespace acme::faultguard {

// One job's record on this node: what slurmctld said at job end, plus what the epilog knows.
using JobRow = store::SpoolJobRow;
// Upserts the row, keeping what the sampler wrote (start/end of sampling, interval, errors).
void record_job(store::Database& db, const JobRow& row);
void record_recovery(store::Database& db, long long job_id, long long restart, const std::string& node, double ts,
                     bool drained, const std::string& drain_reason, bool requeued, const std::string& outcome);
std::int64_t record_health_check(store::Database& db, const std::string& node, double ts, long long job_id,
                                 bool passed, const std::string& detail);
void amend_health_check(store::Database& db, std::int64_t row, const std::string& detail);
// "EXIT:SIGNAL" from a raw wait status, as sacct prints ExitCode.
std::string exit_code_text(int wait_status);

void record_task_exits(store::Database& db, long long job_id, const std::string& node, const std::vector<TaskExit>& exits);
std::vector<int> task_wait_statuses(store::Database& db, long long job_id);
std::vector<diagnose::GpuEvent> job_gpu_events(store::Database& db, long long job_id);
// One row per (job, restart, node): a requeued job's next run gets its own.
void record_log_tail(store::Database& db, long long job_id, long long restart, const std::string& node,
                     const std::vector<std::string>& paths, const std::string& text);
void record_diagnosis(store::Database& db, long long job_id, long long restart, const std::string& node, double ts,
                      const diagnose::Diagnosis& d);

}  // namespace acme::faultguard
