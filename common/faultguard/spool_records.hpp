// What faultguard's epilog helper reads from and writes to the node spool: task exits handed
// over by slurmstepd, the sampler's GPU events for the job, and the diagnosis.
#pragma once

#include <string>
#include <vector>

#include "common/diagnose/engine.hpp"
#include "common/faultguard/task_exit_log.hpp"
#include "common/store/database.hpp"

namespace acme::faultguard {

void record_task_exits(store::Database& db, long long job_id, const std::string& node, const std::vector<TaskExit>& exits);
std::vector<int> task_wait_statuses(store::Database& db, long long job_id);
std::vector<diagnose::GpuEvent> job_gpu_events(store::Database& db, long long job_id);
// One row per (job, restart, node): a requeued job's next run gets its own.
void record_log_tail(store::Database& db, long long job_id, long long restart, const std::string& node,
                     const std::vector<std::string>& paths, const std::string& text);
void record_diagnosis(store::Database& db, long long job_id, long long restart, const std::string& node, double ts,
                      const diagnose::Diagnosis& d);

}  // namespace acme::faultguard
